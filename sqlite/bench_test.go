package sqlite

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/internal/cputime"
	"github.com/memgate/memgate/store"
	"github.com/memgate/memgate/store/storetest"
)

// The write path's cost in the store alone (no embedder): what the
// triggers of populations and change tracking add to each write.
//
//	go test ./sqlite -run '^$' -bench . -count 5

// benchMemory is a message with a 384-dimension vector, as the built-in
// embedder stores.
func benchMemory(i int) *memgate.Memory {
	c := fmt.Sprintf("benchmark message number %d about nothing in particular", i)
	m := testMemory(fmt.Sprintf("m-%08d", i), c)
	m.Kind = memgate.KindMessage
	m.DedupKey = fmt.Sprintf("k%d", i)
	v := make([]float32, 384)
	for j := range v {
		v[j] = float32((i+j)%17) / 17
	}
	m.Embedding = &memgate.Embedding{Provider: "builtin", Model: "bench", Dim: len(v), Vector: v}
	return m
}

func benchRemember(b *testing.B, batch int) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	caps := map[memgate.Kind]int{memgate.KindMessage: 10000}
	n := 0
	b.ResetTimer()
	for b.Loop() {
		ms := make([]*memgate.Memory, batch)
		for i := range ms {
			ms[i] = benchMemory(n)
			n++
		}
		if _, err := db.Remember(b.Context(), ms, caps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/memory")
}

func BenchmarkRememberOne(b *testing.B)      { benchRemember(b, 1) }
func BenchmarkRememberBatch500(b *testing.B) { benchRemember(b, 500) }

// BenchmarkRevoke is an update of a stored row (status, version, time).
func BenchmarkRevoke(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n = 20000
	var ms []*memgate.Memory
	for i := range n {
		ms = append(ms, benchMemory(i))
	}
	if err := db.Insert(b.Context(), ms); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if i == n {
			b.Fatal("out of memories to revoke")
		}
		if _, err := db.SetStatus(b.Context(), alice, ms[i].ID, store.StatusChange{
			From: []memgate.Status{memgate.StatusActive}, To: memgate.StatusRevoked, At: time.Now(),
		}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPartitionHead is the read every recall adds: one primary-key
// lookup on the read pool.
func BenchmarkPartitionHead(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var ms []*memgate.Memory
	for i := range 1000 {
		ms = append(ms, benchMemory(i))
	}
	if err := db.Insert(b.Context(), ms); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.PartitionHead(b.Context(), "acme", "alice"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyByHash is the API key lookup every request makes (one of
// 100 keys).
//
//	go test ./sqlite -run '^$' -bench 'KeyByHash|PartitionHead'
func BenchmarkKeyByHash(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 100 {
		k := &memgate.Key{ID: fmt.Sprintf("key_%04d", i), Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice",
			Hash: fmt.Sprintf("%064x", i), CreatedAt: at}
		if err := db.CreateKey(b.Context(), k); err != nil {
			b.Fatal(err)
		}
	}
	hash := fmt.Sprintf("%064x", 42)
	for b.Loop() {
		if k, err := db.KeyByHash(b.Context(), hash); err != nil || k.ID != "key_0042" {
			b.Fatal(k, err)
		}
	}
}

// The audit append of a recall (five memory ids and scores, counts) in
// batches of n: the group commit's cost per event falls with the batch
// (engine/audit.go). Reported per event.
func BenchmarkAppendAuditRecall1(b *testing.B)  { benchAppendAudit(b, 1) }
func BenchmarkAppendAuditRecall4(b *testing.B)  { benchAppendAudit(b, 4) }
func BenchmarkAppendAuditRecall64(b *testing.B) { benchAppendAudit(b, 64) }

func benchAppendAudit(b *testing.B, n int) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	evs := make([]store.AuditEvent, n)
	seq := 0
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		for j := range evs {
			seq++
			ids := make([]string, 5)
			for k := range ids {
				ids[k] = fmt.Sprintf("m_%08d", (seq*5+k)%4000)
			}
			evs[j] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "key_0123456789abcdef", Action: "recall", At: time.Now(),
				RecallID: fmt.Sprintf("r_%012d", seq), MemoryIDs: ids, Scores: []float64{0.9, 0.8, 0.7, 0.6, 0.5},
				QuerySHA256: "0000000000000000000000000000000000000000000000000000000000000000",
				Counts:      map[string]int64{"proposed": 80, "ranked": 80, "below_floor": 30, "returned": 5}}
		}
		if err := db.AppendAudit(b.Context(), evs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendAuditRecallMixed is the append of recalls as the server
// sees them under load: batches of 1 to 8 events naming 1 to 10 memories
// each, so the statements inserting the refs come in many sizes. Reported
// per event.
func BenchmarkAppendAuditRecallMixed(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seq := 0
	b.ResetTimer()
	for i := 0; i < b.N; {
		evs := make([]store.AuditEvent, 1+seq%8)
		for j := range evs {
			seq++
			ids := make([]string, 1+(seq*7)%10)
			scores := make([]float64, len(ids))
			for k := range ids {
				ids[k] = fmt.Sprintf("m_%08d", (seq*5+k)%4000)
				scores[k] = 0.9 - float64(k)/100
			}
			evs[j] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "key_0123456789abcdef", Action: "recall", At: time.Now(),
				RecallID: fmt.Sprintf("r_%012d", seq), MemoryIDs: ids, Scores: scores,
				QuerySHA256: "0000000000000000000000000000000000000000000000000000000000000000",
				Counts:      map[string]int64{"proposed": 80, "ranked": 80, "below_floor": 30, "returned": int64(len(ids))}}
		}
		if err := db.AppendAudit(b.Context(), evs); err != nil {
			b.Fatal(err)
		}
		i += len(evs)
	}
}

// BenchmarkFetch is a recall's verified read: 50 memories at random of a
// partition of 10,000 (each with about 200 bytes of content and a vector
// of 484 dimensions, as the built-in embedder stores), through the read
// gate. In after-write, a write commits before each read (not timed), as
// under an agent's loop: a read transaction that finds the WAL changed
// starts with an empty page cache (and unmaps a mapped file).
//
//	go test ./sqlite -run '^$' -bench Fetch -benchmem
func BenchmarkFetch(b *testing.B) {
	b.Run("read-only", func(b *testing.B) { benchFetch(b, false) })
	b.Run("after-write", func(b *testing.B) { benchFetch(b, true) })
}

func benchFetch(b *testing.B, write bool) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n = 10000
	var ms []*memgate.Memory
	for i := range n {
		m := benchMemory(i)
		m.Content = fmt.Sprintf("message %d: %s", i, strings.Repeat("words of a conversation ", 8))
		m.ContentSHA256 = memgate.ContentHash(m.Content)
		v := make([]float32, 484)
		for j := range v {
			v[j] = float32((i*7+j)%23) / 23
		}
		m.Embedding = &memgate.Embedding{Provider: "builtin", Model: "bench", Dim: len(v), Vector: v}
		ms = append(ms, m)
		if len(ms) == 500 {
			if err := db.Insert(b.Context(), ms); err != nil {
				b.Fatal(err)
			}
			ms = ms[:0]
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	ids := make([]string, 50)
	now := time.Now()
	for b.Loop() {
		if write {
			b.StopTimer()
			if _, err := db.AddFeedback(b.Context(), alice, fmt.Sprintf("m-%08d", rng.IntN(n)), 1); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		for i := range ids {
			ids[i] = fmt.Sprintf("m-%08d", rng.IntN(n))
		}
		got, err := db.Fetch(b.Context(), alice, ids, store.ReadGate{Now: now, AsOf: now})
		if err != nil || len(got) == 0 {
			b.Fatalf("Fetch: %d memories, %v", len(got), err)
		}
	}
}

// BenchmarkRememberAtCap is the remember phase of bench/load in the store
// alone: four principals at a message cap of 2,000, each write a group of
// single remembers (the engine's group commit) with their audit events,
// so every memory written evicts the oldest of its principal. It reports
// the pages each memory costs the write-ahead log, the commit's main cost.
//
//	go test ./sqlite -run '^$' -bench RememberAtCap -benchtime 4000x
func BenchmarkRememberAtCap(b *testing.B) {
	for _, group := range []int{1, 4} {
		b.Run(fmt.Sprintf("group%d", group), func(b *testing.B) { benchRememberAtCap(b, group) })
	}
}

func benchRememberAtCap(b *testing.B, group int) {
	const principals, capacity = 4, 2000
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	caps := map[memgate.Kind]int{memgate.KindMessage: capacity}
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	next := func(p int) *memgate.Memory {
		n++
		at = at.Add(time.Millisecond)
		c := fmt.Sprintf("turn %d of principal %d: the weather report for a place, with a few more words (note %x)", n, p, rng.Uint64())
		m := testMemory(memgate.NewID(at), c)
		m.Principal, m.Kind, m.Conversation = fmt.Sprintf("p%d", p), memgate.KindMessage, "live"
		m.CreatedAt, m.UpdatedAt = at, at
		exp := at.Add(30 * 24 * time.Hour)
		m.ExpiresAt = &exp
		m.DedupKey = fmt.Sprintf("%016x%016x:standard", rng.Uint64(), rng.Uint64())
		v := make([]float32, 484)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		m.Embedding = &memgate.Embedding{Provider: "builtin", Model: "bench", Dim: len(v), Vector: v}
		return m
	}
	for p := range principals {
		for range capacity / 100 {
			ms := make([]*memgate.Memory, 100)
			for i := range ms {
				ms[i] = next(p)
			}
			if _, err := db.Remember(b.Context(), ms, caps); err != nil {
				b.Fatal(err)
			}
		}
	}
	audit := func(res *store.WriteResult) []store.AuditEvent {
		var evs []store.AuditEvent
		for _, m := range res.Memories {
			evs = append(evs, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Action: "remember", MemoryIDs: []string{m.ID},
				Actor: "key:bench", At: at, Counts: map[string]int64{"stored": 1, "evicted": 1}})
		}
		for _, r := range res.Evicted {
			evs = append(evs, store.AuditEvent{Tenant: r.Tenant, Principal: r.Principal, Action: "evict", MemoryIDs: []string{r.ID},
				Actor: "key:bench", At: at, Reason: "retention_cap"})
		}
		return evs
	}
	wrote, cpu := db.c.ckpt.wrote.Load(), cputime.Process()
	written := 0
	b.ResetTimer()
	for b.Loop() {
		ms := make([]*memgate.Memory, group)
		for i := range ms {
			ms[i] = next(rng.IntN(principals))
		}
		res, err := db.RememberAudited(b.Context(), ms, caps, audit)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Evicted) != group {
			b.Fatalf("evicted %d of a group of %d", len(res.Evicted), group)
		}
		written += group
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(written), "µs/memory")
	b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/float64(written), "cpu-µs/memory")
	b.ReportMetric(float64(db.c.ckpt.wrote.Load()-wrote)/float64(written), "pages/memory")
}

// BenchmarkDrainAudit is the audit drain under bench/load's recall phase
// (storetest.BenchDrainAudit).
//
//	go test ./sqlite -run '^$' -bench DrainAudit -benchtime 200x
func BenchmarkDrainAudit(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storetest.BenchDrainAudit(b, db)
}
