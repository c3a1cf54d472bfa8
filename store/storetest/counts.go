package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var countsTests = []test{
	{"PerPrincipalKindStatus", testCounts},
}

var concurrencyTests = []test{
	{"ParallelInserts", testParallelInserts},
}

func testCounts(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	n := 0
	add := func(sc memgate.Scope, kind memgate.Kind, st memgate.Status, expires *time.Time) {
		n++
		m := newMemory(sc, id(n), "counted")
		m.Kind, m.Status, m.ExpiresAt = kind, st, expires
		mustInsert(t, s, m)
	}
	past, future := ptr(now.Add(-time.Hour)), ptr(now.Add(time.Hour))
	agentA := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A"}
	agentB := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "B"}

	add(alice, memgate.KindFact, memgate.StatusActive, nil)
	add(agentA, memgate.KindFact, memgate.StatusActive, future)
	add(agentB, memgate.KindFact, memgate.StatusActive, nil)
	add(alice, memgate.KindFact, memgate.StatusActive, past)        // expired at now
	add(alice, memgate.KindFact, memgate.StatusActive, ptr(now))    // expired exactly at now
	add(alice, memgate.KindFact, memgate.StatusSuperseded, nil)     //
	add(alice, memgate.KindPreference, memgate.StatusRevoked, past) // revoked stays revoked
	add(alice, memgate.KindMessage, memgate.StatusPending, past)    // pending stays pending
	add(bob, memgate.KindFact, memgate.StatusActive, nil)
	add(bob, memgate.KindTask, memgate.StatusActive, past)
	add(aliceGlobex, memgate.KindFact, memgate.StatusActive, nil)
	add(aliceGlobex, memgate.KindFact, memgate.StatusActive, past)

	type counts = map[string]int64
	cases := []struct {
		name string
		sc   memgate.Scope
		at   time.Time
		want counts
	}{
		{"principal at now", alice, now, counts{
			"alice/fact/active": 3, "alice/fact/expired": 2, "alice/fact/superseded": 1,
			"alice/message/pending": 1, "alice/preference/revoked": 1,
		}},
		{"principal, zero now: nothing expired", alice, time.Time{}, counts{
			"alice/fact/active": 5, "alice/fact/superseded": 1,
			"alice/message/pending": 1, "alice/preference/revoked": 1,
		}},
		{"principal, before anything expired", alice, now.Add(-2 * time.Hour), counts{
			"alice/fact/active": 5, "alice/fact/superseded": 1,
			"alice/message/pending": 1, "alice/preference/revoked": 1,
		}},
		{"principal narrowed to agent A", agentA, now, counts{
			"alice/fact/active": 2, "alice/fact/expired": 2, "alice/fact/superseded": 1,
			"alice/message/pending": 1, "alice/preference/revoked": 1,
		}},
		{"all principals of acme", acmeAll, now, counts{
			"alice/fact/active": 3, "alice/fact/expired": 2, "alice/fact/superseded": 1,
			"alice/message/pending": 1, "alice/preference/revoked": 1,
			"bob/fact/active": 1, "bob/task/expired": 1,
		}},
		{"same principal name in globex", aliceGlobex, now, counts{"alice/fact/active": 1, "alice/fact/expired": 1}},
		{"unknown principal", memgate.Scope{Tenant: "acme", Principal: "carol"}, now, counts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := countsOf(t, s, tc.sc, tc.at); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Counts: got %v, want %v", got, tc.want)
			}
		})
	}
}

// testParallelInserts inserts from several goroutines while others read;
// every insert must land exactly once.
func testParallelInserts(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const writers, perWriter = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter+100)
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				m := newMemory(alice, fmt.Sprintf("w%d-%03d", w, i), "parallel")
				if i%3 == 0 {
					m.Agent = fmt.Sprintf("agent-%d", w)
				}
				if err := s.Insert(t.Context(), []*memgate.Memory{m}); err != nil {
					errs <- fmt.Errorf("insert %s: %w", m.ID, err)
				}
			}
		})
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := s.List(t.Context(), alice, store.Filter{Limit: 10}); err != nil {
					errs <- fmt.Errorf("list: %w", err)
					return
				}
				if _, err := s.Counts(t.Context(), alice, now); err != nil {
					errs <- fmt.Errorf("counts: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	got := listIDs(t, s, alice, store.Filter{Limit: 7})
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("List returned %s twice", id)
		}
		seen[id] = true
	}
	for w := range writers {
		for i := range perWriter {
			if id := fmt.Sprintf("w%d-%03d", w, i); !seen[id] {
				t.Errorf("%s is missing", id)
			}
		}
	}
	if len(got) != writers*perWriter {
		t.Fatalf("List returned %d memories, want %d", len(got), writers*perWriter)
	}
}
