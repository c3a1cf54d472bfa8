package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// The change sequence (PartitionHead) and change feed (ChangesSince,
// PruneChanges) that let several servers over one database keep their
// recall indexes current.

var partitionHeadTests = []test{
	{"ZeroForANewPartition", testHeadNew},
	{"RefusedChangesDoNotCount", testHeadRefused},
	{"RefusesInvalidInput", testHeadInvalid},
}

var partitionSizeTests = []test{
	{"CountsActiveAndPending", testPartitionSize},
	{"RefusesInvalidInput", testPartitionSizeInvalid},
}

var changesTests = []test{
	{"ExactlyTheChanges", testChangesExact},
	{"CurrentStateOnce", testChangesCurrentState},
	{"DeletedThenStoredAgain", testChangesDeletedThenStored},
	{"Paging", testChangesPaging},
	{"ResetAfterPrune", testChangesResetAfterPrune},
	{"ResetWhenAhead", testChangesResetWhenAhead},
	{"PruneLimitAndAge", testPruneLimitAndAge},
	{"RefusesInvalidInput", testChangesInvalid},
}

// headChangeTests is one case per kind of change: each moves the head of
// the partition it changes, never another's, and ChangesSince reports it.
var headChangeTests = func() []test {
	var out []test
	for _, c := range changeKinds {
		out = append(out, test{"GrowsOn" + c.name, func(t *testing.T, newStore func(*testing.T) store.Store) { testHeadGrows(t, newStore, c) }})
	}
	return out
}()

// changeKind is one kind of change. setup prepares partition sc (k-th of
// the three the test changes, in the order they are changed) and change
// applies the change to it. memories and deleted are what ChangesSince must
// then report for the partition (ids made by pid).
type changeKind struct {
	name     string
	setup    func(t *testing.T, s store.Store, sc memgate.Scope, k int)
	change   func(t *testing.T, s store.Store, sc memgate.Scope, k int)
	memories []int
	deleted  []int
	// anyOrder: one statement changes several memories, in an order the
	// backend chooses.
	anyOrder bool
	// reset: the change leaves no record a reader could catch up from
	// (Forget erases the partition's tombstones and head, which name the
	// person): a reader behind it must reset, and memories and deleted are
	// not reported.
	reset bool
	// check, when set, checks the reported memories further.
	check func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory)
}

// pid is the i-th id of the partition of sc: ids are unique per tenant, so
// the principal is part of it.
func pid(sc memgate.Scope, i int) string { return fmt.Sprintf("m-%s-%d", sc.Principal, i) }

func pmem(sc memgate.Scope, i int) *memgate.Memory {
	return newMemory(sc, pid(sc, i), fmt.Sprintf("memory %d of %s", i, sc.Principal))
}

