package storetest

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var rememberTests = []test{
	{"StoresLikeInsert", testRememberStores},
	{"DedupFoldsOnlyTheSamePopulation", testRememberDedup},
	{"DedupWithinOneCall", testRememberDedupWithinCall},
	{"AnswersWhatIsStored", testRememberAnswersStored},
	{"AllOrNone", testRememberAtomic},
	{"FindDuplicatesScopeAndInput", testFindDuplicatesInput},
	{"ConcurrentCallsFoldAndCap", testRememberConcurrent},
	{"RefusesInvalidInput", testRememberInvalid},
}

var retentionTests = []test{
	{"MixedKindsEvictOnlyTheCappedKind", testRetentionMixedKinds},
	{"RevokedAndSupersededNeitherCountNorGo", testRetentionStatuses},
	{"OnlyWrittenPartitions", testRetentionOtherPartitions},
	{"FloodEvictsOnlyItsOwnSource", testRetentionSources},
	{"EvictsWithinTheCall", testRetentionWithinCall},
	{"NoPositiveCapNoEviction", testRetentionNoCap},
}

// remember calls Remember and fails the test on error or on a result that
// does not have one entry per input.
func remember(t *testing.T, s store.Store, caps map[memgate.Kind]int, ms ...*memgate.Memory) *store.WriteResult {
	t.Helper()
	res, err := s.Remember(t.Context(), ms, caps)
	if err != nil {
		t.Fatalf("Remember %v: %v", idsOf(ms), err)
	}
	if res == nil || len(res.Memories) != len(ms) || len(res.Deduplicated) != len(ms) {
		t.Fatalf("Remember %v: result %+v does not have one memory and one flag per input", idsOf(ms), res)
	}
	for i, m := range res.Memories {
		if m == nil {
			t.Fatalf("Remember %v: Memories[%d] is nil", idsOf(ms), i)
		}
	}
	return res
}

// keyed returns a memory of sc with a dedup key.
func keyed(sc memgate.Scope, id, content, key string) *memgate.Memory {
	m := newMemory(sc, id, content)
	m.DedupKey = key
	return m
}

// message returns a message of sc.
func message(sc memgate.Scope, id string) *memgate.Memory {
	m := newMemory(sc, id, "message "+id)
	m.Kind = memgate.KindMessage
	return m
}

