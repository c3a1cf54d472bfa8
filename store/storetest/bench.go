package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memgate/memgate/internal/cputime"
	"github.com/memgate/memgate/store"
)

// BenchDrainAudit is the audit drain under bench/load's recall phase:
// the inbox holds 64 batches of 1 to 8 recall events, each naming 5 of
// 8,000 memories at random, and the log already holds 50,000 such events
// (its audit_refs leaves exist). Timed: the drain of one such inbox, per
// event, with its CPU.
func BenchDrainAudit(b *testing.B, db interface {
	store.Store
	store.AuditDrainer
}) {
	rng := rand.New(rand.NewPCG(3, 4))
	seq := 0
	batch := func() []store.AuditEvent {
		evs := make([]store.AuditEvent, 1+rng.IntN(8))
		for j := range evs {
			seq++
			ids := make([]string, 5)
			for k := range ids {
				ids[k] = fmt.Sprintf("m_%08d", rng.IntN(8000))
			}
			evs[j] = store.AuditEvent{Tenant: "acme", Principal: fmt.Sprintf("p%d", seq%4), Actor: "key_0123456789abcdef", Action: "recall", At: time.Now(),
				RecallID: fmt.Sprintf("r_%012d", seq), MemoryIDs: ids, Scores: []float64{0.9, 0.8, 0.7, 0.6, 0.5},
				QuerySHA256: "0000000000000000000000000000000000000000000000000000000000000000",
				Counts:      map[string]int64{"proposed": 80, "ranked": 80, "below_floor": 30, "returned": 5}}
		}
		return evs
	}
	fill := func(events int) int {
		n := 0
		for n < events {
			evs := batch()
			if err := db.AppendAudit(b.Context(), evs); err != nil {
				b.Fatal(err)
			}
			n += len(evs)
		}
		return n
	}
	fill(50000)
	if err := db.DrainAudit(b.Context()); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	events := 0
	for b.Loop() {
		b.StopTimer()
		n := 0
		for range 64 {
			evs := batch()
			if err := db.AppendAudit(b.Context(), evs); err != nil {
				b.Fatal(err)
			}
			n += len(evs)
		}
		events += n
		c0 := cputime.Process()
		b.StartTimer()
		if err := db.DrainAudit(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cputime.Process() - c0
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(events), "µs/event")
	b.ReportMetric(float64(cpu.Microseconds())/float64(events), "cpu-µs/event")
}