var changeKinds = []changeKind{
	{
		name:     "Insert",
		change:   func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1), pmem(sc, 2)) },
		memories: []int{1, 2},
	},
	{
		name: "Remember",
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			remember(t, s, nil, pmem(sc, 1))
		},
		memories: []int{1},
	},
	{
		name:  "Update",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1), pmem(sc, 2)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			m := pmem(sc, 1)
			m.Content = "updated " + m.ID
			m.ContentSHA256 = memgate.ContentHash(m.Content)
			if _, err := s.Update(t.Context(), sc, m, 1); err != nil {
				t.Fatal(err)
			}
		},
		memories: []int{1},
		check: func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
			if ms[0].Content != "updated "+pid(sc, 1) || ms[0].Version != 2 {
				t.Fatalf("reported %q at version %d, want the updated content at version 2", ms[0].Content, ms[0].Version)
			}
		},
	},
	{
		name:  "EmbeddingChange",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			m := pmem(sc, 1)
			m.Embedding = &memgate.Embedding{Provider: "builtin", Model: "v2", Dim: 3, Vector: []float32{0.5, -1, 2}}
			if _, err := s.Update(t.Context(), sc, m, 1); err != nil {
				t.Fatal(err)
			}
		},
		memories: []int{1},
		check: func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
			if e := ms[0].Embedding; e == nil || e.Model != "v2" || !slices.Equal(e.Vector, []float32{0.5, -1, 2}) {
				t.Fatalf("reported embedding %+v, want the new vector", e)
			}
		},
	},
	{
		name:  "SetEmbedding",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			m := pmem(sc, 1)
			ok, err := s.SetEmbedding(t.Context(), sc.Tenant, m.ID, m.ContentSHA256, &memgate.Embedding{Provider: "builtin", Model: "v3", Dim: 2, Vector: []float32{0.25, 1}})
			if err != nil || !ok {
				t.Fatalf("SetEmbedding: %v, %v", ok, err)
			}
		},
		memories: []int{1},
		check: func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
			if e := ms[0].Embedding; e == nil || e.Model != "v3" {
				t.Fatalf("reported embedding %+v, want the one set", e)
			}
		},
	},
	{
		name:  "Revoke",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			setStatus(t, s, sc, pid(sc, 1), memgate.StatusActive, memgate.StatusRevoked)
		},
		memories: []int{1},
		check:    wantStatus(memgate.StatusRevoked),
	},
	{
		name: "Approve",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			m := pmem(sc, 1)
			m.Status = memgate.StatusPending
			mustInsert(t, s, m)
		},
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			setStatus(t, s, sc, pid(sc, 1), memgate.StatusPending, memgate.StatusActive)
		},
		memories: []int{1},
		check:    wantStatus(memgate.StatusActive),
	},
	{
		name:  "Supersede",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			next := pmem(sc, 2)
			next.Supersedes = pid(sc, 1)
			if _, err := s.Supersede(t.Context(), sc, pid(sc, 1), next, t1); err != nil {
				t.Fatal(err)
			}
		},
		memories: []int{1, 2},
		anyOrder: true,
	},
	{
		name:  "Feedback",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			if _, err := s.AddFeedback(t.Context(), sc, pid(sc, 1), 0.5); err != nil {
				t.Fatal(err)
			}
		},
		memories: []int{1},
		check: func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
			if ms[0].Feedback.Count != 1 {
				t.Fatalf("reported feedback %+v, want one report", ms[0].Feedback)
			}
		},
	},
	{
		name: "DedupFold",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			remember(t, s, nil, keyed(sc, pid(sc, 1), "same", "k"))
		},
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			if res := remember(t, s, nil, keyed(sc, pid(sc, 2), "same", "k")); !res.Deduplicated[0] {
				t.Fatal("control: the second memory did not fold")
			}
		},
		memories: []int{1},
		check: func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
			if ms[0].SeenCount != 2 {
				t.Fatalf("reported seen count %d, want 2", ms[0].SeenCount)
			}
		},
	},
	{
		name:  "Delete",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) { mustInsert(t, s, pmem(sc, 1), pmem(sc, 2)) },
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			if err := s.Delete(t.Context(), sc, pid(sc, 1)); err != nil {
				t.Fatal(err)
			}
		},
		deleted: []int{1},
	},
	{
		name: "Forget",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			revoked := pmem(sc, 2)
			revoked.Status = memgate.StatusRevoked
			mustInsert(t, s, pmem(sc, 1), revoked)
		},
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			if n, err := s.Forget(t.Context(), sc.Tenant, sc.Principal, pseudonymOf(sc.Tenant, sc.Principal)); err != nil || n != 2 {
				t.Fatalf("Forget: %d, %v", n, err)
			}
		},
		reset: true,
	},
	{
		// DeleteExpired works across tenants: the k-th partition's memory
		// expires k hours after the previous one's, and each sweep reaches
		// only its own.
		name: "Sweep",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, k int) {
			m := pmem(sc, 1)
			m.ExpiresAt = ptr(t0.Add(time.Duration(k+1) * time.Hour))
			mustInsert(t, s, m, pmem(sc, 2))
		},
		change: func(t *testing.T, s store.Store, sc memgate.Scope, k int) {
			refs, err := s.DeleteExpired(t.Context(), t0.Add(time.Duration(k+1)*time.Hour), 100)
			if err != nil || len(refs) != 1 || refs[0].ID != pid(sc, 1) {
				t.Fatalf("DeleteExpired: %+v, %v; want %s only", refs, err, pid(sc, 1))
			}
		},
		deleted: []int{1},
	},
	{
		name: "RetentionEviction",
		setup: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			remember(t, s, nil, message(sc, pid(sc, 1)), message(sc, pid(sc, 2)))
		},
		change: func(t *testing.T, s store.Store, sc memgate.Scope, _ int) {
			res := remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 2}, message(sc, pid(sc, 3)))
			if len(res.Evicted) != 1 || res.Evicted[0].ID != pid(sc, 1) {
				t.Fatalf("control: evicted %+v, want %s", res.Evicted, pid(sc, 1))
			}
		},
		memories: []int{3},
		deleted:  []int{1},
	},
}

