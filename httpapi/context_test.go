package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// A recall asked to render always answers context (issue 28): an empty
// string when nothing was recalled, so a client reading it never meets a
// missing member; without render there is none.
func TestRecallContextAlwaysPresentWhenRendered(t *testing.T) {
	h := newHarness(t)
	key := h.key("t", memgate.RoleAdmin, "", "")
	h.remember(key, map[string]any{"principal": "alice", "kind": "preference", "source": "user", "content": "Alice drinks green tea."})

	cases := []struct {
		name    string
		body    map[string]any
		present bool
		want    string // a substring of context ("" for the empty block)
	}{
		{"rendered, nothing recalled", map[string]any{"principal": "alice", "query": "How do I file quarterly taxes?", "render": true}, true, ""},
		{"rendered, a memory recalled (the control)", map[string]any{"principal": "alice", "query": "What does Alice drink?", "render": true}, true, "green tea"},
		{"rendered, nobody's memories", map[string]any{"principal": "nobody", "query": "What does Alice drink?", "render": true}, true, ""},
		{"not rendered", map[string]any{"principal": "alice", "query": "What does Alice drink?"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := h.do("POST", "/v1/recall", key, c.body).want(t, http.StatusOK).json(t)
			ctx, ok := out["context"]
			if ok != c.present {
				t.Fatalf("context present = %v, want %v (answer %v)", ok, c.present, out)
			}
			if !ok {
				return
			}
			s, isString := ctx.(string)
			if !isString {
				t.Fatalf("context = %#v, want a string", ctx)
			}
			if c.want == "" && s != "" {
				t.Errorf("context = %q, want the empty block", s)
			}
			if c.want != "" && !strings.Contains(s, c.want) {
				t.Errorf("context = %q, want it to hold %q", s, c.want)
			}
		})
	}
}
