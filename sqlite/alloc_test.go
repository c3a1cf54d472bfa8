//go:build !race

package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// The race detector allocates on its own, so allocation counts are checked
// without it (as index/alloc_test.go does).

// TestLoadIndexAllocations: a cold load allocates each row's id and
// nothing else a row (the filter fields are shared, the vector and terms
// are lent): 1,000 rows in about 1,000 allocations. Scan's destinations
// were a new slice for every row, a second allocation a row, before they
// were made once a load.
func TestLoadIndexAllocations(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 1000
	ms := make([]*memgate.Memory, n)
	for i := range ms {
		ms[i] = benchMemory(i)
	}
	if _, err := db.Remember(t.Context(), ms, nil); err != nil {
		t.Fatal(err)
	}
	model := store.EmbeddingModel{Provider: "builtin", Model: "bench", Dim: 384}
	rows, vectors, terms := 0, 0, 0
	load := func() {
		rows, vectors, terms = 0, 0, 0
		err := db.LoadIndex(t.Context(), "acme", "alice", model, func(r *store.IndexRow) error {
			rows++
			if len(r.Vector) == model.Dim {
				vectors++
			}
			if len(r.Terms) > 0 {
				terms++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	load() // the stream connection and its statement
	allocs := testing.AllocsPerRun(5, load)
	if rows != n || vectors != n || terms != n { // the control: every row, whole
		t.Fatalf("%d rows, %d with the vector, %d with terms; want %d of each", rows, vectors, terms, n)
	}
	t.Logf("%.0f allocations for %d rows", allocs, n)
	if perRow := allocs / n; perRow > 1.1 {
		t.Fatalf("%.0f allocations for %d rows (%.2f a row), want at most 1.1 a row", allocs, n, perRow)
	}
}