func wantStatus(st memgate.Status) func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
	return func(t *testing.T, sc memgate.Scope, ms []*memgate.Memory) {
		if ms[0].Status != st {
			t.Fatalf("reported status %s, want %s", ms[0].Status, st)
		}
	}
}

func setStatus(t *testing.T, s store.Store, sc memgate.Scope, id string, from, to memgate.Status) {
	t.Helper()
	if _, err := s.SetStatus(t.Context(), sc, id, store.StatusChange{From: []memgate.Status{from}, To: to, Reason: "test", At: t1}); err != nil {
		t.Fatalf("SetStatus %s to %s: %v", id, to, err)
	}
}

func head(t *testing.T, s store.Store, sc memgate.Scope) int64 {
	t.Helper()
	h, err := s.PartitionHead(t.Context(), sc.Tenant, sc.Principal)
	if err != nil {
		t.Fatalf("PartitionHead %s/%s: %v", sc.Tenant, sc.Principal, err)
	}
	if h < 0 {
		t.Fatalf("PartitionHead %s/%s: %d", sc.Tenant, sc.Principal, h)
	}
	return h
}

func changesSince(t *testing.T, s store.Store, sc memgate.Scope, since int64, limit int) *store.Changes {
	t.Helper()
	ch, err := s.ChangesSince(t.Context(), sc.Tenant, sc.Principal, since, limit)
	if err != nil {
		t.Fatalf("ChangesSince %s/%s from %d: %v", sc.Tenant, sc.Principal, since, err)
	}
	if ch == nil || ch.Memories == nil || ch.Deleted == nil {
		t.Fatalf("ChangesSince %s/%s from %d: %+v (nil result or list)", sc.Tenant, sc.Principal, since, ch)
	}
	for _, m := range ch.Memories {
		if m == nil || m.Tenant != sc.Tenant || m.Principal != sc.Principal {
			t.Fatalf("ChangesSince %s/%s: reported a memory of another partition: %+v", sc.Tenant, sc.Principal, m)
		}
	}
	return ch
}

// allChanges follows ChangesSince from since to the end, limit at a time,
// and returns the concatenated memories and deleted ids and the last head.
func allChanges(t *testing.T, s store.Store, sc memgate.Scope, since int64, limit int) (ms []*memgate.Memory, deleted []string, last int64) {
	t.Helper()
	ms, deleted = []*memgate.Memory{}, []string{}
	for calls := 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("ChangesSince: more than 1000 pages; Head does not advance")
		}
		ch := changesSince(t, s, sc, since, limit)
		if ch.Reset {
			t.Fatalf("ChangesSince %s/%s from %d: unexpected reset", sc.Tenant, sc.Principal, since)
		}
		if n := len(ch.Memories) + len(ch.Deleted); n > limit || (ch.More && n == 0) {
			t.Fatalf("ChangesSince from %d, limit %d: %d items, more %v", since, limit, n, ch.More)
		}
		if ch.More && ch.Head <= since {
			t.Fatalf("ChangesSince from %d: more, but head %d does not advance", since, ch.Head)
		}
		ms = append(ms, ch.Memories...)
		deleted = append(deleted, ch.Deleted...)
		since = ch.Head
		if !ch.More {
			return ms, deleted, ch.Head
		}
	}
}