// refIDs returns the ids of refs, failing unless each names the expected
// tenant, principal and kind.
func refIDs(t *testing.T, refs []store.Ref, tenant, principal string, kind memgate.Kind) []string {
	t.Helper()
	ids := []string{}
	for _, r := range refs {
		if r.Tenant != tenant || r.Principal != principal || r.Kind != kind {
			t.Fatalf("ref %+v: want tenant %s, principal %s, kind %s", r, tenant, principal, kind)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// requireStored fails unless every id is readable in sc.
func requireStored(t *testing.T, s store.Store, sc memgate.Scope, ids ...string) {
	t.Helper()
	for _, id := range ids {
		mustGet(t, s, sc, id)
	}
}

func testRememberStores(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	full := fullMemory(t, alice, id(1))
	full.Version, full.SeenCount, full.Feedback = 1, 1, memgate.Feedback{}
	minimal := newMemory(alice, id(2), "minimal")
	unset := newMemory(bob, id(3), "seen count left at zero")
	unset.SeenCount = 0
	res := remember(t, s, nil, full, minimal, unset)

	wantUnset := unset.Clone()
	wantUnset.SeenCount = 1
	for i, want := range []*memgate.Memory{full, minimal, wantUnset} {
		if res.Deduplicated[i] {
			t.Fatalf("Deduplicated[%d] is true for a memory without a duplicate", i)
		}
		requireEqualMemory(t, fmt.Sprintf("Memories[%d]", i), want, res.Memories[i])
		requireUnchanged(t, s, want.Scope(), want)
	}
	if len(res.Evicted) != 0 {
		t.Fatalf("Evicted %v without caps", res.Evicted)
	}

	empty, err := s.Remember(t.Context(), nil, map[memgate.Kind]int{memgate.KindFact: 1})
	if err != nil || empty == nil || len(empty.Memories) != 0 || len(empty.Evicted) != 0 {
		t.Fatalf("Remember of nothing: %+v, %v", empty, err)
	}
	requireIDs(t, "List after an empty call", listIDs(t, s, alice, store.Filter{}), newestFirst(id(1), id(2)))
}

// testRememberDedup stores one keyed memory, then remembers another that
// differs from it in one respect: only the same tenant, principal, agent,
// conversation, kind and key, against an active memory (or a pending one
// when the new memory is pending too) that has not expired, folds.
func testRememberDedup(t *testing.T, newStore func(*testing.T) store.Store) {
	home := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A", Conversation: "c1"}
	const key = "sig-v1:likes-tea"
	cases := []struct {
		name     string
		existing func(m *memgate.Memory)
		next     func(n *memgate.Memory)
		fold     bool
	}{
		{name: "same everything: folds", fold: true},
		{name: "existing pending, new one pending: folds", existing: func(m *memgate.Memory) { m.Status = memgate.StatusPending },
			next: func(n *memgate.Memory) { n.Status = memgate.StatusPending }, fold: true},
		{name: "new one pending: folds", next: func(n *memgate.Memory) { n.Status = memgate.StatusPending }, fold: true},
		{name: "existing expires after the new one is created: folds",
			existing: func(m *memgate.Memory) { m.ExpiresAt = ptr(t1.Add(time.Microsecond)) }, fold: true},
		{name: "different content, same key: folds (the key is the judge)",
			next: func(n *memgate.Memory) { n.Content, n.ContentSHA256 = "LIKES TEA", memgate.ContentHash("LIKES TEA") }, fold: true},

		// An active memory (a user's own statement) never folds into one
		// held for approval: it would stay held.
		{name: "existing pending, new one active", existing: func(m *memgate.Memory) { m.Status = memgate.StatusPending }},
		{name: "existing revoked", existing: func(m *memgate.Memory) { m.Status = memgate.StatusRevoked }},
		{name: "existing superseded", existing: func(m *memgate.Memory) { m.Status = memgate.StatusSuperseded }},
		{name: "existing expired when the new one is created", existing: func(m *memgate.Memory) { m.ExpiresAt = ptr(t1) }},
		{name: "other kind", next: func(n *memgate.Memory) { n.Kind = memgate.KindPreference }},
		{name: "other agent", next: func(n *memgate.Memory) { n.Agent = "B" }},
		{name: "wider agent", next: func(n *memgate.Memory) { n.Agent = "" }},
		{name: "other conversation", next: func(n *memgate.Memory) { n.Conversation = "c2" }},
		{name: "wider conversation", next: func(n *memgate.Memory) { n.Conversation = "" }},
		{name: "other principal", next: func(n *memgate.Memory) { n.Principal = "bob" }},
		{name: "other tenant", next: func(n *memgate.Memory) { n.Tenant = "globex" }},
		{name: "other key", next: func(n *memgate.Memory) { n.DedupKey = key + "-2" }},
		{name: "new one without a key", next: func(n *memgate.Memory) { n.DedupKey = "" }},
		{name: "neither has a key", existing: func(m *memgate.Memory) { m.DedupKey = "" }, next: func(n *memgate.Memory) { n.DedupKey = "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			existing := keyed(home, id(1), "likes tea", key)
			if tc.existing != nil {
				tc.existing(existing)
			}
			bystander := keyed(bob, id(9), "likes tea", key) // bob's own, never touched
			mustInsert(t, s, existing, bystander)

			next := keyed(home, id(2), "likes tea", key)
			next.CreatedAt, next.UpdatedAt = t1, t1
			if tc.next != nil {
				tc.next(next)
			}
			before := total(countsOf(t, s, acmeAll, time.Time{})) + total(countsOf(t, s, memgate.Scope{Tenant: "globex", AllPrincipals: true}, time.Time{}))

			// FindDuplicates must predict the fold exactly: the engine
			// skips embedding what it reports.
			wantDup := ""
			if tc.fold {
				wantDup = existing.ID
			}
			dups, err := s.FindDuplicates(t.Context(), []*memgate.Memory{next})
			if err != nil || len(dups) != 1 || dups[0] != wantDup {
				t.Fatalf("FindDuplicates: %q, %v; want [%q]", dups, err, wantDup)
			}

			res := remember(t, s, nil, next)
			after := total(countsOf(t, s, acmeAll, time.Time{})) + total(countsOf(t, s, memgate.Scope{Tenant: "globex", AllPrincipals: true}, time.Time{}))
			requireUnchanged(t, s, bob, bystander)

			if tc.fold {
				want := existing.Clone()
				want.SeenCount = 2
				want.UpdatedAt = next.UpdatedAt
				if !res.Deduplicated[0] {
					t.Fatalf("Deduplicated[0] is false; got %s, want the fold into %s", res.Memories[0].ID, existing.ID)
				}
				requireEqualMemory(t, "Memories[0]", want, res.Memories[0])
				requireUnchanged(t, s, alice, want)
				requireGone(t, s, memgate.Scope{Tenant: next.Tenant, Principal: next.Principal}, next.ID)
				if after != before {
					t.Fatalf("%d memories after a fold, want %d (unchanged)", after, before)
				}
				return
			}
			if res.Deduplicated[0] {
				t.Fatalf("Deduplicated[0] is true; folded into %s", res.Memories[0].ID)
			}
			requireEqualMemory(t, "Memories[0]", next, res.Memories[0])
			requireUnchanged(t, s, memgate.Scope{Tenant: next.Tenant, Principal: next.Principal}, next)
			requireUnchanged(t, s, alice, existing)
			if after != before+1 {
				t.Fatalf("%d memories after a new row, want %d", after, before+1)
			}
		})
	}
}

func testRememberDedupWithinCall(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const key = "sig-v1:same"
	first := keyed(alice, id(1), "same", key)
	second := keyed(alice, id(2), "same", key)
	second.UpdatedAt = t1
	otherKind := keyed(alice, id(3), "same", key)
	otherKind.Kind = memgate.KindPreference
	third := keyed(alice, id(4), "same", key)
	third.UpdatedAt = t2
	// FindDuplicates reads only what is stored: nothing yet.
	dups, err := s.FindDuplicates(t.Context(), []*memgate.Memory{first, second, otherKind, third})
	if err != nil || !slices.Equal(dups, []string{"", "", "", ""}) {
		t.Fatalf("FindDuplicates before the call: %q, %v", dups, err)
	}
	res := remember(t, s, nil, first, second, otherKind, third)
	// Afterwards it points every copy, and none of another kind, at the first.
	dups, err = s.FindDuplicates(t.Context(), []*memgate.Memory{keyed(alice, id(5), "same", key), otherKind, keyed(alice, id(6), "same", "")})
	if err != nil || !slices.Equal(dups, []string{id(1), id(3), ""}) {
		t.Fatalf("FindDuplicates after the call: %q, %v", dups, err)
	}

	requireIDs(t, "Memories", idsOf(res.Memories), []string{id(1), id(1), id(3), id(1)})
	if want := []bool{false, true, false, true}; !slices.Equal(res.Deduplicated, want) {
		t.Fatalf("Deduplicated = %v, want %v", res.Deduplicated, want)
	}
	want := first.Clone()
	want.SeenCount, want.UpdatedAt = 3, t2
	requireUnchanged(t, s, alice, want)
	for _, i := range []int{0, 1, 3} {
		requireEqualMemory(t, fmt.Sprintf("Memories[%d]", i), want, res.Memories[i])
	}
	requireUnchanged(t, s, alice, otherKind)
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst(id(1), id(3)))
}

// testRememberAnswersStored: each memory Remember answers with is the
// memory as a read of it after the call returns it, whether the store
// answers from what it bound or reads it back: one the same call then
// superseded (a later input with its key), times finer than a microsecond
// and a feedback sum of negative zero (each backend stores those its own
// way), beside an ordinary memory and one with every field set (the
// controls). The answer is a copy: changing the input afterwards changes
// nothing of it.
func testRememberAnswersStored(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	full := fullMemory(t, alice, id(1))
	full.Version, full.SeenCount, full.Feedback = 1, 1, memgate.Feedback{}
	plain := newMemory(alice, id(2), "an ordinary memory")
	fine := newMemory(alice, id(3), "times finer than a microsecond")
	fine.CreatedAt, fine.UpdatedAt = t0.Add(1500*time.Nanosecond), t0.Add(2999*time.Nanosecond)
	fine.ExpiresAt = ptr(t1.Add(999 * time.Nanosecond))
	negZero := newMemory(alice, id(4), "a feedback sum of negative zero")
	negZero.Feedback = memgate.Feedback{Sum: math.Copysign(0, -1)}
	old := newMemory(alice, id(6), "the key's first holder")
	old.Key = "pref:seat"
	next := newMemory(alice, id(7), "the key's next holder")
	next.Key = "pref:seat"
	ms := []*memgate.Memory{full, plain, fine, negZero, old, next}
	res := remember(t, s, nil, ms...)
	if res.Superseded[5] != id(6) {
		t.Fatalf("Superseded = %q, want %s superseded by the last input", res.Superseded, id(6))
	}
	for i, m := range ms {
		requireEqualMemory(t, fmt.Sprintf("Memories[%d] (%s)", i, m.Content), mustGet(t, s, alice, m.ID), res.Memories[i])
	}
	if got := res.Memories[4]; got.Status != memgate.StatusSuperseded || got.SupersededBy != id(7) {
		t.Fatalf("the first holder is answered as %s superseded by %q, want superseded by %s", got.Status, got.SupersededBy, id(7))
	}

	want := mustGet(t, s, alice, full.ID)
	full.Metadata["text"] = "changed"
	full.Flags[0] = "changed"
	full.Embedding.Vector[0] = 42
	*full.ExpiresAt = t2
	requireEqualMemory(t, "Memories[0] after its input changed", want, res.Memories[0])
}

// testRememberAtomic makes the last item of a call fail after earlier items
// were inserted and folded: nothing of the call may remain.
func testRememberAtomic(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name string
		bad  func(stored *memgate.Memory) *memgate.Memory
	}{
		{"item reuses a stored id", func(stored *memgate.Memory) *memgate.Memory {
			return newMemory(alice, stored.ID, "a different memory with a stored id")
		}},
		{"item repeats an id of the call", func(*memgate.Memory) *memgate.Memory {
			return newMemory(alice, id(10), "same id as an earlier item")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			const key = "sig-v1:stored"
			stored := keyed(alice, id(1), "stored", key)
			old := message(alice, id(2))
			mustInsert(t, s, stored, old)

			dup := keyed(alice, id(11), "stored", key)
			dup.UpdatedAt = t2
			batch := []*memgate.Memory{
				dup,                    // folds into stored
				message(alice, id(10)), // with the cap, evicts old
				newMemory(alice, id(12), "new"),
				tc.bad(stored),
			}
			caps := map[memgate.Kind]int{memgate.KindMessage: 1}
			res, err := s.Remember(t.Context(), batch, caps)
			requireCode(t, "Remember", err, memgate.ECONFLICT, "")
			if res != nil {
				t.Fatalf("Remember returned a result with the error: %+v", res)
			}
			requireUnchanged(t, s, alice, stored) // seen_count and updated_at rolled back
			requireUnchanged(t, s, alice, old)    // not evicted
			requireIDs(t, "List", listIDs(t, s, acmeAll, store.Filter{}), newestFirst(id(1), id(2)))

			// Control: the same call without the bad item goes in whole.
			res = remember(t, s, caps, batch[:3]...)
			if !res.Deduplicated[0] || res.Memories[0].SeenCount != 2 {
				t.Fatalf("control: first item not folded: %v, seen %d", res.Deduplicated, res.Memories[0].SeenCount)
			}
			requireIDs(t, "control: Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{old.ID})
			requireIDs(t, "control: List", listIDs(t, s, acmeAll, store.Filter{}), newestFirst(id(1), id(10), id(12)))
		})
	}
}

func testRememberInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name   string
		mutate func(*memgate.Memory)
		field  string
	}{
		{"empty tenant", func(m *memgate.Memory) { m.Tenant = "" }, "tenant"},
		{"empty principal", func(m *memgate.Memory) { m.Principal = "" }, "principal"},
		{"empty id", func(m *memgate.Memory) { m.ID = "" }, "id"},
		{"not version 1", func(m *memgate.Memory) { m.Version = 2 }, "version"},
		{"negative seen count", func(m *memgate.Memory) { m.SeenCount = -1 }, "seen_count"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			stored := keyed(alice, id(1), "stored", "k")
			mustInsert(t, s, stored)
			good := keyed(alice, id(2), "stored", "k") // would fold
			bad := newMemory(alice, id(3), "bad")
			tc.mutate(bad)
			res, err := s.Remember(t.Context(), []*memgate.Memory{good, bad}, nil)
			requireCode(t, "Remember", err, memgate.EINVALID, tc.field)
			if res != nil {
				t.Fatalf("Remember returned a result with the error: %+v", res)
			}
			requireUnchanged(t, s, alice, stored)
			requireIDs(t, "List", listIDs(t, s, acmeAll, store.Filter{}), []string{id(1)})

			res = remember(t, s, nil, good) // control
			if !res.Deduplicated[0] {
				t.Fatal("control: the good item did not fold")
			}
		})
	}
}

