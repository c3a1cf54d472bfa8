package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var insertTests = []test{
	{"Single", testInsertSingle},
	{"RoundTrip", testRoundTrip},
	{"RoundTripReadPaths", testRoundTripReadPaths},
	{"Batch", testInsertBatch},
	{"BatchAtomic", testInsertBatchAtomic},
	{"IDsUniquePerTenant", testIDsPerTenant},
	{"GetWhateverStatusOrExpiry", testGetWhateverStatus},
	{"InvalidOwner", testInsertInvalidOwner},
	{"ContextCancelled", testContextCancelled},
}

func testInsertSingle(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := newMemory(alice, id(1), "likes green tea")
	mustInsert(t, s, m)
	requireEqualMemory(t, "Get", m, mustGet(t, s, alice, m.ID))
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), []string{m.ID})
}

// testRoundTrip checks that every field comes back exactly as stored,
// through both Get and List (backends often decode rows in two places).
func testRoundTrip(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	kolkata := time.FixedZone("IST", 5*3600+1800)
	cases := []struct {
		name string
		m    *memgate.Memory
		want func(m *memgate.Memory) // what reads return, when not m itself
	}{
		{"every field set", fullMemory(t, alice, id(1)), nil},
		{"optional fields empty", newMemory(alice, id(2), "minimal"), nil},
		{"empty metadata object", func() *memgate.Memory {
			m := newMemory(alice, id(3), "empty metadata")
			m.Metadata = map[string]any{}
			return m
		}(), nil},
		{"times given in another zone", func() *memgate.Memory {
			m := newMemory(alice, id(4), "zoned times")
			m.CreatedAt = t0.In(kolkata)
			m.UpdatedAt = t1.In(kolkata)
			m.ExpiresAt = ptr(t2.In(kolkata))
			return m
		}(), nil},
		{"optional times nil but valid_until set", func() *memgate.Memory {
			m := newMemory(alice, id(5), "half-open validity")
			m.ValidUntil = ptr(t2)
			return m
		}(), nil},
		{"superseded with both links", func() *memgate.Memory {
			m := newMemory(alice, id(6), "older fact")
			m.Status = memgate.StatusSuperseded
			m.Supersedes, m.SupersededBy = "m-000", "m-007"
			m.StatusReason = "replaced"
			return m
		}(), nil},
		{"seen count left at zero is stored as one", func() *memgate.Memory {
			m := newMemory(alice, id(7), "never counted")
			m.SeenCount = 0
			return m
		}(), func(m *memgate.Memory) { m.SeenCount = 1 }},
		{"empty flags read back as none", func() *memgate.Memory {
			m := newMemory(alice, id(8), "no findings")
			m.Flags = []string{}
			return m
		}(), func(m *memgate.Memory) { m.Flags = nil }},
		{"counters, flags and key without anything else", func() *memgate.Memory {
			m := newMemory(alice, id(9), "counted")
			m.DedupKey, m.SeenCount, m.Flags = "k", 1<<40, []string{"a"}
			m.Feedback = memgate.Feedback{Count: 5, Sum: -4.75}
			return m
		}(), nil},
	}
	for _, tc := range cases {
		mustInsert(t, s, tc.m)
	}
	listed := map[string]*memgate.Memory{}
	for _, m := range listAll(t, s, alice, store.Filter{}) {
		listed[m.ID] = m
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.m.Clone()
			if tc.want != nil {
				tc.want(want)
			}
			got := mustGet(t, s, alice, tc.m.ID)
			requireEqualMemory(t, "Get", want, got)
			requireEqualMemory(t, "List", want, listed[tc.m.ID])
			if want.Flags == nil && got.Flags != nil {
				t.Fatalf("Get: flags %q, want nil (no findings)", got.Flags)
			}
		})
	}
}