func testHeadGrows(t *testing.T, newStore func(*testing.T) store.Store, c changeKind) {
	s := newStore(t)
	// Changed in this order: another principal of the tenant, the same
	// principal in another tenant (the controls), then alice.
	scopes := []memgate.Scope{bob, aliceGlobex, alice}
	if c.setup != nil {
		for k, sc := range scopes {
			c.setup(t, s, sc, k)
		}
	}
	before := map[memgate.Scope]int64{}
	for _, sc := range scopes {
		before[sc] = head(t, s, sc)
	}
	if c.setup != nil && before[alice] == 0 {
		t.Fatal("PartitionHead is 0 after writes to the partition")
	}
	for k, sc := range scopes[:2] {
		c.change(t, s, sc, k)
		if h := head(t, s, sc); h <= before[sc] {
			t.Fatalf("control: the head of %s/%s stayed at %d after the change", sc.Tenant, sc.Principal, h)
		}
		if h := head(t, s, alice); h != before[alice] {
			t.Fatalf("a change to %s/%s moved the head of acme/alice from %d to %d", sc.Tenant, sc.Principal, before[alice], h)
		}
	}
	c.change(t, s, alice, 2)
	after := head(t, s, alice)
	if after <= before[alice] {
		t.Fatalf("head of acme/alice stayed at %d after the change", after)
	}
	if n := int64(len(c.memories) + len(c.deleted)); after-before[alice] < n {
		t.Fatalf("head rose by %d for %d changed memories; each change needs its own sequence", after-before[alice], n)
	}

	for _, sc := range scopes {
		ch := changesSince(t, s, sc, before[sc], 100)
		if c.reset && sc.Principal == alice.Principal && sc.Tenant == alice.Tenant {
			if !ch.Reset || ch.Head != head(t, s, sc) || len(ch.Memories)+len(ch.Deleted) != 0 {
				t.Fatalf("ChangesSince %s/%s after %s: %+v; want a reset at the head %d", sc.Tenant, sc.Principal, c.name, ch, head(t, s, sc))
			}
			// Written again, the partition goes on above the head a
			// reader saw, and a reader at it catches up without a reset.
			at := ch.Head
			mustInsert(t, s, pmem(sc, 9))
			if h := head(t, s, sc); h <= at {
				t.Fatalf("head after a write that follows %s: %d, a reader was at %d", c.name, h, at)
			}
			again := changesSince(t, s, sc, at, 100)
			if again.Reset || !slices.Equal(idsOf(again.Memories), []string{pid(sc, 9)}) {
				t.Fatalf("ChangesSince %s/%s from the head after %s: %+v; want the new memory alone", sc.Tenant, sc.Principal, c.name, again)
			}
			if back := changesSince(t, s, sc, before[sc], 100); !back.Reset {
				t.Fatalf("ChangesSince %s/%s from before %s: no reset after the partition was written again", sc.Tenant, sc.Principal, c.name)
			}
			continue
		}
		if c.reset {
			continue // the other partitions are changed by the same kind (above)
		}
		if ch.Reset || ch.More || ch.Head != head(t, s, sc) {
			t.Fatalf("ChangesSince %s/%s: reset %v, more %v, head %d (PartitionHead %d)", sc.Tenant, sc.Principal, ch.Reset, ch.More, ch.Head, head(t, s, sc))
		}
		want := func(is []int) []string {
			out := []string{}
			for _, i := range is {
				out = append(out, pid(sc, i))
			}
			return out
		}
		got, deleted := idsOf(ch.Memories), slices.Clone(ch.Deleted)
		if c.anyOrder {
			slices.Sort(got)
			slices.Sort(deleted)
		}
		requireIDs(t, "changed memories of "+sc.Tenant+"/"+sc.Principal, got, want(c.memories))
		requireIDs(t, "deleted ids of "+sc.Tenant+"/"+sc.Principal, deleted, want(c.deleted))
		for _, m := range ch.Memories {
			requireEqualMemory(t, "reported "+m.ID, mustGet(t, s, sc, m.ID), m)
		}
		if c.check != nil {
			c.check(t, sc, ch.Memories)
		}
	}
}

func testHeadNew(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, pmem(bob, 1))
	if h := head(t, s, alice); h != 0 {
		t.Fatalf("head of a partition never written: %d", h)
	}
	ch := changesSince(t, s, alice, 0, 10)
	if ch.Reset || ch.More || ch.Head != 0 || len(ch.Memories)+len(ch.Deleted) != 0 {
		t.Fatalf("ChangesSince of a partition never written: %+v", ch)
	}
	// Populated control.
	if head(t, s, bob) == 0 {
		t.Fatal("control: head of bob is 0 after an insert")
	}
	// Forget does not reset the head.
	h := head(t, s, bob)
	if _, err := s.Forget(t.Context(), bob.Tenant, bob.Principal, pseudonymOf(bob.Tenant, bob.Principal)); err != nil {
		t.Fatal(err)
	}
	if got := head(t, s, bob); got <= h {
		t.Fatalf("head after Forget: %d, was %d", got, h)
	}
}

