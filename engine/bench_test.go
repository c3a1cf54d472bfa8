package engine_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/cputime"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// Recall latency through the engine over SQLite, with the built-in
// embedder, on a partition of 2,000 memories already loaded:
//
//	go test ./engine -run '^$' -bench . -count 5
//
// BenchmarkRecall recalls only; BenchmarkRememberThenRecall is an agent's
// loop (store what was said, recall for the next turn), so every recall
// follows a write to the partition it searches. Both also report
// cpu-ns/op, the CPU time of the whole process (the audit committer and
// SQLite included) per iteration: on a shared machine it moves less than
// the time does.
func BenchmarkRecall(b *testing.B)             { benchRecall(b, false, false) }
func BenchmarkRememberThenRecall(b *testing.B) { benchRecall(b, true, false) }

// BenchmarkRecallConcurrent is BenchmarkRecall from eight goroutines at
// once, as a server's requests come: its cpu-ns/op is what a recall costs
// where the audit committer gathers many recalls' events in one commit.
func BenchmarkRecallConcurrent(b *testing.B) { benchRecall(b, false, true) }

func benchRecall(b *testing.B, write, concurrent bool) {
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
	cpu := cputime.Process()
	if concurrent {
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := eng.Recall(b.Context(), q); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		return
	}
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
	b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkColdRecall times the first recall of a 10,000-memory partition
// that is not resident, on SQLite and on PostgreSQL (MEMGATE_TEST_POSTGRES,
// in a schema of its own): each iteration starts a fresh engine over the
// same database (its index empty) and times one recall, which loads the
// partition from the store into the index. It reports p50 and p99.
//
//	go test ./engine -run '^$' -bench ColdRecall -benchtime 20x
func BenchmarkColdRecall(b *testing.B) { benchCold(b, false) }

// BenchmarkColdPartition is BenchmarkColdRecall in an engine that has
// served a recall already (of another principal, whose partition is
// empty): its embedder is calibrated, as in a process that has been
// running, and the timed recall pays for the partition alone.
//
//	go test ./engine -run '^$' -bench ColdPartition -benchtime 20x
func BenchmarkColdPartition(b *testing.B) { benchCold(b, true) }

func benchCold(b *testing.B, warm bool) {
	b.Run("SQLite", func(b *testing.B) {
		db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchColdRecall(b, db, warm)
	})
	b.Run("PostgreSQL", func(b *testing.B) {
		db, err := postgres.Open(b.Context(), postgres.Config{URL: pgtest.URL(b), Schema: pgtest.NewSchema(b), MaxConns: 4})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchColdRecall(b, db, warm)
	})
}

func benchColdRecall(b *testing.B, db store.Store, warm bool) {
	ctx := b.Context()
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		b.Fatal(err)
	}
	var rs []memgate.RememberRequest
	for i := range 10000 {
		rs = append(rs, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "bench", Principal: "p", Kind: memgate.KindMessage, Source: memgate.SourceUser, Conversation: fmt.Sprintf("c%d", i/300),
			Content: fmt.Sprintf("Message %d: the garden needs watering on day %d, and the %d tomatoes are ripe near bed %d.", i, i%31, i%17, i%97)}})
		if len(rs) == 500 {
			if _, err := eng.RememberBatch(ctx, rs); err != nil {
				b.Fatal(err)
			}
			rs = rs[:0]
		}
	}
	q := memgate.RecallRequest{Scope: memgate.Scope{Tenant: "bench", Principal: "p"}, Query: "when are the tomatoes ripe in the garden", K: 10}
	// The database's first recall embeds the calibration's probe set and
	// stores it, once (engine/calibrate.go): done here, so that every
	// timed recall reads it, as in any database that has served a recall.
	if _, err := eng.Recall(ctx, q); err != nil {
		b.Fatal(err)
	}
	eng.Close()
	var lat []time.Duration
	var cpu time.Duration
	var faults int64
	// cold times one recall in a fresh engine (warm: one that has served a
	// recall of another principal first), with the benchmark's timer
	// running for the recall alone when timed.
	cold := func(timed bool) (time.Duration, time.Duration, int64) {
		e, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		if warm {
			w := q
			w.Scope.Principal = "warm"
			if _, err := e.Recall(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
		if timed {
			b.StartTimer()
			defer b.StopTimer()
		}
		start, cpu0, f0 := time.Now(), cputime.Process(), cputime.Faults()
		if _, err := e.Recall(ctx, q); err != nil {
			b.Fatal(err)
		}
		return time.Since(start), cputime.Process() - cpu0, cputime.Faults() - f0
	}
	// The process's first cold load is slower than any after it (its heap
	// grows to hold a partition; the collector is still at the setup's
	// garbage): 110-200 ms where the others take 40-80. Untimed, so that
	// p99 is that of the cold loads of a process that has run a while.
	first, _, firstFaults := cold(false)
	for b.Loop() {
		b.StopTimer()
		d, c, f := cold(true)
		lat = append(lat, d)
		cpu += c
		faults += f
		b.StartTimer()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(len(lat)), "cpu-ms")
	// Minor page faults: each is a page touched for the first time, dear
	// on a virtual machine (index/slab.go).
	b.ReportMetric(float64(faults)/float64(len(lat)), "faults")
	// The process's first cold load, untimed above: a server's first
	// recall of a principal after it starts.
	b.ReportMetric(float64(first.Microseconds())/1e3, "first-ms")
	b.ReportMetric(float64(firstFaults), "first-faults")
}
