package engine

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/internal/cputime"
	"github.com/memgate/memgate/internal/zipfcorpus"
	"github.com/memgate/memgate/rank"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// BenchmarkRecallCPU times the steps of a recall that run in memory, as
// Recall runs them (query vectors, related words, index search, ranking
// of the candidates), without the store's read of the results and the
// audit write: the server CPU that the index, rank and relate packages
// spend per recall, apart from SQLite's. Three partitions:
//
//   - load-1k-k5: the corpus of bench/load (templated conversation turns,
//     1,000 memories in sessions of 50) and its questions, k 5;
//   - load-10k-k5: the same at 10,000 memories, the size of bench/load's
//     PostgreSQL partitions;
//   - e2e-10k-k10: the corpus of bench/speed's end-to-end phase (10,000
//     texts of Zipf-distributed words in one conversation) and its
//     queries (the first six words of a stored text), k 10.
//
// Besides ns/op it reports cpu-ns/op, the process's CPU time per recall,
// which a shared machine moves less.
//
//	go test ./engine -run '^$' -bench RecallCPU
func BenchmarkRecallCPU(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("load-%dk-k5", n/1000), func(b *testing.B) {
			rs := make([]memgate.RememberRequest, n)
			for i := range rs {
				rng := rand.New(rand.NewPCG(1, uint64(i)))
				rs[i] = memgate.RememberRequest{Memory: memgate.Memory{Kind: memgate.KindMessage, Source: memgate.SourceUser,
					Conversation: "session-" + fmt.Sprint(i/50), Content: loadSentence(rng) + " (turn " + letters(i) + ")"}}
			}
			rng := rand.New(rand.NewPCG(5, 5))
			qs := make([]string, 200)
			for i := range qs {
				qs[i] = loadQuestion(rng)
			}
			benchRecallCPU(b, rs, qs, 5, false)
		})
	}
	b.Run("e2e-10k-k10", func(b *testing.B) {
		rs, qs := e2eCorpus(10000)
		benchRecallCPU(b, rs, qs, 10, false)
	})
}

// BenchmarkRecallE2E is BenchmarkRecallCPU's e2e-10k-k10 through the whole
// of Engine.Recall: the store's verified read of the candidates (Fetch)
// and the audit write included, as bench/speed's end-to-end phase runs it.
//
//	go test ./engine -run '^$' -bench RecallE2E
func BenchmarkRecallE2E(b *testing.B) {
	rs, qs := e2eCorpus(10000)
	benchRecallCPU(b, rs, qs, 10, true)
}

// e2eCorpus is bench/speed's end-to-end corpus of n texts and its 200
// queries (package zipfcorpus).
func e2eCorpus(n int) ([]memgate.RememberRequest, []string) {
	docs := zipfcorpus.Texts(n, 1)
	rs := make([]memgate.RememberRequest, len(docs))
	for i, d := range docs {
		rs[i] = memgate.RememberRequest{Memory: memgate.Memory{Kind: memgate.KindMessage, Source: memgate.SourceUser, Conversation: "c", Content: d}}
	}
	return rs, zipfcorpus.Queries(docs, 200)
}