func testHeadRefused(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, pmem(alice, 1))
	setStatus(t, s, alice, pid(alice, 1), memgate.StatusActive, memgate.StatusRevoked)
	mustInsert(t, s, pmem(alice, 2))
	h := head(t, s, alice)
	ctx := t.Context()

	m := pmem(alice, 2)
	m.Content = "stale update"
	m.ContentSHA256 = memgate.ContentHash(m.Content)
	_, err := s.Update(ctx, alice, m, 7)
	requireCode(t, "Update at a stale version", err, memgate.ECONFLICT, "")
	_, err = s.AddFeedback(ctx, alice, pid(alice, 1), 1)
	requireCode(t, "AddFeedback on a revoked memory", err, memgate.ECONFLICT, "")
	next := pmem(alice, 3)
	next.Supersedes = pid(alice, 1)
	_, err = s.Supersede(ctx, alice, pid(alice, 1), next, t1)
	requireCode(t, "Supersede of a revoked memory", err, memgate.ECONFLICT, "")
	err = s.Insert(ctx, []*memgate.Memory{pmem(alice, 4), pmem(alice, 2)})
	requireCode(t, "Insert of a used id", err, memgate.ECONFLICT, "")
	requireNotFound(t, "Delete of a missing id", s.Delete(ctx, alice, missingID))
	if got := head(t, s, alice); got != h {
		t.Fatalf("refused changes moved the head from %d to %d", h, got)
	}
	// Control: the same update at the right version moves it.
	if _, err := s.Update(ctx, alice, m, 1); err != nil {
		t.Fatal(err)
	}
	if got := head(t, s, alice); got <= h {
		t.Fatalf("control: head stayed at %d after an update", got)
	}
}

func testHeadInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for _, c := range []struct{ tenant, principal, field string }{
		{"", "alice", "tenant"},
		{"acme", "", "principal"},
		{"acme", "al ice", "principal"},
	} {
		_, err := s.PartitionHead(t.Context(), c.tenant, c.principal)
		requireCode(t, fmt.Sprintf("PartitionHead(%q, %q)", c.tenant, c.principal), err, memgate.EINVALID, c.field)
	}
}

// setupChanges stores memories 1 to 5 in alice, bob and alice in globex,
// and returns alice's head after them.
func setupChanges(t *testing.T, s store.Store) int64 {
	t.Helper()
	for _, sc := range []memgate.Scope{alice, bob, aliceGlobex} {
		var ms []*memgate.Memory
		for i := 1; i <= 5; i++ {
			m := pmem(sc, i)
			if i == 5 {
				m = fullMemory(t, sc, pid(sc, 5))
			}
			ms = append(ms, m)
		}
		mustInsert(t, s, ms...)
	}
	return head(t, s, alice)
}

