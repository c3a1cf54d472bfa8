package engine_test

import (
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

func keyedRequest(content, key string) engine.RememberRequest {
	return engine.RememberRequest{
		Memory: memgate.Memory{
			Tenant: "acme", Principal: "alice", Agent: "bot", Kind: memgate.KindFact, Source: memgate.SourceUser,
			Content: content, Metadata: map[string]any{"topic": "tea"},
		},
		TTL:            time.Hour,
		IdempotencyKey: key,
	}
}

func countMemories(t *testing.T, h *harness, s memgate.Scope) int {
	t.Helper()
	p, err := h.eng.List(ctx, s, store.Filter{Statuses: memgate.Statuses, Now: h.clock.Now(), Limit: store.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Memories)
}

func TestRememberWithIdempotencyKeyStoresOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first, err := h.eng.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed {
		t.Fatal("the first request is marked replayed")
	}
	h.clock.Add(time.Minute) // a retry comes later: the TTL is relative to the request, not part of it
	again, err := h.eng.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.ID != first.ID || again.Version != first.Version || !again.ExpiresAt.Equal(*first.ExpiresAt) {
		t.Fatalf("retry: replayed %v, %s v%d expires %v; want a replay of %s v%d expiring %v",
			again.Replayed, again.ID, again.Version, again.ExpiresAt, first.ID, first.Version, first.ExpiresAt)
	}
	if n := countMemories(t, h, scope("acme", "alice")); n != 1 {
		t.Fatalf("alice has %d memories after a retry, want 1", n)
	}
	// The audit log says what happened: one stored, one replayed.
	h.eng.Close()
	page, err := h.db.ListAudit(ctx, "acme", store.AuditFilter{Action: engine.ActionRemember})
	if err != nil {
		t.Fatal(err)
	}
	var stored, replayed int64
	for _, ev := range page.Events {
		stored += ev.Counts["stored"]
		replayed += ev.Counts["replayed"]
	}
	if stored != 1 || replayed != 1 {
		t.Fatalf("audit: %d stored, %d replayed; want 1 and 1", stored, replayed)
	}
}

func TestRememberIdempotencyKeyConflictsAndRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.eng.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1")); err != nil {
		t.Fatal(err)
	}
	other := []struct {
		name string
		edit func(*engine.RememberRequest)
	}{
		{"content", func(r *engine.RememberRequest) { r.Memory.Content = "Alice drinks black tea." }},
		{"ttl", func(r *engine.RememberRequest) { r.TTL = 2 * time.Hour }},
		{"metadata", func(r *engine.RememberRequest) { r.Memory.Metadata = map[string]any{"topic": "coffee"} }},
		{"kind", func(r *engine.RememberRequest) { r.Memory.Kind = memgate.KindPreference }},
		{"source", func(r *engine.RememberRequest) { r.Memory.Source = memgate.SourceTool }},
	}
	for _, c := range other {
		r := keyedRequest("Alice drinks green tea.", "req-1")
		c.edit(&r)
		_, err := h.eng.Remember(ctx, r)
		if memgate.ErrorCode(err) != memgate.ECONFLICT || memgate.ErrorField(err) != "idempotency_key" {
			t.Fatalf("same key, other %s: %v; want conflict on idempotency_key", c.name, err)
		}
	}
	// Another agent is another partition: the key is free there.
	r := keyedRequest("Alice drinks green tea.", "req-1")
	r.Memory.Agent = "other-bot"
	if m, err := h.eng.Remember(ctx, r); err != nil || m.Replayed {
		t.Fatalf("same key in another agent: %+v, %v; want a new memory", m, err)
	}

	// A malformed key is refused before anything is stored.
	for _, key := range []string{"has space", "tab\tkey", "ünïcode", string(make([]byte, memgate.MaxIdempotencyKeyBytes+1))} {
		_, err := h.eng.Remember(ctx, keyedRequest("A new fact.", key))
		if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "idempotency_key" {
			t.Fatalf("key %q: %v; want invalid_argument on idempotency_key", key, err)
		}
	}
	// With supersedes: refused (a retried supersession is a conflict anyway).
	old := h.remember(t, "acme", "alice", "Alice lives in Paris.")
	sup := keyedRequest("Alice lives in Lyon.", "req-2")
	sup.Memory.Agent = ""
	sup.Supersedes = old.ID
	if _, err := h.eng.Remember(ctx, sup); memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "idempotency_key" {
		t.Fatalf("key with supersedes: %v; want invalid_argument on idempotency_key", err)
	}
	// In a batch the item is named.
	_, err := h.eng.RememberBatch(ctx, []engine.RememberRequest{keyedRequest("One.", "b#0"), keyedRequest("Two.", "bad key")})
	if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "memories[1].idempotency_key" {
		t.Fatalf("batch with a bad key: %v; want invalid_argument on memories[1].idempotency_key", err)
	}
	// Nothing above was stored: the first fact, the other agent's and Paris.
	if n := countMemories(t, h, scope("acme", "alice")); n != 3 {
		t.Fatalf("alice has %d memories, want 3", n)
	}
}

func TestSweepPrunesIdempotencyKeysAfterTheWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Keys are stamped with the store's clock (the real one here), so
	// the engines that sweep run on the real clock, shifted.
	at := func(shift time.Duration) *engine.Engine {
		e, err := engine.New(engine.Config{Store: h.db, IdempotencyWindow: time.Hour, Now: func() time.Time { return time.Now().Add(shift) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	e := at(0)
	first, err := e.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1"))
	if err != nil {
		t.Fatal(err)
	}
	// Control: a sweep within the window keeps the key.
	if _, err := at(30*time.Minute).Sweep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if m, err := e.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1")); err != nil || !m.Replayed || m.ID != first.ID {
		t.Fatalf("retry within the window: %+v, %v; want a replay", m, err)
	}
	if _, err := at(2*time.Hour).Sweep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	m, err := e.Remember(ctx, keyedRequest("Alice drinks green tea.", "req-1"))
	if err != nil || m.Replayed || m.ID == first.ID {
		t.Fatalf("retry after the window: %+v, %v; want it stored again", m, err)
	}
}