// testRoundTripReadPaths checks the fields through the recall reads, which
// decode rows in their own queries.
func testRoundTripReadPaths(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := fullMemory(t, alice, id(1))
	m.Status, m.SupersededBy = memgate.StatusActive, ""
	m.Key = "seat preference"
	plain := newMemory(alice, id(2), "plain")
	mustInsert(t, s, m, plain)

	loaded, err := s.LoadPartition(t.Context(), "acme", "alice")
	if err != nil || len(loaded) != 2 {
		t.Fatalf("LoadPartition: %d memories, %v", len(loaded), err)
	}
	g := store.ReadGate{Now: now, AsOf: now, IncludeRestricted: true}
	fetched, err := s.Fetch(t.Context(), alice, []string{m.ID, plain.ID}, g)
	if err != nil || len(fetched) != 2 {
		t.Fatalf("Fetch: %d memories, %v", len(fetched), err)
	}
	for _, got := range append(loaded, fetched...) {
		want := plain
		if got.ID == m.ID {
			want = m
		}
		requireEqualMemory(t, "LoadPartition/Fetch "+got.ID, want, got)
	}
}

func testInsertBatch(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	if err := s.Insert(t.Context(), nil); err != nil {
		t.Fatalf("Insert of an empty batch: %v", err)
	}
	requireIDs(t, "List after empty batch", listIDs(t, s, alice, store.Filter{}), []string{})

	ms := newMemories(alice, 1, 3)
	mustInsert(t, s, ms...)
	for _, m := range ms {
		requireEqualMemory(t, "Get "+m.ID, m, mustGet(t, s, alice, m.ID))
	}
	// Newest first is insertion order reversed, within a batch too.
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst(id(1), id(2), id(3)))
}

func testInsertBatchAtomic(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name  string
		third func(stored *memgate.Memory) *memgate.Memory
	}{
		{"third item reuses a stored id", func(stored *memgate.Memory) *memgate.Memory {
			return newMemory(alice, stored.ID, "a different memory with a stored id")
		}},
		{"third item repeats the first item's id", func(*memgate.Memory) *memgate.Memory {
			return newMemory(alice, id(10), "same id as the first item of the batch")
		}},
		{"third item reuses a stored id from another principal of the tenant", func(stored *memgate.Memory) *memgate.Memory {
			return newMemory(bob, stored.ID, "bob's memory with alice's id")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			stored := newMemory(alice, id(1), "stored before the batch")
			mustInsert(t, s, stored)

			batch := []*memgate.Memory{
				newMemory(alice, id(10), "first"),
				newMemory(alice, id(11), "second"),
				tc.third(stored),
				newMemory(alice, id(12), "fourth"),
			}
			err := s.Insert(t.Context(), batch)
			requireCode(t, "Insert of the batch", err, memgate.ECONFLICT, "")

			for _, m := range []*memgate.Memory{batch[0], batch[1], batch[3]} {
				requireGone(t, s, alice, m.ID)
			}
			requireUnchanged(t, s, alice, stored)
			requireIDs(t, "List alice", listIDs(t, s, alice, store.Filter{}), []string{stored.ID})
			requireIDs(t, "List bob", listIDs(t, s, bob, store.Filter{}), []string{})

			// Control: the same batch without the bad item goes in whole.
			mustInsert(t, s, batch[0], batch[1], batch[3])
			requireIDs(t, "List after the good batch", listIDs(t, s, alice, store.Filter{}),
				newestFirst(stored.ID, id(10), id(11), id(12)))
		})
	}
}

func testIDsPerTenant(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	acme := newMemory(alice, id(1), "acme's memory")
	globex := newMemory(aliceGlobex, id(1), "globex's memory")
	mustInsert(t, s, acme)
	mustInsert(t, s, globex) // same id, other tenant: fine
	requireEqualMemory(t, "Get in acme", acme, mustGet(t, s, alice, id(1)))
	requireEqualMemory(t, "Get in globex", globex, mustGet(t, s, aliceGlobex, id(1)))

	cases := []struct {
		name string
		m    *memgate.Memory
	}{
		{"same tenant, same principal", newMemory(alice, id(1), "duplicate")},
		{"same tenant, other principal", newMemory(bob, id(1), "duplicate for bob")},
		{"same tenant, other agent", newMemory(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "a2"}, id(1), "dup")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireCode(t, "Insert", s.Insert(t.Context(), []*memgate.Memory{tc.m}), memgate.ECONFLICT, "")
			requireUnchanged(t, s, alice, acme)
			requireUnchanged(t, s, aliceGlobex, globex)
		})
	}
	requireGone(t, s, bob, id(1))
}

