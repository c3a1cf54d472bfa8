package provider_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/provider"
)

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	hc := &http.Client{}
	sleep := func(context.Context, time.Duration) error { return nil }
	for _, c := range []struct {
		name    string
		in, def provider.HTTP
		want    provider.HTTP
	}{
		{"EmbedderDefaults", provider.HTTP{}, provider.EmbedderDefaults(), provider.HTTP{Timeout: 30 * time.Second, MaxRetries: 3, MaxRetryWait: 20 * time.Second}},
		{"ChatDefaults", provider.HTTP{}, provider.ChatDefaults(), provider.HTTP{Timeout: 120 * time.Second, MaxRetries: 2, MaxRetryWait: 20 * time.Second}},
		// A field set is kept, a negative MaxRetries (never retry) too.
		{"SetFieldsKept", provider.HTTP{Timeout: time.Second, MaxRetries: -1, MaxRetryWait: time.Minute, HTTPClient: hc}, provider.EmbedderDefaults(),
			provider.HTTP{Timeout: time.Second, MaxRetries: -1, MaxRetryWait: time.Minute, HTTPClient: hc}},
	} {
		got := c.in.WithDefaults(c.def)
		if got.Timeout != c.want.Timeout || got.MaxRetries != c.want.MaxRetries || got.MaxRetryWait != c.want.MaxRetryWait || got.HTTPClient != c.want.HTTPClient || got.Sleep != nil {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := (provider.HTTP{}).WithDefaults(provider.HTTP{Sleep: sleep}); got.Sleep == nil {
		t.Error("Sleep not taken from the defaults")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		h    provider.HTTP
		bad  bool
	}{
		{"Zero", provider.HTTP{}, false},
		{"Defaults", provider.ChatDefaults(), false},
		{"NoRetries", provider.HTTP{MaxRetries: -1}, false},
		{"NegativeTimeout", provider.HTTP{Timeout: -time.Second}, true},
		{"NegativeMaxRetryWait", provider.HTTP{MaxRetryWait: -time.Second}, true},
	} {
		err := c.h.Validate("llm_timeout")
		if c.bad != (err != nil) || c.bad && (memgate.ErrorField(err) != "llm_timeout" || memgate.ErrorCode(err) != memgate.EINVALID) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
