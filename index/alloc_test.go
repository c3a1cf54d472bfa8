//go:build !race

package index

import (
	"slices"
	"testing"
)

// The race detector allocates on its own, so allocation counts are checked
// without it: this file is left out of -race builds (scripts/test runs it
// in a pass of its own) rather than skipping there.

// TestSearchAllocations: a search as the engine asks it (both channels,
// K 50, neighbours) allocates what it returns and nothing else: the
// Result, its term statistics, its candidates (once: their number is
// known before they are made), their term matches, and the compiled
// filter. Its working memory is the pooled scratch's.
func TestSearchAllocations(t *testing.T) {
	c := corpus(1000)
	p := buildPartition(t, Config{}, c.entries)
	qs := slices.Clone(c.queries[:20])
	for i := range qs {
		qs[i].K = 50
		qs[i].Neighbors = Neighbors{Prev: 2, Next: 1}
	}
	for _, q := range qs { // warm the scratch pool
		if _, err := p.Search(q); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		res, err := p.Search(qs[i%len(qs)])
		if err != nil || len(res.Candidates) <= 100 {
			t.Fatalf("%v, %d candidates (neighbours expected)", err, len(res.Candidates))
		}
		i++
	})
	if allocs > 5 {
		t.Fatalf("%.1f allocations per search, want at most 5", allocs)
	}
}