func testRetentionMixedKinds(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	fact := func(id string) *memgate.Memory { return newMemory(alice, id, "fact "+id) }
	batch := []*memgate.Memory{
		fact("f1"), message(alice, "m1"), message(alice, "m2"), fact("f2"),
		message(alice, "m3"), message(alice, "m4"), message(alice, "m5"),
	}
	res := remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 3, memgate.KindSummary: 1}, batch...)
	requireIDs(t, "Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{"m1", "m2"})
	requireGone(t, s, alice, "m1")
	requireGone(t, s, alice, "m2")
	requireUnchanged(t, s, alice, batch[0])
	requireUnchanged(t, s, alice, batch[3])
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst("f1", "f2", "m3", "m4", "m5"))

	// A cap on facts evicts facts only, oldest first.
	res = remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 3, memgate.KindFact: 2}, fact("f3"))
	requireIDs(t, "Evicted by the fact cap", refIDs(t, res.Evicted, "acme", "alice", memgate.KindFact), []string{"f1"})
	requireIDs(t, "List after the fact cap", listIDs(t, s, alice, store.Filter{}), newestFirst("f2", "m3", "m4", "m5", "f3"))
}

func testRetentionStatuses(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	with := func(m *memgate.Memory, st memgate.Status) *memgate.Memory { m.Status = st; return m }
	revoked := with(message(alice, "revoked"), memgate.StatusRevoked)
	superseded := with(message(alice, "superseded"), memgate.StatusSuperseded)
	pending := with(message(alice, "pending"), memgate.StatusPending)
	expired := message(alice, "expired") // active, expired: still counted and evictable
	expired.ExpiresAt = ptr(t0)
	mustInsert(t, s, revoked, superseded, pending, message(alice, "a1"), expired, message(alice, "a2"))

	// Live population: pending, a1, expired, a2 + a3, a4 = 6; cap 3.
	res := remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 3}, message(alice, "a3"), message(alice, "a4"))
	requireIDs(t, "Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{"pending", "a1", "expired"})
	requireUnchanged(t, s, alice, revoked)
	requireUnchanged(t, s, alice, superseded)
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst("revoked", "superseded", "a2", "a3", "a4"))
}

