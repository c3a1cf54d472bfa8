package index

import (
	"fmt"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
)

// holdsAll is Holds of terms with their hashes.
func holdsAll(p *Partition, terms []string) []bool {
	hs := make([]uint64, len(terms))
	for i, t := range terms {
		hs[i] = analysis.TermHash(t)
	}
	return p.Holds(terms, hs)
}

// TestHoldsIsTheTermMap holds Holds to the term map (DF > 0) through
// growth past the filter's capacity, removals that leave stale bits, and
// the rebuild they trigger, on held terms and absent ones; and checks
// that the filter answers most absent terms itself, so that it is asked
// at all (checkInvariants checks it has no false negatives).
func TestHoldsIsTheTermMap(t *testing.T) {
	t.Parallel()
	p := NewPartition(Config{})
	term := func(i int) string { return fmt.Sprintf("t%d", i) }
	var probe []string
	for i := range 6000 {
		probe = append(probe, term(i))
	}
	check := func(stage string) {
		t.Helper()
		checkInvariants(t, p)
		got := holdsAll(p, probe)
		held, fp, absent := 0, 0, 0
		for i, w := range probe {
			if want := p.DF(w) > 0; got[i] != want {
				t.Fatalf("%s: Holds(%s) = %v, DF %d", stage, w, got[i], p.DF(w))
			}
			if got[i] {
				held++
				continue
			}
			absent++
			if p.tfilter.mayHold(analysis.TermHash(w)) {
				fp++ // answered by the map
			}
		}
		if held == 0 || absent == 0 {
			t.Fatalf("%s: %d held, %d absent: not a useful probe", stage, held, absent)
		}
		if fp*10 > absent {
			t.Fatalf("%s: the filter let %d of %d absent terms through", stage, fp, absent)
		}
	}
	// 3,000 entries of two terms each, 3,000 distinct terms: the filter
	// is rebuilt larger as they come.
	for i := range 3000 {
		if err := p.Upsert(Entry{ID: fmt.Sprintf("m%d", i), Terms: []string{term(i), term(i + 1)}, Status: memgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	check("grown")
	// Most entries removed: their terms leave the map, stale bits stay
	// until the removed outnumber the held, then the filter is rebuilt.
	built := len(p.tfilter.words)
	for i := range 2800 {
		p.Remove(fmt.Sprintf("m%d", i))
	}
	check("after removals")
	if len(p.tfilter.words) >= built || p.tfilter.stale >= len(p.terms) {
		t.Fatalf("after removing most terms: %d words (was %d), %d stale of %d terms", len(p.tfilter.words), built, p.tfilter.stale, len(p.terms))
	}
	// Terms come back.
	for i := range 500 {
		if err := p.Upsert(Entry{ID: fmt.Sprintf("n%d", i), Terms: []string{term(2 * i)}, Status: memgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	check("after new terms")
}

// TestHoldsNeedsAHashPerTerm: the hashes must match the terms one to one,
// on the Index (invalid_argument, the partition left unread) and on a
// Partition (a panic); the control, with one hash a term, answers.
func TestHoldsNeedsAHashPerTerm(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 5, 8)
	x, err := New(Config{}, s.load)
	if err != nil {
		t.Fatal(err)
	}
	terms := []string{"alpha", "absent"}
	if _, err := x.Holds(t.Context(), "t", "p", terms, []uint64{analysis.TermHash("alpha")}); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("one hash for two terms: %v, want invalid_argument", err)
	}
	if n := s.loads("t", "p"); n != 0 {
		t.Fatalf("a refused Holds loaded the partition %d times", n)
	}
	held, err := x.Holds(t.Context(), "t", "p", terms, []uint64{analysis.TermHash("alpha"), analysis.TermHash("absent")})
	if err != nil || len(held) != 2 || !held[0] || held[1] {
		t.Fatalf("control: %v, %v", held, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Partition.Holds with a hash missing did not panic")
		}
	}()
	NewPartition(Config{}).Holds(terms, nil)
}
