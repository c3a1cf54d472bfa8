package httpmodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"7":                             7 * time.Second,
		"0":                             0,
		"Fri, 02 Jan 2026 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0, // in the past
	} {
		d, ok := retryAfter(http.Header{"Retry-After": {v}}, now)
		if !ok || d != want {
			t.Errorf("%q: %v %v, want %v", v, d, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "-3"} {
		if _, ok := retryAfter(http.Header{"Retry-After": {v}}, now); ok {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	texts := []string{"Alice's door code is 4711", "short"}
	for _, c := range []struct{ name, msg, sent, want string }{
		{"Plain", "model not found", "input", "model not found"},
		{"OneLine", "line one\n\tline two", "input", "line one line two"},
		{"Secret", "bad key sk-abcdef123", "input", "bad key [redacted]"},
		{"QuotesRun", "cannot embed: door code is 47", "input", "[the server's message is withheld: it quotes the input]"},
		{"QuotesShortInputWhole", "input 'short' is invalid", "input", "[the server's message is withheld: it quotes the input]"},
		{"QuotesRunOfARequest", "cannot answer: door code is 47", "request", "[the server's message is withheld: it quotes the request]"},
		{"Empty", "   ", "input", ""},
	} {
		if got := Redact(c.msg, texts, []string{"sk-abcdef123"}, c.sent); got != c.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.name, c.msg, got, c.want)
		}
	}
	long := strings.Repeat("é", 400)
	if got := Redact(long, nil, nil, "input"); len(got) > maxQuote+len("…") || !strings.HasSuffix(got, "…") || !json.Valid([]byte(`"`+got+`"`)) {
		t.Errorf("long message cut to %d bytes", len(got))
	}
}

// FuzzRedact: whatever a server says, what Redact returns never holds a
// secret or quoteWindow bytes of a text sent, and fits on one line, for
// what the embedders send ("input") and the chat models ("request").
func FuzzRedact(f *testing.F) {
	f.Add("error: the input was Alice's secret", "Alice's secret", "sk-1234")
	f.Add("model \"x\" not found", "hello world and more", "")
	f.Add("Invalid content: 'Where do I live? quokka' is too long", "Where do I live? quokka", "sk-secret-1")
	f.Add("Incorrect API key provided: sk-secret-1", "hello", "sk-secret-1")
	f.Add("model not found", "hi", "")
	f.Fuzz(func(t *testing.T, msg, text, secret string) {
		for _, sent := range []string{"input", "request"} {
			out := Redact(msg, []string{text}, []string{secret}, sent)
			if strings.ContainsAny(out, "\n\r") || len(out) > maxQuote+len("…") {
				t.Fatalf("out %q", out)
			}
			if len(secret) >= 4 && strings.Contains(out, secret) && !strings.Contains("[redacted]", secret) {
				t.Fatalf("secret %q in %q", secret, out)
			}
			folded := strings.Join(strings.Fields(text), " ")
			if len(folded) >= quoteWindow && strings.Contains(out, folded[:quoteWindow]) && !strings.Contains(out, "withheld") {
				t.Fatalf("text quoted in %q", out)
			}
			ours := "[the server's message is withheld: it quotes the " + sent + "][redacted]…"
			for i := 0; i+quoteWindow <= len(folded); i++ {
				if strings.Contains(out, folded[i:i+quoteWindow]) && !strings.Contains(ours, folded[i:i+quoteWindow]) {
					t.Fatalf("%q quotes %q", out, folded[i:i+quoteWindow])
				}
			}
		}
	})
}