// testRetentionOtherPartitions: a cap counts and evicts one population,
// (tenant, principal, agent, kind): another partition, another agent of the
// same partition and the principal-wide level are never touched by a write
// of agent A, however many A writes. Controls: each population is capped
// when its own memories are written.
func testRetentionOtherPartitions(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	agentB := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "B"}
	var bobs, globex []*memgate.Memory
	for i := range 5 {
		bobs = append(bobs, message(bob, fmt.Sprintf("bob-%d", i)))
		globex = append(globex, message(aliceGlobex, fmt.Sprintf("globex-%d", i)))
	}
	mustInsert(t, s, bobs...)
	mustInsert(t, s, globex...)
	mustInsert(t, s, message(agentB, "alice-b1"), message(agentB, "alice-b2")) // another agent, same partition
	mustInsert(t, s, message(alice, "alice-wide"))                             // the principal-wide level

	agentA := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A"}
	caps := map[memgate.Kind]int{memgate.KindMessage: 2}
	res := remember(t, s, caps, message(agentA, "alice-1"), message(agentA, "alice-2"), message(agentA, "alice-3"))
	requireIDs(t, "Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{"alice-1"})
	requireIDs(t, "agent B and the principal-wide level untouched", listIDs(t, s, agentB, store.Filter{}), newestFirst("alice-b1", "alice-b2", "alice-wide"))
	requireIDs(t, "bob untouched", listIDs(t, s, bob, store.Filter{}), newestFirst(idsOf(bobs)...))
	requireIDs(t, "globex untouched", listIDs(t, s, aliceGlobex, store.Filter{}), newestFirst(idsOf(globex)...))

	// Controls: bob's partition, agent B's population and the
	// principal-wide one are capped when their own memories are written.
	res = remember(t, s, caps, message(bob, "bob-5"))
	requireIDs(t, "bob's Evicted", refIDs(t, res.Evicted, "acme", "bob", memgate.KindMessage), []string{"bob-0", "bob-1", "bob-2", "bob-3"})
	res = remember(t, s, caps, message(agentB, "alice-b3"))
	requireIDs(t, "agent B's Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{"alice-b1"})
	res = remember(t, s, caps, message(alice, "alice-wide2"), message(alice, "alice-wide3"))
	requireIDs(t, "principal-wide Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{"alice-wide"})
	requireIDs(t, "agent A after the others' calls", listIDs(t, s, agentA, store.Filter{}), newestFirst("alice-2", "alice-3", "alice-wide2", "alice-wide3"))
}

// testRetentionSources: a population is one source's, so a flood of one
// writer class evicts only its own oldest. An agent (assistant and tool)
// that writes more tasks and messages than the caps, principal-wide and in
// one batch after another, leaves every user- and system-sourced memory of
// its level as it was, of every kind; its own oldest go, kind by kind and
// source by source (the control). The person's own writes at the cap then
// evict the person's own oldest, not the agent's nor the admin's.
func testRetentionSources(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	from := func(src memgate.Source, m *memgate.Memory) *memgate.Memory { m.Source = src; return m }
	task := func(src memgate.Source, id string) *memgate.Memory {
		m := newMemory(alice, id, "task "+id)
		m.Kind = memgate.KindTask
		return from(src, m)
	}
	// What the person and an admin said, at the level the agent floods.
	said := []*memgate.Memory{
		task(memgate.SourceUser, "user-task-1"), task(memgate.SourceUser, "user-task-2"),
		from(memgate.SourceUser, message(alice, "user-msg")), task(memgate.SourceSystem, "system-task"),
		from(memgate.SourceSystem, message(alice, "system-msg")), from(memgate.SourceUser, newMemory(alice, "user-fact", "user fact")),
	}
	mustInsert(t, s, said...)
	caps := map[memgate.Kind]int{memgate.KindTask: 3, memgate.KindMessage: 2}

	// The flood: two batches, each over the caps, of assistant and tool
	// tasks and messages mixed.
	var flood [][]*memgate.Memory
	for b := range 2 {
		var batch []*memgate.Memory
		for i := range 4 {
			batch = append(batch,
				task(memgate.SourceAssistant, fmt.Sprintf("a-task-%d-%d", b, i)),
				from(memgate.SourceAssistant, message(alice, fmt.Sprintf("a-msg-%d-%d", b, i))),
				task(memgate.SourceTool, fmt.Sprintf("t-task-%d-%d", b, i)))
		}
		flood = append(flood, batch)
	}
	var evicted []store.Ref
	for _, batch := range flood {
		evicted = append(evicted, remember(t, s, caps, batch...).Evicted...)
	}
	for _, m := range said {
		requireUnchanged(t, s, alice, m)
	}
	// Control: the flood's own oldest went, each source and kind down to
	// its cap, and nothing else.
	bySource := map[string][]string{}
	for _, r := range evicted {
		m := byID(flood, r.ID)
		if m == nil {
			t.Fatalf("evicted %+v, which the flood did not write", r)
		}
		if r.Kind != m.Kind || r.Principal != "alice" || r.Tenant != "acme" {
			t.Fatalf("ref %+v for %s %s", r, m.Kind, m.ID)
		}
		k := string(m.Source) + "/" + string(m.Kind)
		bySource[k] = append(bySource[k], r.ID)
	}
	requireIDs(t, "assistant tasks evicted", bySource["assistant/task"], []string{"a-task-0-0", "a-task-0-1", "a-task-0-2", "a-task-0-3", "a-task-1-0"})
	requireIDs(t, "tool tasks evicted", bySource["tool/task"], []string{"t-task-0-0", "t-task-0-1", "t-task-0-2", "t-task-0-3", "t-task-1-0"})
	requireIDs(t, "assistant messages evicted", bySource["assistant/message"], []string{"a-msg-0-0", "a-msg-0-1", "a-msg-0-2", "a-msg-0-3", "a-msg-1-0", "a-msg-1-1"})
	if len(bySource) != 3 {
		t.Fatalf("evicted from %d populations, want 3: %v", len(bySource), bySource)
	}
	requireStored(t, s, alice, "a-task-1-1", "a-task-1-2", "a-task-1-3", "t-task-1-1", "t-task-1-2", "t-task-1-3", "a-msg-1-2", "a-msg-1-3")

	// The person's own writes at the cap evict the person's own oldest.
	res := remember(t, s, caps, task(memgate.SourceUser, "user-task-3"), task(memgate.SourceUser, "user-task-4"))
	requireIDs(t, "user tasks evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindTask), []string{"user-task-1"})
	requireUnchanged(t, s, alice, said[1])
	requireUnchanged(t, s, alice, said[3])
	requireStored(t, s, alice, "a-task-1-1", "a-task-1-2", "a-task-1-3", "t-task-1-1")
}

// byID is the memory of the batches with id, or nil.
func byID(batches [][]*memgate.Memory, id string) *memgate.Memory {
	for _, b := range batches {
		for _, m := range b {
			if m.ID == id {
				return m
			}
		}
	}
	return nil
}

func testRetentionWithinCall(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var batch []*memgate.Memory
	for i := range 5 {
		batch = append(batch, message(alice, id(i+1)))
	}
	res := remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 2}, batch...)
	requireIDs(t, "Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{id(1), id(2), id(3)})
	// Every input is still accounted for in Memories.
	requireIDs(t, "Memories", idsOf(res.Memories), idsOf(batch))
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst(id(4), id(5)))
}

func testRetentionNoCap(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, message(alice, id(1)), message(alice, id(2)))
	for i, caps := range []map[memgate.Kind]int{
		nil,
		{},
		{memgate.KindMessage: 0},
		{memgate.KindMessage: -1},
		{memgate.KindFact: 1}, // a cap on another kind
	} {
		res := remember(t, s, caps, message(alice, id(10+i)))
		if len(res.Evicted) != 0 {
			t.Fatalf("caps %v: Evicted %v", caps, res.Evicted)
		}
	}
	if n := len(listIDs(t, s, alice, store.Filter{})); n != 7 {
		t.Fatalf("%d memories, want 7", n)
	}
	// Control: a positive cap does evict.
	res := remember(t, s, map[memgate.Kind]int{memgate.KindMessage: 7}, message(alice, id(20)))
	requireIDs(t, "control: Evicted", refIDs(t, res.Evicted, "acme", "alice", memgate.KindMessage), []string{id(1)})
}