func testChangesExact(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	h0 := setupChanges(t, s)
	bob0 := head(t, s, bob)

	// From 0: every memory of the partition, in order, nothing deleted.
	ch := changesSince(t, s, alice, 0, 100)
	requireIDs(t, "ChangesSince(0)", idsOf(ch.Memories), []string{pid(alice, 1), pid(alice, 2), pid(alice, 3), pid(alice, 4), pid(alice, 5)})
	if ch.Head != h0 || ch.More || ch.Reset || len(ch.Deleted) != 0 {
		t.Fatalf("ChangesSince(0): head %d (want %d), more %v, reset %v, deleted %v", ch.Head, h0, ch.More, ch.Reset, ch.Deleted)
	}
	requireEqualMemory(t, "reported with every field", mustGet(t, s, alice, pid(alice, 5)), ch.Memories[4])

	// Changes to alice in a known order, interleaved with the same changes
	// to bob and to alice in globex.
	for _, sc := range []memgate.Scope{bob, aliceGlobex, alice} {
		if _, err := s.AddFeedback(ctx, sc, pid(sc, 3), 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, sc, pid(sc, 2)); err != nil {
			t.Fatal(err)
		}
		setStatus(t, s, sc, pid(sc, 1), memgate.StatusActive, memgate.StatusRevoked)
		mustInsert(t, s, pmem(sc, 6))
		if err := s.Delete(ctx, sc, pid(sc, 4)); err != nil {
			t.Fatal(err)
		}
	}
	ch = changesSince(t, s, alice, h0, 100)
	requireIDs(t, "changed memories", idsOf(ch.Memories), []string{pid(alice, 3), pid(alice, 1), pid(alice, 6)})
	requireIDs(t, "deleted ids", ch.Deleted, []string{pid(alice, 2), pid(alice, 4)})
	if ch.Head != head(t, s, alice) || ch.More || ch.Reset {
		t.Fatalf("ChangesSince: head %d (PartitionHead %d), more %v, reset %v", ch.Head, head(t, s, alice), ch.More, ch.Reset)
	}
	for _, m := range ch.Memories {
		requireEqualMemory(t, "reported "+m.ID, mustGet(t, s, alice, m.ID), m)
	}
	// From the new head: nothing.
	if ch := changesSince(t, s, alice, ch.Head, 100); len(ch.Memories)+len(ch.Deleted) != 0 || ch.More || ch.Reset {
		t.Fatalf("ChangesSince from the head: %+v", ch)
	}
	// Populated control: bob's changes are his.
	ch = changesSince(t, s, bob, bob0, 100)
	requireIDs(t, "bob's changed memories", idsOf(ch.Memories), []string{pid(bob, 3), pid(bob, 1), pid(bob, 6)})
	requireIDs(t, "bob's deleted ids", ch.Deleted, []string{pid(bob, 2), pid(bob, 4)})
}

