package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

func TestRememberIdempotencyKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agent := h.keyWith("acme", memgate.RoleAgent, "alice", "bot", memgate.SourceUser)
	body := map[string]any{"kind": "fact", "content": "Alice drinks green tea.", "source": "user"}

	var first, again remembered
	r1 := h.do("POST", "/v1/memories", agent, body, "Idempotency-Key", "2f1c-req-1").want(t, http.StatusCreated)
	r1.decode(t, &first)
	h.do("POST", "/v1/memories", agent, body, "Idempotency-Key", "2f1c-req-1").want(t, http.StatusOK).decode(t, &again)
	if first.Memories[0].Replayed || !again.Memories[0].Replayed || again.Memories[0].ID != first.Memories[0].ID {
		t.Fatalf("first replayed %v, retry replayed %v with %s; want the retry to replay %s",
			first.Memories[0].Replayed, again.Memories[0].Replayed, again.Memories[0].ID, first.Memories[0].ID)
	}
	if n := h.count("acme"); n != 1 {
		t.Fatalf("acme holds %d memories after a retry, want 1", n)
	}
	if strings.Contains(string(r1.body), "replayed") {
		t.Fatal("a first request's item carries replayed")
	}

	// The same key with another body: 409 naming the header, nothing stored.
	other := map[string]any{"kind": "fact", "content": "Alice drinks black tea.", "source": "user"}
	h.do("POST", "/v1/memories", agent, other, "Idempotency-Key", "2f1c-req-1").wantError(t, http.StatusConflict, memgate.ECONFLICT, "Idempotency-Key")
	// A malformed or oversized header: 400/413 naming it, nothing stored.
	h.do("POST", "/v1/memories", agent, other, "Idempotency-Key", "has space").wantError(t, http.StatusBadRequest, memgate.EINVALID, "Idempotency-Key")
	h.do("POST", "/v1/memories", agent, other, "Idempotency-Key", strings.Repeat("k", 129)).wantError(t, http.StatusRequestEntityTooLarge, memgate.ETOOLARGE, "Idempotency-Key")
	if n := h.count("acme"); n != 1 {
		t.Fatalf("acme holds %d memories after refused requests, want 1", n)
	}

	// Another caller's identical request with the same key is its own:
	// a key never reaches across principals.
	bob := h.keyWith("acme", memgate.RoleAgent, "bob", "bot", memgate.SourceUser)
	var bobs remembered
	h.do("POST", "/v1/memories", bob, body, "Idempotency-Key", "2f1c-req-1").want(t, http.StatusCreated).decode(t, &bobs)
	if bobs.Memories[0].Replayed || bobs.Memories[0].ID == first.Memories[0].ID || bobs.Memories[0].Principal != "bob" {
		t.Fatalf("bob's request with alice's key: %+v; want a new memory of bob", bobs.Memories[0])
	}

	// A batch: item i is keyed KEY#i; its retry replays every item.
	batch := map[string]any{"memories": []map[string]any{
		{"kind": "fact", "content": "One.", "source": "user"},
		{"kind": "fact", "content": "Two.", "source": "user"},
	}}
	var b1, b2 remembered
	h.do("POST", "/v1/memories", agent, batch, "Idempotency-Key", "batch-1").want(t, http.StatusCreated).decode(t, &b1)
	h.do("POST", "/v1/memories", agent, batch, "Idempotency-Key", "batch-1").want(t, http.StatusOK).decode(t, &b2)
	for i := range 2 {
		if !b2.Memories[i].Replayed || b2.Memories[i].ID != b1.Memories[i].ID {
			t.Fatalf("batch item %d: %+v; want a replay of %s", i, b2.Memories[i], b1.Memories[i].ID)
		}
	}
	if n := h.count("acme"); n != 4 {
		t.Fatalf("acme holds %d memories, want 4", n)
	}
	// Control: without the header the same body is stored (or folded) anew.
	h.do("POST", "/v1/memories", agent, map[string]any{"kind": "fact", "content": "Three.", "source": "user"}).want(t, http.StatusCreated)
	if n := h.count("acme"); n != 5 {
		t.Fatalf("acme holds %d memories, want 5", n)
	}
}

// A supersession under a key: a retry whose first request went through
// (the old memory is superseded by now) answers 200 with the same memory
// instead of a 409 for the old memory.
func TestSupersedeIdempotencyKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agent := h.keyWith("acme", memgate.RoleAgent, "alice", "bot", memgate.SourceUser)
	old := h.remember(agent, map[string]any{"kind": "fact", "content": "Alice lives in Paris.", "source": "user"})
	body := map[string]any{"kind": "fact", "content": "Alice lives in Lyon.", "source": "user", "supersedes": old.ID}

	var first, again remembered
	r1 := h.do("POST", "/v1/memories", agent, body, "Idempotency-Key", "sup-1").want(t, http.StatusCreated)
	r1.decode(t, &first)
	h.do("POST", "/v1/memories", agent, body, "Idempotency-Key", "sup-1").want(t, http.StatusOK).decode(t, &again)
	if first.Memories[0].Replayed || !again.Memories[0].Replayed || again.Memories[0].ID != first.Memories[0].ID {
		t.Fatalf("first replayed %v, retry replayed %v with %s; want the retry to replay %s",
			first.Memories[0].Replayed, again.Memories[0].Replayed, again.Memories[0].ID, first.Memories[0].ID)
	}
	if strings.Contains(string(r1.body), "replayed") {
		t.Fatal("a first request's item carries replayed")
	}
	if m := h.get("acme", old.ID); m.Status != memgate.StatusSuperseded || m.SupersededBy != first.Memories[0].ID || m.Version != old.Version+1 {
		t.Fatalf("old memory: %s by %q at v%d; want superseded once, by %s at v%d", m.Status, m.SupersededBy, m.Version, first.Memories[0].ID, old.Version+1)
	}
	if n := h.count("acme"); n != 2 {
		t.Fatalf("acme holds %d memories after a retry, want 2", n)
	}

	// The same key with another body: 409 naming the header.
	other := map[string]any{"kind": "fact", "content": "Alice lives in Nantes.", "source": "user", "supersedes": old.ID}
	h.do("POST", "/v1/memories", agent, other, "Idempotency-Key", "sup-1").wantError(t, http.StatusConflict, memgate.ECONFLICT, "Idempotency-Key")
	// Control: another key is a new request, which fails as it did before
	// keys applied: the old memory is no longer active.
	r := h.do("POST", "/v1/memories", agent, body, "Idempotency-Key", "sup-2")
	r.wantError(t, http.StatusConflict, memgate.ECONFLICT, "")
	if _, field, msg := r.apiError(t); field != "" || !strings.Contains(msg, "only an active memory can be superseded") {
		t.Fatalf("a new key on a superseded memory: field %q, message %q; want the conflict of a superseded memory", field, msg)
	}
	if n := h.count("acme"); n != 2 {
		t.Fatalf("acme holds %d memories after refused requests, want 2", n)
	}
}