// testFindDuplicatesInput: FindDuplicates answers per memory, in order,
// with "" for nil and keyless memories, and refuses an invalid owner.
func testFindDuplicatesInput(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, keyed(alice, id(1), "alice's", "k"), keyed(bob, id(2), "bob's", "k"))
	got, err := s.FindDuplicates(t.Context(), []*memgate.Memory{
		keyed(bob, id(10), "x", "k"),
		nil,
		keyed(memgate.Scope{Tenant: "acme", Principal: "carol"}, id(11), "x", "k"),
		keyed(aliceGlobex, id(12), "x", "k"),
		keyed(alice, id(13), "x", "k"),
	})
	if err != nil || !slices.Equal(got, []string{id(2), "", "", "", id(1)}) {
		t.Fatalf("FindDuplicates: %q, %v", got, err)
	}
	if got, err := s.FindDuplicates(t.Context(), nil); err != nil || len(got) != 0 {
		t.Fatalf("FindDuplicates of nothing: %q, %v", got, err)
	}
	bad := keyed(alice, id(14), "x", "k")
	bad.Tenant = ""
	_, err = s.FindDuplicates(t.Context(), []*memgate.Memory{keyed(alice, id(15), "x", "k"), bad})
	requireCode(t, "FindDuplicates with an empty tenant", err, memgate.EINVALID, "tenant")
}