// benchRecallCPU recalls qs in turn from a partition of rs: with whole,
// through Engine.Recall; without, only the steps that run in memory.
func benchRecallCPU(b *testing.B, rs []memgate.RememberRequest, qs []string, k int, whole bool) {
	ctx := b.Context()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	e, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := memgate.Scope{Tenant: "bench", Principal: "p"}
	for c := range slices.Chunk(rs, 500) {
		for i := range c {
			c[i].Memory.Tenant, c[i].Memory.Principal = s.Tenant, s.Principal
		}
		if _, err := e.RememberBatch(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.Recall(ctx, RecallRequest{Scope: s, Query: qs[0], K: k}); err != nil { // loads the partition
		b.Fatal(err)
	}
	head, err := e.store.PartitionHead(ctx, s.Tenant, s.Principal)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	cpu := cputime.Process()
	for b.Loop() {
		req := RecallRequest{Scope: s, Query: qs[i%len(qs)], K: k}
		i++
		if whole {
			if _, err := e.Recall(ctx, req); err != nil {
				b.Fatal(err)
			}
			continue
		}
		// Recall's steps, up to the store's read of the results.
		opts, err := e.checkRecall(&req)
		if err != nil {
			b.Fatal(err)
		}
		now := e.now()
		q := index.Query{
			Terms:     analysis.Terms(req.Query),
			K:         max(minCandidates, 4*opts.K),
			Filter:    index.Filter{Now: now, AsOf: now},
			Neighbors: index.Neighbors{Prev: 2, Next: 1},
		}
		qv, err := e.queryVectors(ctx, s, req.Query, &q, head)
		if err != nil {
			b.Fatal(err)
		}
		q.Related = e.related(req.Query, q.Exclude, false, e.holds(ctx, s)).words
		res, err := e.search(ctx, s.Tenant, s.Principal, q, head)
		if err != nil {
			b.Fatal(err)
		}
		v := verifier{e: e, scope: s, gate: store.ReadGate{Now: now, AsOf: now}, fetched: map[string]*memgate.Memory{}, refused: map[string]bool{}}
		rq, content := rankQuery(res, qv, now, req.Query, s.Principal)
		cands, _ := v.candidates(res.Candidates, qv.model, content)
		if _, _, err := rank.Rank(rq, cands, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

var (
	loadNames    = strings.Fields("Alice Bruno Chen Dana Elif Farid Greta Hiro Ines Jonas Kemal Lena Mateo Nadia Omar Priya")
	loadVerbs    = strings.Fields("likes visited planned cooked mentioned booked painted fixed ordered recommended studied adopted")
	loadObjects  = strings.Fields("tea coffee hiking pottery guitar sourdough garden bicycle novel marathon museum violin kayak chess yoga camera puppy kitchen")
	loadPlaces   = strings.Fields("Lisbon Kyoto Oslo Denver Cairo Quito Hanoi Dublin Austin Tbilisi Porto Seoul")
	loadTimes    = strings.Fields("yesterday weekend Monday Friday morning evening spring summer autumn winter")
	loadModifier = strings.Fields("again finally happily slowly recently often carefully together alone quietly")
)

func pick(rng *rand.Rand, s []string) string { return s[rng.IntN(len(s))] }

// loadSentence is bench/load's turn of synthetic conversation.
func loadSentence(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("%s %s the %s in %s last %s, %s.", pick(rng, loadNames), pick(rng, loadVerbs), pick(rng, loadObjects), pick(rng, loadPlaces), pick(rng, loadTimes), pick(rng, loadModifier))
	case 1:
		return fmt.Sprintf("I %s a %s with %s this %s and want to try the %s next.", pick(rng, loadVerbs), pick(rng, loadObjects), pick(rng, loadNames), pick(rng, loadTimes), pick(rng, loadObjects))
	default:
		return fmt.Sprintf("%s says the %s near %s is %s worth it on a %s.", pick(rng, loadNames), pick(rng, loadObjects), pick(rng, loadPlaces), pick(rng, loadModifier), pick(rng, loadTimes))
	}
}

// loadQuestion is bench/load's question.
func loadQuestion(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("What does %s think about the %s?", pick(rng, loadNames), pick(rng, loadObjects))
	case 1:
		return fmt.Sprintf("When did %s go to %s?", pick(rng, loadNames), pick(rng, loadPlaces))
	default:
		return fmt.Sprintf("Who %s the %s %s?", pick(rng, loadVerbs), pick(rng, loadObjects), pick(rng, loadModifier))
	}
}

// letters spells n in letters, as bench/load does.
func letters(n int) string {
	var b []byte
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(b)
		}
	}
}
