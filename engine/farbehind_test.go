package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/sqlite"
)

// TestFarBehindReloads: a resident partition more changes behind than one
// page and than the entries it holds is loaded anew instead of caught up
// (farBehind); one a page or less behind, or fewer changes behind than it
// holds, is caught up. Either way the next recall finds the newest memory.
// Each step remembers through another engine over the same file, as a
// replica would (the engine that writes only removes from its index, so
// this one's partition falls behind by every change). The loads are the
// index's count of loader calls.
func TestFarBehindReloads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	open := func() *Engine {
		db, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e, err := New(Config{Store: db, Embedder: builtin.New()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	writer, reader := open(), open()
	s := memgate.Scope{Tenant: "t", Principal: "alice"}
	written := 0
	remember := func(n int) string {
		t.Helper()
		var last string
		for c := range slices.Chunk(make([]struct{}, n), DefaultMaxBatch) {
			rs := make([]memgate.RememberRequest, len(c))
			for i := range rs {
				rs[i] = memgate.RememberRequest{Memory: memgate.Memory{Tenant: s.Tenant, Principal: s.Principal, Kind: memgate.KindFact, Source: memgate.SourceUser,
					Content: fmt.Sprintf("Routine note %d about the weekly grocery list.", written)}}
				written++
			}
			out, err := writer.RememberBatch(t.Context(), rs)
			if err != nil {
				t.Fatal(err)
			}
			last = out[len(out)-1].ID
		}
		return last
	}
	recall := func(step string, want string) {
		t.Helper()
		res, err := reader.Recall(t.Context(), RecallRequest{Scope: s, Query: fmt.Sprintf("Routine note %d about the weekly grocery list", written-1), K: 5, MinScore: new(float64)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Results, func(h memgate.RecallHit) bool { return h.Memory.ID == want }) {
			t.Fatalf("%s: the newest memory is not recalled", step)
		}
	}
	loads := func() int64 { return reader.rec.idx.Stats().Loads }

	recall("first", remember(1100))
	if loads() != 1 {
		t.Fatalf("%d loads after the first recall, want 1", loads())
	}
	for _, c := range []struct {
		name   string
		n      int  // remembered, so changes behind (entries before: 1100, 1300, 2400)
		reload bool // loaded anew
	}{
		{"a page behind or less", 200, false},
		{"more than a page behind, less than it holds", 1100, false},
		{"more than a page behind and more than it holds", 2500, true},
	} {
		before := loads()
		recall(c.name, remember(c.n))
		if got := loads() - before; got != map[bool]int64{false: 0, true: 1}[c.reload] {
			t.Fatalf("%s: %d loads, want reload %v", c.name, got, c.reload)
		}
	}
}