func testChangesCurrentState(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	h0 := setupChanges(t, s)
	m := pmem(alice, 2)
	for v := int64(1); v <= 3; v++ {
		m.Content = fmt.Sprintf("version %d", v+1)
		m.ContentSHA256 = memgate.ContentHash(m.Content)
		if _, err := s.Update(ctx, alice, m, v); err != nil {
			t.Fatal(err)
		}
		if v == 1 {
			if _, err := s.AddFeedback(ctx, alice, pid(alice, 1), -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	ch := changesSince(t, s, alice, h0, 100)
	// Memory 2 changed first and last: it is reported once, at its last.
	requireIDs(t, "changed memories", idsOf(ch.Memories), []string{pid(alice, 1), pid(alice, 2)})
	if got := ch.Memories[1]; got.Content != "version 4" || got.Version != 4 {
		t.Fatalf("reported %q at version %d, want its current state (version 4)", got.Content, got.Version)
	}
}

func testChangesDeletedThenStored(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	h0 := setupChanges(t, s)
	for _, i := range []int{1, 2} {
		if err := s.Delete(ctx, alice, pid(alice, i)); err != nil {
			t.Fatal(err)
		}
	}
	again := pmem(alice, 1)
	again.Content = "stored again"
	again.ContentSHA256 = memgate.ContentHash(again.Content)
	mustInsert(t, s, again)
	ch := changesSince(t, s, alice, h0, 100)
	requireIDs(t, "changed memories", idsOf(ch.Memories), []string{pid(alice, 1)})
	requireIDs(t, "deleted ids", ch.Deleted, []string{pid(alice, 2)})
	if ch.Memories[0].Content != "stored again" {
		t.Fatalf("reported %q", ch.Memories[0].Content)
	}
	// Deleted again: now only a deletion, once.
	if err := s.Delete(ctx, alice, pid(alice, 1)); err != nil {
		t.Fatal(err)
	}
	ch = changesSince(t, s, alice, h0, 100)
	requireIDs(t, "changed memories", idsOf(ch.Memories), []string{})
	requireIDs(t, "deleted ids", ch.Deleted, []string{pid(alice, 2), pid(alice, 1)})
}

func testChangesPaging(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	h0 := setupChanges(t, s)
	mustInsert(t, s, pmem(alice, 6), pmem(alice, 7), pmem(alice, 8))
	if err := s.Delete(ctx, alice, pid(alice, 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddFeedback(ctx, alice, pid(alice, 1), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, alice, pid(alice, 7)); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, pmem(bob, 6), pmem(bob, 7)) // not alice's

	whole := changesSince(t, s, alice, h0, 100)
	requireIDs(t, "changed memories", idsOf(whole.Memories), []string{pid(alice, 6), pid(alice, 8), pid(alice, 1)})
	requireIDs(t, "deleted ids", whole.Deleted, []string{pid(alice, 4), pid(alice, 7)})
	for _, limit := range []int{1, 2, 3, 4, 5} {
		ms, deleted, last := allChanges(t, s, alice, h0, limit)
		requireIDs(t, fmt.Sprintf("changed memories, %d at a time", limit), idsOf(ms), idsOf(whole.Memories))
		requireIDs(t, fmt.Sprintf("deleted ids, %d at a time", limit), deleted, whole.Deleted)
		if last != whole.Head {
			t.Fatalf("%d at a time: last head %d, want %d", limit, last, whole.Head)
		}
	}
	// Exactly limit items left: More may be set, the next call then ends.
	ch := changesSince(t, s, alice, h0, 5)
	if len(ch.Memories)+len(ch.Deleted) != 5 {
		t.Fatalf("limit 5 of 5: %d items", len(ch.Memories)+len(ch.Deleted))
	}
	if ch.More {
		if next := changesSince(t, s, alice, ch.Head, 5); next.More || len(next.Memories)+len(next.Deleted) != 0 {
			t.Fatalf("after the last page: %+v", next)
		}
	}
}

func testChangesResetAfterPrune(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	h0 := setupChanges(t, s)
	for _, sc := range []memgate.Scope{alice, bob} {
		if err := s.Delete(ctx, sc, pid(sc, 1)); err != nil {
			t.Fatal(err)
		}
	}
	h1 := head(t, s, alice)
	mustInsert(t, s, pmem(alice, 6))
	h2 := head(t, s, alice)
	bobHead := head(t, s, bob)
	// Control: nothing pruned yet, no reset.
	if ch := changesSince(t, s, alice, h0, 100); ch.Reset || !slices.Equal(ch.Deleted, []string{pid(alice, 1)}) {
		t.Fatalf("before pruning: %+v", ch)
	}
	// Deletion records made an hour from now: none yet.
	if n, err := s.PruneChanges(ctx, time.Now().Add(-time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("PruneChanges of records older than an hour: %d, %v", n, err)
	}
	if ch := changesSince(t, s, alice, h0, 100); ch.Reset {
		t.Fatal("reset after pruning nothing")
	}
	if n, err := s.PruneChanges(ctx, time.Now().Add(time.Hour), 100); err != nil || n != 2 {
		t.Fatalf("PruneChanges of every record: %d, %v; want 2 (alice's and bob's)", n, err)
	}
	for _, since := range []int64{0, h0} {
		ch := changesSince(t, s, alice, since, 100)
		if !ch.Reset || len(ch.Memories)+len(ch.Deleted) != 0 || ch.Head != h2 {
			t.Fatalf("ChangesSince(%d) after the deletion after it was pruned: %+v, want a reset at head %d", since, ch, h2)
		}
	}
	// From the deletion on, nothing is missing: no reset.
	ch := changesSince(t, s, alice, h1, 100)
	if ch.Reset || !slices.Equal(idsOf(ch.Memories), []string{pid(alice, 6)}) {
		t.Fatalf("ChangesSince from after the pruned deletion: %+v", ch)
	}
	if ch := changesSince(t, s, bob, bobHead, 100); ch.Reset {
		t.Fatal("bob at his head: reset")
	}
	// Pruning touches no memory and no head.
	if head(t, s, alice) != h2 || len(listIDs(t, s, alice, store.Filter{})) != 5 {
		t.Fatal("pruning changed the partition")
	}
}

func testChangesResetWhenAhead(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	h := setupChanges(t, s)
	ch := changesSince(t, s, alice, h+1, 100)
	if !ch.Reset || ch.Head != h || len(ch.Memories)+len(ch.Deleted) != 0 {
		t.Fatalf("ChangesSince ahead of the head: %+v, want a reset at %d", ch, h)
	}
	if ch := changesSince(t, s, memgate.Scope{Tenant: "acme", Principal: "nobody"}, 3, 100); !ch.Reset || ch.Head != 0 {
		t.Fatalf("ChangesSince(3) of a partition never written: %+v, want a reset at 0", ch)
	}
	if ch := changesSince(t, s, alice, h, 100); ch.Reset {
		t.Fatal("control: reset at the head")
	}
}

func testPruneLimitAndAge(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	setupChanges(t, s)
	for _, sc := range []memgate.Scope{alice, bob, aliceGlobex} {
		for i := 1; i <= 3; i++ {
			if err := s.Delete(ctx, sc, pid(sc, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, limit := range []int{0, -1} {
		if n, err := s.PruneChanges(ctx, time.Now().Add(time.Hour), limit); err != nil || n != 0 {
			t.Fatalf("PruneChanges with limit %d: %d, %v", limit, n, err)
		}
	}
	later := time.Now().Add(time.Hour)
	var total int64
	for _, want := range []int64{4, 4, 1, 0} {
		n, err := s.PruneChanges(ctx, later, 4)
		if err != nil || n != want {
			t.Fatalf("PruneChanges, 4 at a time: %d, %v; want %d", n, err, want)
		}
		total += n
	}
	if total != 9 {
		t.Fatalf("pruned %d records, want 9", total)
	}
}

func testChangesInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	for _, c := range []struct {
		name              string
		tenant, principal string
		since             int64
		limit             int
		field             string
	}{
		{"no tenant", "", "alice", 0, 10, "tenant"},
		{"no principal", "acme", "", 0, 10, "principal"},
		{"bad principal", "acme", "a/b", 0, 10, "principal"},
		{"negative since", "acme", "alice", -1, 10, "since"},
		{"zero limit", "acme", "alice", 0, 0, "limit"},
		{"negative limit", "acme", "alice", 0, -5, "limit"},
	} {
		ch, err := s.ChangesSince(ctx, c.tenant, c.principal, c.since, c.limit)
		requireCode(t, "ChangesSince, "+c.name, err, memgate.EINVALID, c.field)
		if ch != nil {
			t.Fatalf("ChangesSince, %s: a result with the error", c.name)
		}
	}
}

func size(t *testing.T, s store.Store, sc memgate.Scope) int {
	t.Helper()
	n, err := s.PartitionSize(t.Context(), sc.Tenant, sc.Principal)
	if err != nil {
		t.Fatalf("PartitionSize %s/%s: %v", sc.Tenant, sc.Principal, err)
	}
	return n
}

// testPartitionSize: the size counts a partition's active and pending
// memories, not its revoked or deleted ones nor another partition's, and
// follows writes.
func testPartitionSize(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	if n := size(t, s, alice); n != 0 {
		t.Fatalf("size of a partition never written: %d", n)
	}
	pending := pmem(alice, 4)
	pending.Status = memgate.StatusPending
	mustInsert(t, s, pmem(alice, 1), pmem(alice, 2), pmem(alice, 3), pending, pmem(alice, 5), pmem(bob, 1))
	setStatus(t, s, alice, pid(alice, 5), memgate.StatusActive, memgate.StatusRevoked)
	if n := size(t, s, alice); n != 4 {
		t.Fatalf("size of 3 active, 1 pending and 1 revoked memories: %d, want 4", n)
	}
	if n := size(t, s, bob); n != 1 {
		t.Fatalf("control: size of bob's one memory: %d", n)
	}
	if err := s.Delete(t.Context(), alice, pid(alice, 1)); err != nil {
		t.Fatal(err)
	}
	if n := size(t, s, alice); n != 3 {
		t.Fatalf("size after a delete: %d, want 3", n)
	}
	if n := size(t, s, memgate.Scope{Tenant: "globex", Principal: "alice"}); n != 0 {
		t.Fatalf("size of alice in another tenant: %d", n)
	}
}

func testPartitionSizeInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for _, c := range []struct{ tenant, principal, field string }{
		{"", "alice", "tenant"},
		{"acme", "", "principal"},
		{"acme", "al ice", "principal"},
	} {
		_, err := s.PartitionSize(t.Context(), c.tenant, c.principal)
		requireCode(t, fmt.Sprintf("PartitionSize(%q, %q)", c.tenant, c.principal), err, memgate.EINVALID, c.field)
	}
}