// testRememberConcurrent runs many Remember calls at once, each with the
// same keyed fact and a new message under a cap: the dedup decision and the
// cap are taken inside each call's transaction, so exactly one fact row
// exists, seen once per call, and the messages never exceed the cap.
func testRememberConcurrent(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const workers, calls, limit = 6, 5, 4
	caps := map[memgate.Kind]int{memgate.KindMessage: limit}
	var inserted, evicted atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Go(func() {
			for c := range calls {
				n := fmt.Sprintf("%d-%d", w, c)
				res, err := s.Remember(t.Context(), []*memgate.Memory{
					keyed(alice, "fact-"+n, "the same fact", "sig-v1:same"),
					message(alice, "msg-"+n),
				}, caps)
				if err != nil {
					errs <- fmt.Errorf("Remember %s: %w", n, err)
					continue
				}
				if !res.Deduplicated[0] {
					inserted.Add(1)
				}
				evicted.Add(int64(len(res.Evicted)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if inserted.Load() != 1 {
		t.Fatalf("%d calls inserted the fact, want exactly 1", inserted.Load())
	}
	facts := listAll(t, s, alice, store.Filter{Kinds: []memgate.Kind{memgate.KindFact}})
	if len(facts) != 1 || facts[0].SeenCount != workers*calls {
		t.Fatalf("facts %v: want 1 row seen %d times", idsOf(facts), workers*calls)
	}
	msgs := listIDs(t, s, alice, store.Filter{Kinds: []memgate.Kind{memgate.KindMessage}})
	if len(msgs) != limit || evicted.Load() != workers*calls-limit {
		t.Fatalf("%d messages left and %d evicted, want %d and %d", len(msgs), evicted.Load(), limit, workers*calls-limit)
	}
}
