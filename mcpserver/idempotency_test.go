package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRememberIdempotencyKey: over both transports, a remember retried with
// its idempotency_key stores nothing and answers the first call's memory,
// marked replayed; the key with other content is a conflict naming it and
// stores nothing; a new key stores anew (the control); and a key answers
// only in its own principal's memory.
func TestRememberIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name         string
		alice, bob   *mcp.ClientSession
		tenant, keyA string
	}{
		{name: "stdio", tenant: "acme",
			alice: e.localMCP("acme", "alice", false, memgate.SourceUser),
			bob:   e.localMCP("acme", "bob", false, memgate.SourceUser)},
		{name: "http", tenant: "globex",
			alice: first(e.remote(e.key("globex", memgate.RoleAgent, "alice", "", memgate.SourceUser), "source=user")),
			bob:   first(e.remote(e.key("globex", memgate.RoleAgent, "bob", "", memgate.SourceUser), "source=user"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := func(key, content string) map[string]any {
				return map[string]any{"content": content, "kind": "preference", "idempotency_key": key}
			}
			_, out := ok(t, tc.alice, "remember", args("k-1", "Alice drinks green tea."))
			tea, _ := out["id"].(string)
			if tea == "" || out["replayed"] != nil {
				t.Fatalf("first remember: %v", out)
			}
			txt, out := ok(t, tc.alice, "remember", args("k-1", "Alice drinks green tea."))
			if out["id"] != tea || out["replayed"] != true || !strings.Contains(txt, "nothing new was stored") {
				t.Fatalf("retry: %q %v; want %s replayed", txt, out, tea)
			}
			if n := e.count(tc.tenant, "alice"); n != 1 {
				t.Fatalf("after a retry: %d memories, want 1", n)
			}

			er, _ := fails(t, tc.alice, "remember", args("k-1", "Alice drinks black coffee."))
			if er.Error.Code != memgate.ECONFLICT || er.Error.Field != "idempotency_key" {
				t.Fatalf("reused key: %+v, want a conflict naming idempotency_key", er.Error)
			}
			er, _ = fails(t, tc.alice, "remember", args("a key", "Alice drinks black coffee."))
			if er.Error.Code != memgate.EINVALID || er.Error.Field != "idempotency_key" {
				t.Fatalf("malformed key: %+v, want invalid_argument naming idempotency_key", er.Error)
			}
			if n := e.count(tc.tenant, "alice"); n != 1 {
				t.Fatalf("after refused keys: %d memories, want 1", n)
			}

			_, out = ok(t, tc.alice, "remember", args("k-2", "Alice drinks black coffee."))
			if out["id"] == tea || out["replayed"] != nil {
				t.Fatalf("new key: %v; want a new memory", out)
			}
			// Bob's k-1 is his own: the same key and content store for him.
			_, out = ok(t, tc.bob, "remember", args("k-1", "Alice drinks green tea."))
			if out["id"] == tea || out["replayed"] != nil {
				t.Fatalf("another principal's key answered: %v", out)
			}
			if a, b := e.count(tc.tenant, "alice"), e.count(tc.tenant, "bob"); a != 2 || b != 1 {
				t.Fatalf("alice has %d memories, bob %d; want 2 and 1", a, b)
			}

			// A supersession retried with its key answers the new memory;
			// retried without one, it fails: the old one is superseded.
			oolong := map[string]any{"content": "Alice drinks oolong now.", "kind": "preference", "supersedes": tea, "idempotency_key": "s-1"}
			_, out = ok(t, tc.alice, "remember", oolong)
			next, _ := out["id"].(string)
			if next == "" || next == tea || out["supersedes"] != tea {
				t.Fatalf("supersede: %v", out)
			}
			_, out = ok(t, tc.alice, "remember", oolong)
			if out["id"] != next || out["replayed"] != true {
				t.Fatalf("supersede retried: %v; want %s replayed", out, next)
			}
			delete(oolong, "idempotency_key")
			if er, _ := fails(t, tc.alice, "remember", oolong); er.Error.Code != memgate.ECONFLICT {
				t.Fatalf("supersede retried without a key: %+v, want a conflict", er.Error)
			}
			if n := e.count(tc.tenant, "alice"); n != 3 {
				t.Fatalf("after the supersessions: alice has %d memories, want 3", n)
			}
		})
	}
}

func first[A, B any](a A, _ B) A { return a }