func testGetWhateverStatus(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var ms []*memgate.Memory
	for i, st := range []memgate.Status{memgate.StatusActive, memgate.StatusPending, memgate.StatusRevoked, memgate.StatusSuperseded} {
		m := newMemory(alice, id(i+1), "status "+string(st))
		m.Status = st
		m.ExpiresAt = ptr(t0.Add(-time.Hour)) // long expired
		ms = append(ms, m)
	}
	mustInsert(t, s, ms...)
	for _, m := range ms {
		requireEqualMemory(t, "Get "+string(m.Status), m, mustGet(t, s, alice, m.ID))
	}
}

func testInsertInvalidOwner(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name   string
		mutate func(*memgate.Memory)
	}{
		{"empty tenant", func(m *memgate.Memory) { m.Tenant = "" }},
		{"empty principal", func(m *memgate.Memory) { m.Principal = "" }},
		{"empty id", func(m *memgate.Memory) { m.ID = "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			good := newMemory(alice, id(1), "good")
			bad := newMemory(alice, id(2), "bad")
			tc.mutate(bad)
			requireCode(t, "Insert", s.Insert(t.Context(), []*memgate.Memory{good, bad}), memgate.EINVALID, "")
			requireGone(t, s, alice, good.ID)
			requireIDs(t, "List", listIDs(t, s, acmeAll, store.Filter{}), []string{})

			mustInsert(t, s, good) // control
			requireUnchanged(t, s, alice, good)
		})
	}
}

func testContextCancelled(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	stored := newMemory(alice, id(1), "stored")
	mustInsert(t, s, stored)
	ctx := cancelled(t)

	cases := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Insert", func(ctx context.Context) error {
			return s.Insert(ctx, []*memgate.Memory{newMemory(alice, id(2), "not while cancelled")})
		}},
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, alice, stored.ID); return err }},
		{"List", func(ctx context.Context) error { _, err := s.List(ctx, alice, store.Filter{}); return err }},
		{"AddFeedback", func(ctx context.Context) error { _, err := s.AddFeedback(ctx, alice, stored.ID, 1); return err }},
		{"Delete", func(ctx context.Context) error { return s.Delete(ctx, alice, stored.ID) }},
		{"Counts", func(ctx context.Context) error { _, err := s.Counts(ctx, alice, now); return err }},
		{"Remember", func(ctx context.Context) error {
			_, err := s.Remember(ctx, []*memgate.Memory{newMemory(alice, id(3), "not while cancelled")}, nil)
			return err
		}},
		{"DeleteExpired", func(ctx context.Context) error { _, err := s.DeleteExpired(ctx, now, 10); return err }},
		{"AppendAudit", func(ctx context.Context) error {
			return s.AppendAudit(ctx, []store.AuditEvent{{Tenant: "acme", Actor: "cli", Action: "remember", At: t0}})
		}},
		{"ListAudit", func(ctx context.Context) error { _, err := s.ListAudit(ctx, "acme", store.AuditFilter{}); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("%s with a cancelled context: %v, want an error matching context.Canceled", tc.name, err)
			}
		})
	}
	requireGone(t, s, alice, id(2))
	requireGone(t, s, alice, id(3))
	requireUnchanged(t, s, alice, stored)
	if p, err := s.ListAudit(t.Context(), "acme", store.AuditFilter{}); err != nil || len(p.Events) != 0 {
		t.Fatalf("audit after a cancelled append: %v", err)
	}
	// Control: the same calls succeed with a live context.
	for _, tc := range cases {
		if err := tc.call(t.Context()); err != nil {
			t.Fatalf("%s with a live context: %v", tc.name, err)
		}
	}
}
