package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

func keyedRequest(content, key string) memgate.RememberRequest {
	return memgate.RememberRequest{
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
	page, err := h.db.ListAudit(ctx, "acme", memgate.AuditFilter{Action: engine.ActionRemember})
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
		edit func(*memgate.RememberRequest)
	}{
		{"content", func(r *memgate.RememberRequest) { r.Memory.Content = "Alice drinks black tea." }},
		{"ttl", func(r *memgate.RememberRequest) { r.TTL = 2 * time.Hour }},
		{"metadata", func(r *memgate.RememberRequest) { r.Memory.Metadata = map[string]any{"topic": "coffee"} }},
		{"kind", func(r *memgate.RememberRequest) { r.Memory.Kind = memgate.KindPreference }},
		{"source", func(r *memgate.RememberRequest) { r.Memory.Source = memgate.SourceTool }},
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
	// With supersedes too, before the old memory is even read.
	old := h.remember(t, "acme", "alice", "Alice lives in Paris.")
	sup := keyedRequest("Alice lives in Lyon.", "bad key")
	sup.Supersedes = old.ID
	if _, err := h.eng.Remember(ctx, sup); memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "idempotency_key" {
		t.Fatalf("bad key with supersedes: %v; want invalid_argument on idempotency_key", err)
	}
	sup.Supersedes = "m_00000000000000000000000000"
	if _, err := h.eng.Remember(ctx, sup); memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "idempotency_key" {
		t.Fatalf("bad key superseding a missing memory: %v; want invalid_argument on idempotency_key", err)
	}
	// In a batch the item is named.
	_, err := h.eng.RememberBatch(ctx, []memgate.RememberRequest{keyedRequest("One.", "b#0"), keyedRequest("Two.", "bad key")})
	if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "memories[1].idempotency_key" {
		t.Fatalf("batch with a bad key: %v; want invalid_argument on memories[1].idempotency_key", err)
	}
	// Nothing above was stored: the first fact, the other agent's and Paris
	// (still active).
	if n := countMemories(t, h, scope("acme", "alice")); n != 3 {
		t.Fatalf("alice has %d memories, want 3", n)
	}
	if m, err := h.eng.Get(ctx, scope("acme", "alice"), old.ID); err != nil || m.Status != memgate.StatusActive {
		t.Fatalf("Paris after refused supersessions: %+v, %v; want active", m, err)
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

// supersedeRequest is alice's request that content supersede oldID,
// under key.
func supersedeRequest(oldID, content, key string) memgate.RememberRequest {
	return memgate.RememberRequest{
		Memory:     memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: content},
		Supersedes: oldID, IdempotencyKey: key,
	}
}

// auditCount sums count name over the audit events of acme that f selects.
// It closes the engine first, to flush the events it queued.
func auditCount(t *testing.T, h *harness, f memgate.AuditFilter, name string) (events int, sum int64) {
	t.Helper()
	h.eng.Close()
	page, err := h.db.ListAudit(ctx, "acme", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range page.Events {
		sum += ev.Counts[name]
	}
	return len(page.Events), sum
}

func TestSupersedeWithIdempotencyKeyReplays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := scope("acme", "alice")
	paris := h.remember(t, "acme", "alice", "Alice lives in Paris.")
	first, err := h.eng.Remember(ctx, supersedeRequest(paris.ID, "Alice lives in Lyon.", "sup-1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || first.Status != memgate.StatusActive || first.Supersedes != paris.ID {
		t.Fatalf("first request: replayed %v, %s, supersedes %q; want a new active memory superseding %s", first.Replayed, first.Status, first.Supersedes, paris.ID)
	}
	// The acknowledgement was lost and the client retries, later: the old
	// memory is superseded by now.
	h.clock.Add(time.Minute)
	again, err := h.eng.Remember(ctx, supersedeRequest(paris.ID, "Alice lives in Lyon.", "sup-1"))
	if err != nil {
		t.Fatalf("retry: %v; want a replay", err)
	}
	if !again.Replayed || again.ID != first.ID || again.Version != first.Version || !again.UpdatedAt.Equal(first.UpdatedAt) {
		t.Fatalf("retry: replayed %v, %s v%d at %v; want a replay of %s v%d at %v",
			again.Replayed, again.ID, again.Version, again.UpdatedAt, first.ID, first.Version, first.UpdatedAt)
	}
	old, err := h.eng.Get(ctx, s, paris.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != memgate.StatusSuperseded || old.SupersededBy != first.ID || old.Version != paris.Version+1 {
		t.Fatalf("old memory: %s by %q at v%d; want superseded once, by %s at v%d", old.Status, old.SupersededBy, old.Version, first.ID, paris.Version+1)
	}
	if n := countMemories(t, h, s); n != 2 {
		t.Fatalf("alice has %d memories after a retry, want 2", n)
	}

	// The key's request is the content and the memory superseded too:
	// another one is a conflict on the key, whatever the old memory's
	// status.
	lisbon := h.remember(t, "acme", "alice", "Alice works in Lisbon.")
	for _, c := range []struct {
		name string
		r    memgate.RememberRequest
	}{
		{"content", supersedeRequest(paris.ID, "Alice lives in Nantes.", "sup-1")},
		{"supersedes", supersedeRequest(lisbon.ID, "Alice lives in Lyon.", "sup-1")},
		{"no supersedes", supersedeRequest("", "Alice lives in Lyon.", "sup-1")},
	} {
		_, err := h.eng.Remember(ctx, c.r)
		if memgate.ErrorCode(err) != memgate.ECONFLICT || memgate.ErrorField(err) != "idempotency_key" {
			t.Fatalf("same key, other %s: %v; want conflict on idempotency_key", c.name, err)
		}
	}
	// Control: a new key is a new request, refused as before.
	_, err = h.eng.Remember(ctx, supersedeRequest(paris.ID, "Alice lives in Lyon.", "sup-2"))
	if memgate.ErrorCode(err) != memgate.ECONFLICT || memgate.ErrorField(err) != "" || !strings.HasSuffix(memgate.ErrorMessage(err), "only an active memory can be superseded") {
		t.Fatalf("a new key on a superseded memory: %v; want the conflict of a superseded memory", err)
	}
	if n := countMemories(t, h, s); n != 3 {
		t.Fatalf("alice has %d memories, want 3", n)
	}
	if m, err := h.eng.Get(ctx, s, lisbon.ID); err != nil || m.Status != memgate.StatusActive {
		t.Fatalf("Lisbon after a refused supersession: %+v, %v; want active", m, err)
	}

	// One supersession is logged and audited; the retry is a replayed
	// remember.
	var logged, replayedLogs int
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"supersede"`) {
			logged++
			if strings.Contains(line, `"replayed":true`) {
				replayedLogs++
			}
		}
	}
	if logged != 2 || replayedLogs != 1 {
		t.Fatalf("%d supersede log lines, %d of them replayed; want the supersession and the replay", logged, replayedLogs)
	}
	if n, _ := auditCount(t, h, memgate.AuditFilter{Action: engine.ActionSupersede}, ""); n != 1 {
		t.Fatalf("%d supersede audit events, want 1", n)
	}
	if n, replayed := auditCount(t, h, memgate.AuditFilter{Action: engine.ActionRemember, MemoryID: first.ID}, "replayed"); n != 1 || replayed != 1 {
		t.Fatalf("%d remember audit events of %s with %d replayed; want the replay only", n, first.ID, replayed)
	}
}

// The engine's Supersede takes the key too.
func TestSupersedeMethodTakesIdempotencyKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := scope("acme", "alice")
	paris := h.remember(t, "acme", "alice", "Alice lives in Paris.")
	r := memgate.RememberRequest{Memory: memgate.Memory{Source: memgate.SourceUser, Content: "Alice lives in Lyon."}, IdempotencyKey: "sup-1"}
	_, first, err := h.eng.Supersede(ctx, s, paris.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	old, again, err := h.eng.Supersede(ctx, s, paris.ID, r)
	if err != nil || again.ID != first.ID || old.ID != paris.ID || old.SupersededBy != first.ID {
		t.Fatalf("retry: old %+v, next %+v, %v; want %s superseded by %s", old, again, err, paris.ID, first.ID)
	}
	// Control: without the key the retry is refused.
	r.IdempotencyKey = ""
	if _, _, err := h.eng.Supersede(ctx, s, paris.ID, r); memgate.ErrorCode(err) != memgate.ECONFLICT {
		t.Fatalf("retry without a key: %v; want conflict", err)
	}
	if n := countMemories(t, h, s); n != 2 {
		t.Fatalf("alice has %d memories, want 2", n)
	}
}

// A supersession the write gate holds is remembered pending with the link;
// its retry replays it, before and after approval.
func TestHeldSupersedeWithIdempotencyKeyReplays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := scope("acme", "alice")
	paris := h.remember(t, "acme", "alice", "Alice lives in Paris.")
	// Facts from the assistant wait for approval under the default policy.
	proposal := supersedeRequest(paris.ID, "Alice lives in Berlin.", "prop-1")
	proposal.Memory.Source = memgate.SourceAssistant
	first, err := h.eng.Remember(ctx, proposal)
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || first.Status != memgate.StatusPending || first.Supersedes != paris.ID {
		t.Fatalf("proposal: replayed %v, %s, supersedes %q; want a new pending memory superseding %s", first.Replayed, first.Status, first.Supersedes, paris.ID)
	}
	// The old memory is still active: the retry replays, neither a second
	// pending memory nor a fold into the first (its seen count rises).
	again, err := h.eng.Remember(ctx, proposal)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Deduplicated || again.ID != first.ID || again.SeenCount != first.SeenCount {
		t.Fatalf("retry: replayed %v, deduplicated %v, %s seen %d; want a replay of %s seen %d",
			again.Replayed, again.Deduplicated, again.ID, again.SeenCount, first.ID, first.SeenCount)
	}
	if n := h.count(t, s, memgate.StatusPending); n != 1 {
		t.Fatalf("%d pending memories after a retry, want 1", n)
	}

	// Approved since, the old memory is superseded: the retry still
	// replays, now the approved memory.
	if _, err := h.eng.Approve(ctx, s, first.ID, first.Version); err != nil {
		t.Fatal(err)
	}
	late, err := h.eng.Remember(ctx, proposal)
	if err != nil {
		t.Fatalf("retry after approval: %v; want a replay", err)
	}
	if !late.Replayed || late.ID != first.ID || late.Status != memgate.StatusActive {
		t.Fatalf("retry after approval: replayed %v, %s %s; want a replay of %s, active", late.Replayed, late.ID, late.Status, first.ID)
	}
	// Control: a new key is a new request, refused exactly as one without
	// a key.
	other := proposal
	other.IdempotencyKey = "prop-2"
	_, errKey := h.eng.Remember(ctx, other)
	other.IdempotencyKey = ""
	_, errNone := h.eng.Remember(ctx, other)
	if memgate.ErrorCode(errKey) != memgate.ECONFLICT || errNone == nil || errKey.Error() != errNone.Error() {
		t.Fatalf("a new proposal on a superseded memory: with a key %v, without %v; want the same conflict", errKey, errNone)
	}
	if n := countMemories(t, h, s); n != 2 {
		t.Fatalf("alice has %d memories, want 2", n)
	}
	if n, _ := auditCount(t, h, memgate.AuditFilter{Action: engine.ActionSupersede, MemoryID: paris.ID}, ""); n != 1 {
		t.Fatalf("%d supersede audit events of the old memory, want 1 (the approval)", n)
	}
}
