package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/sqlite"
)

// Recall latency through the engine over SQLite, with the built-in
// embedder, on a partition of 2,000 memories already loaded:
//
//	go test ./engine -run '^$' -bench . -count 5
//
// BenchmarkRecall recalls only; BenchmarkRememberThenRecall is an agent's
// loop (store what was said, recall for the next turn), so every recall
// follows a write to the partition it searches.
func BenchmarkRecall(b *testing.B)             { benchRecall(b, false) }
func BenchmarkRememberThenRecall(b *testing.B) { benchRecall(b, true) }

func benchRecall(b *testing.B, write bool) {
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	sc := memgate.Scope{Tenant: "bench", Principal: "p"}
	var rs []memgate.RememberRequest
	for i := range 2000 {
		rs = append(rs, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "bench", Principal: "p", Kind: memgate.KindMessage, Source: memgate.SourceUser, Conversation: "c",
			Content: fmt.Sprintf("Message %d: the garden needs watering on day %d, and the %d tomatoes are ripe.", i, i%31, i%17)}})
		if len(rs) == 500 {
			if _, err := eng.RememberBatch(b.Context(), rs); err != nil {
				b.Fatal(err)
			}
			rs = rs[:0]
		}
	}
	q := memgate.RecallRequest{Scope: sc, Query: "when are the tomatoes ripe in the garden", K: 10}
	if _, err := eng.Recall(b.Context(), q); err != nil { // loads the partition
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if write {
			i++
			if _, err := eng.Remember(b.Context(), memgate.RememberRequest{Memory: memgate.Memory{Tenant: "bench", Principal: "p", Kind: memgate.KindMessage, Source: memgate.SourceUser, Conversation: "c",
				Content: fmt.Sprintf("Follow-up %d: watered the garden, %d tomatoes picked.", i, i%13)}}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := eng.Recall(b.Context(), q); err != nil {
			b.Fatal(err)
		}
	}
}
