package index

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memgate/memgate"
)

// A partition starts at the version its loader reports; Apply moves it on
// only from the version it is at, and searches report it.
func TestVersionAndApply(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 5, 8)
	x, _ := New(Config{}, s.load)

	if v, _, ok := x.Resident("t", "p"); ok || v != 0 {
		t.Fatalf("Version before a load: %d, %v", v, ok)
	}
	if ok, err := x.Apply("t", "p", 0, 9, []Entry{entryN(7, 8)}, nil); ok || err != nil {
		t.Fatalf("Apply to a partition not resident: %v, %v", ok, err)
	}
	res := search(t, x, "t", "p")
	if res.Version != 5 || len(res.Candidates) != 5 {
		t.Fatalf("first search: version %d, %d candidates; want 5 and 5", res.Version, len(res.Candidates))
	}
	if v, _, ok := x.Resident("t", "p"); !ok || v != 5 {
		t.Fatalf("Version after the load: %d, %v", v, ok)
	}

	// From the wrong version: nothing changes.
	for _, from := range []int64{4, 6} {
		if ok, err := x.Apply("t", "p", from, 9, []Entry{entryN(7, 8)}, []string{"e0001"}); ok || err != nil {
			t.Fatalf("Apply from %d at version 5: %v, %v", from, ok, err)
		}
	}
	if got := ids(search(t, x, "t", "p")); !slices.Equal(got, []string{"e0000", "e0001", "e0002", "e0003", "e0004"}) {
		t.Fatalf("after refused applies: %v", got)
	}

	// From the right version: removes, upserts, version.
	changed := entryN(2, 8)
	changed.Terms = []string{"omega"}
	ok, err := x.Apply("t", "p", 5, 9, []Entry{entryN(7, 8), changed}, []string{"e0001", "e0404"})
	if !ok || err != nil {
		t.Fatalf("Apply from 5: %v, %v", ok, err)
	}
	res = search(t, x, "t", "p")
	if got := ids(res); res.Version != 9 || !slices.Equal(got, []string{"e0000", "e0002", "e0003", "e0004", "e0007"}) {
		t.Fatalf("after Apply: version %d, %v", res.Version, got)
	}
	text, err := x.Search(context.Background(), "t", "p", Query{Terms: []string{"omega"}, K: 10, Filter: Filter{Now: now}})
	if err != nil || len(text.Candidates) != 1 || text.Candidates[0].ID != "e0002" {
		t.Fatalf("search for the upserted terms: %+v, %v", text, err)
	}
	if ok, err := x.Apply("t", "p", 9, 9, nil, nil); !ok || err != nil {
		t.Fatalf("empty Apply at the version: %v, %v", ok, err)
	}
	if _, err := x.Apply("t", "p", 9, 8, nil, nil); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Apply backwards: %v", err)
	}
	checkAccounting(t, x)

	// Dropped: not resident, and the next load starts at the store's version.
	x.Drop("t", "p")
	if _, _, ok := x.Resident("t", "p"); ok {
		t.Fatal("Version after Drop: resident")
	}
	s.put("t", "p", entryN(5, 8))
	if res := search(t, x, "t", "p"); res.Version != 6 {
		t.Fatalf("reloaded at version %d, want 6", res.Version)
	}
}

// An invalid entry fails Apply before anything changes; a vector of another
// dimension drops the partition, so the next search reloads it.
func TestApplyRefusals(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 3, 8)
	x, _ := New(Config{}, s.load)
	search(t, x, "t", "p")

	bad := entryN(9, 8)
	bad.Vector = []float32{0, 0, 0, 0, 0, 0, 0, 0}
	if ok, err := x.Apply("t", "p", 3, 4, []Entry{entryN(8, 8), bad}, []string{"e0000"}); ok || memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Apply with an invalid entry: %v, %v", ok, err)
	}
	if v, _, _ := x.Resident("t", "p"); v != 3 {
		t.Fatalf("version after a refused Apply: %d", v)
	}
	if got := ids(search(t, x, "t", "p")); !slices.Equal(got, []string{"e0000", "e0001", "e0002"}) {
		t.Fatalf("after a refused Apply: %v", got)
	}

	loads := s.loads("t", "p")
	if ok, err := x.Apply("t", "p", 3, 4, []Entry{entryN(8, 4)}, nil); !ok || memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("Apply with a vector of another dimension: %v, %v", ok, err)
	}
	if _, _, ok := x.Resident("t", "p"); ok {
		t.Fatal("partition still resident after a refused upsert")
	}
	search(t, x, "t", "p")
	if s.loads("t", "p") != loads+1 {
		t.Fatal("the next search did not reload")
	}
	checkAccounting(t, x)
}

// Of concurrent Apply calls from one version, exactly one applies; searches
// running alongside see each batch whole or not at all.
func TestApplyConcurrent(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 4, 8)
	x, _ := New(Config{}, s.load)
	search(t, x, "t", "p")

	var won atomic.Int32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// Each batch adds two entries and removes none: a search sees an even
	// number of entries beyond the first four, never a half batch.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := x.Search(context.Background(), "t", "p", Query{Terms: []string{"alpha"}, K: 100, Filter: Filter{Now: now}})
			if err != nil {
				t.Error(err)
				return
			}
			if n := len(res.Candidates); (n-4)%2 != 0 {
				t.Errorf("a search saw %d entries: half a batch", n)
				return
			}
		}
	})
	for round := range 20 {
		from, _, _ := x.Resident("t", "p")
		var inner sync.WaitGroup
		for w := range 4 {
			inner.Go(func() {
				i := 100 + round*10 + w*2
				ok, err := x.Apply("t", "p", from, from+1, []Entry{entryN(i, 8), entryN(i+1, 8)}, nil)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		inner.Wait()
		if got := won.Swap(0); got != 1 {
			t.Fatalf("round %d: %d applies succeeded from one version", round, got)
		}
	}
	close(stop)
	wg.Wait()
	if v, _, _ := x.Resident("t", "p"); v != 24 {
		t.Fatalf("version %d after 20 rounds from 4", v)
	}
	checkAccounting(t, x)
}
