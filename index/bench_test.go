package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// benchDim is the dimension of the benchmark vectors (MiniLM-sized).
const benchDim = 384

// benchCorpus is a deterministic synthetic partition shaped like real
// embeddings: 200 topics, each memory a topic direction plus noise, so
// cosines to a query concentrate (a harder case for quantized pruning than
// isotropic noise). Queries are drawn the same way. Four memories in five
// are conversation turns, in conversations of 300 consecutive memories.
type benchCorpus struct {
	entries []Entry
	queries []Query
}

var (
	benchMu      sync.Mutex
	benchCorpora = map[int]*benchCorpus{}
)

func corpus(n int) *benchCorpus {
	benchMu.Lock()
	defer benchMu.Unlock()
	if c := benchCorpora[n]; c != nil {
		return c
	}
	r := rand.New(rand.NewPCG(42, uint64(n)))
	topics := make([][]float32, 200)
	for i := range topics {
		topics[i] = gaussVec(r, benchDim)
	}
	draw := func() []float32 {
		t := topics[r.IntN(len(topics))]
		v := make([]float32, benchDim)
		for j := range v {
			v[j] = t[j] + float32(1.2*r.NormFloat64())
		}
		return v
	}
	c := &benchCorpus{entries: make([]Entry, n)}
	for i := range c.entries {
		c.entries[i] = randomEntry(r, i, draw(), true)
		c.entries[i].Terms = zipfTerms(r, 10+r.IntN(30))
		if i%5 != 0 { // without drawing from r: the data is unchanged
			c.entries[i].Group = fmt.Sprintf("conv-%d", i/300)
		}
	}
	for range 256 {
		c.queries = append(c.queries, Query{Vector: draw(), Terms: zipfTerms(r, 5), K: 10, Filter: Filter{Now: now}})
	}
	benchCorpora[n] = c
	return c
}

// BenchmarkSearch measures one search of a partition of 1k, 10k and 100k
// memories of 384 dimensions, k=10: "vector" alone (the exact scan), "text"
// alone (5 query terms, BM25 over postings) and "hybrid" (both, the
// engine's case), and at 10k "hybrid+nb": hybrid with Neighbors{2, 1}, as
// the engine asks. Besides ns/op it reports p50 and p99 over 200 timed
// searches, the vectors re-scored and the neighbours added per search.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		c := corpus(n)
		start := time.Now()
		p := buildPartition(b, Config{}, c.entries)
		b.Logf("n=%d: built in %v", n, time.Since(start))
		exact := p
		if p.ivf != nil {
			exact = buildPartition(b, Config{ApproxMinRows: -1}, c.entries)
		}
		modes := []string{"vector", "text", "hybrid"}
		if n == 10000 {
			modes = append(modes, "hybrid+nb")
		}
		type run struct {
			mode    string
			k       namedKernel
			goBound bool // the bound check in Go, not SIMD
		}
		var runs []run
		for _, mode := range modes {
			runs = append(runs, run{mode, namedKernel{kernelName, dots}, false})
			if mode == "vector" && exact != p {
				runs = append(runs, run{"vector-exact", namedKernel{kernelName, dots}, false})
			}
			if mode == "vector" && boundMask != nil {
				runs = append(runs, run{mode, namedKernel{kernelName + "+gobound", dots}, true})
			}
			if mode == "vector" {
				// The vector channel with every other kernel, to compare.
				for _, k := range asmKernels {
					if k.name != kernelName {
						runs = append(runs, run{mode, k, false})
					}
				}
			}
		}
		for _, rn := range runs {
			mode := rn.mode
			b.Run(fmt.Sprintf("n=%dk/%s/%s", n/1000, mode, rn.k.name), func(b *testing.B) {
				old, oldMask := dots, boundMask
				dots = rn.k.fn
				if rn.goBound {
					boundMask = nil
				}
				defer func() { dots, boundMask = old, oldMask }()
				p := p
				if mode == "vector-exact" {
					p = exact
				}
				qs := slices.Clone(c.queries)
				for i := range qs {
					switch mode {
					case "vector", "vector-exact":
						qs[i].Terms = nil
					case "text":
						qs[i].Vector = nil
					case "hybrid+nb":
						qs[i].Neighbors = Neighbors{Prev: 2, Next: 1}
					}
				}
				// Percentiles over 200 searches, timed one by one.
				lat := make([]time.Duration, 200)
				rescored, neighbours := 0, 0
				var recall float64
				for i := range lat {
					start := time.Now()
					res, err := p.Search(qs[i%len(qs)])
					lat[i] = time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					rescored += res.Rescored
					for _, c := range res.Candidates {
						if c.Neighbor {
							neighbours++
						}
					}
				}
				// Recall against the exact scan, out of the timed loop (the
				// exact scan evicts the cache).
				for i := range lat {
					if mode != "vector" || p == exact {
						break
					}
					q := qs[i%len(qs)]
					got, err := p.Search(q)
					if err != nil {
						b.Fatal(err)
					}
					want, err := exact.Search(q)
					if err != nil {
						b.Fatal(err)
					}
					recall += recallAt(got, want)
				}
				slices.Sort(lat)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if _, err := p.Search(qs[i%len(qs)]); err != nil {
						b.Fatal(err)
					}
				}
				// After the loop: ResetTimer deletes reported metrics.
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(rescored)/float64(len(lat)), "rescored/op")
				if mode == "vector" && p != exact {
					b.ReportMetric(recall/float64(len(lat)), "recall@10")
				}
				if mode == "hybrid+nb" {
					b.ReportMetric(float64(neighbours)/float64(len(lat)), "neighbors/op")
				}
			})
		}
	}
}

// BenchmarkDots measures the int8 kernel alone over 10k rows.
func BenchmarkDots(b *testing.B) {
	const rows = 10000
	r := newRand(1)
	q := make([]int16, benchDim)
	for j := range q {
		q[j] = int16(r.IntN(60000) - 30000)
	}
	codes := make([]int8, rows*benchDim)
	for j := range codes {
		codes[j] = int8(r.IntN(255) - 127)
	}
	out := make([]int32, blockRows)
	for name, k := range kernels() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(codes)))
			for b.Loop() {
				for r0 := 0; r0 < rows; r0 += blockRows {
					nb := min(blockRows, rows-r0)
					k(q, codes[r0*benchDim:(r0+nb)*benchDim], benchDim, out[:nb])
				}
			}
		})
	}
}

// BenchmarkUpsert measures building a 10k partition, as a load does.
func BenchmarkUpsert(b *testing.B) {
	c := corpus(10000)
	b.ReportAllocs()
	for b.Loop() {
		p := NewPartition(Config{})
		for _, e := range c.entries {
			if err := p.Upsert(e); err != nil {
				b.Fatal(err)
			}
		}
		p.trim() // as a load does
	}
}

// BenchmarkLoad measures a cold load of a 10k partition through an Index
// and its Loader (the entries handed over one at a time, after their
// number, as the engine's loader does), without the store: the build half
// of a cold recall.
func BenchmarkLoad(b *testing.B) {
	c := corpus(10000)
	load := func(_ context.Context, _, _ string, l *Load) (int64, error) {
		l.Expect(len(c.entries))
		for i := range c.entries {
			if err := l.Add(&c.entries[i]); err != nil {
				return 0, err
			}
		}
		return 1, nil
	}
	b.ReportAllocs()
	for b.Loop() {
		x, err := New(Config{}, load)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := x.DFs(b.Context(), "t", "p", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// recallAt is the share of want's vector candidates that got has.
func recallAt(got, want *Result) float64 {
	ids := map[string]bool{}
	n := 0
	for _, c := range want.Candidates {
		if c.VectorRank > 0 {
			ids[c.ID] = true
			n++
		}
	}
	hit := 0
	for _, c := range got.Candidates {
		if c.VectorRank > 0 && ids[c.ID] {
			hit++
		}
	}
	return float64(hit) / float64(n)
}

// BenchmarkApprox compares the vector channel's two paths on one partition
// size: "approx", the inverted file (forced, whatever the size: the
// partition is built with ApproxMinRows 1000), and "exact", the full scan.
// It reports p50 and p99 over 200 timed searches, recall@10 against the
// exact scan, and the build time of each partition.
func BenchmarkApprox(b *testing.B) {
	for _, n := range []int{10000, 20000, 50000, 100000, 1000000} {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			c := corpus(n)
			qs := slices.Clone(c.queries)
			for i := range qs {
				qs[i].Terms = nil
			}
			build := func(cfg Config) (*Partition, time.Duration) {
				start := time.Now()
				p := buildPartition(b, cfg, c.entries)
				return p, time.Since(start)
			}
			approx, ta := build(Config{ApproxMinRows: 1000})
			exact, te := build(Config{ApproxMinRows: -1})
			var recall float64
			for _, q := range qs {
				got, err := approx.Search(q)
				if err != nil {
					b.Fatal(err)
				}
				want, err := exact.Search(q)
				if err != nil {
					b.Fatal(err)
				}
				recall += recallAt(got, want)
			}
			recall /= float64(len(qs))
			for _, mode := range []string{"approx", "exact"} {
				p, t := approx, ta
				if mode == "exact" {
					p, t = exact, te
				}
				b.Run(mode, func(b *testing.B) {
					lat := make([]time.Duration, 200)
					for i := range lat {
						start := time.Now()
						if _, err := p.Search(qs[i%len(qs)]); err != nil {
							b.Fatal(err)
						}
						lat[i] = time.Since(start)
					}
					slices.Sort(lat)
					for i := 0; b.Loop(); i++ {
						if _, err := p.Search(qs[i%len(qs)]); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
					b.ReportMetric(t.Seconds(), "build-s")
					if mode == "approx" {
						b.ReportMetric(recall, "recall@10")
						b.ReportMetric(float64(p.ivf.nlist), "lists")
					}
				})
			}
		})
	}
}

// lowRankCorpus is n vectors (and queries) x = A·z + N(0, 2²·I) with z in
// 64 latent dimensions: a continuum, not clusters (bench/peers -dist
// lowrank draws the same kind).
func lowRankCorpus(n, nq int) (data, queries [][]float32) {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	const latent = 64
	a := make([]float64, benchDim*latent)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	z := make([]float64, latent)
	draw := func() []float32 {
		for i := range z {
			z[i] = r.NormFloat64()
		}
		v := make([]float32, benchDim)
		for j := range v {
			var s float64
			for i, x := range z {
				s += a[j*latent+i] * x
			}
			v[j] = float32(s + 2*r.NormFloat64())
		}
		return v
	}
	for range n {
		data = append(data, draw())
	}
	for range nq {
		queries = append(queries, draw())
	}
	return data, queries
}

// BenchmarkFourBit measures the candidate "4-bit first pass with error
// bounds, then the int8 pass on the survivors" without building it: it
// quantizes every direction to 4 bits (codes in [−7, 7]) with the same
// bound as the int8 codes, and reports per query how many rows survive
// the 4-bit pass (hi ≥ the k-th largest lo), that is the rows the int8
// pass would then read, for the topics and the low-rank distributions at
// 100k. (The time of the 4-bit pass itself is bounded below by reading
// half the int8 bytes; see BENCHMARKS.md.)
func BenchmarkFourBit(b *testing.B) {
	const n, nq, k = 100000, 20, 10
	for _, dist := range []string{"topics", "lowrank"} {
		b.Run(dist, func(b *testing.B) {
			var data, queries [][]float32
			if dist == "topics" {
				c := corpus(n)
				for _, e := range c.entries {
					data = append(data, e.Vector)
				}
				for _, q := range c.queries[:nq] {
					queries = append(queries, q.Vector)
				}
			} else {
				data, queries = lowRankCorpus(n, nq)
			}
			const c4 = 7
			codes := make([]int8, n*benchDim)
			scales := make([]float64, n)
			resid := make([]float64, n)
			for i, v := range data {
				norm := norm64(v)
				var maxAbs float64
				for _, x := range v {
					maxAbs = max(maxAbs, math.Abs(float64(x)))
				}
				s := maxAbs / norm / c4
				var r2 float64
				for j, x := range v {
					u := float64(x) / norm
					c := max(-c4, min(c4, math.Round(u/s)))
					codes[i*benchDim+j] = int8(c)
					r2 += (u - s*c) * (u - s*c)
				}
				scales[i], resid[i] = s, math.Sqrt(r2)
			}
			var survivors float64
			for range b.N {
				survivors = 0
				for _, q := range queries {
					qv := prepareQuery(q, norm64(q), benchDim, nil)
					lo := make([]float64, n)
					hi := make([]float64, n)
					for i := range n {
						var d int64
						row := codes[i*benchDim : (i+1)*benchDim]
						for j, e := range qv.codes[:benchDim] {
							d += int64(e) * int64(row[j])
						}
						a := scales[i] * qv.t * float64(d)
						e := resid[i] + (1+resid[i])*qv.rho + roundingMargin
						lo[i], hi[i] = a-e, a+e
					}
					sorted := slices.Clone(lo)
					slices.Sort(sorted)
					tau := sorted[n-k]
					for _, h := range hi {
						if h >= tau {
							survivors++
						}
					}
				}
			}
			survivors /= nq
			b.ReportMetric(survivors, "survivors/query")
			b.ReportMetric(100*survivors/n, "survivors-%")
		})
	}
}

// BenchmarkQuantize is the per-vector cost of a bulk load besides copying:
// checking a 484-d vector and quantizing it.
func BenchmarkQuantize(b *testing.B) {
	r := newRand(1)
	v := distributions["gaussian"](r, 484)(r, 484, 0)
	codes := make([]int8, alignStride(len(v)))
	for b.Loop() {
		n, _ := checkVector(v)
		quantize(v, n, codes)
	}
}

// BenchmarkSearchRecall is a search as the engine's recall asks it: the
// top 50 of each channel (minCandidates) and neighbours 2 before and 1
// after, on the partitions of BenchmarkSearch of 1k and 10k memories.
//
//	go test ./index -run '^$' -bench SearchRecall
func BenchmarkSearchRecall(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		c := corpus(n)
		p := buildPartition(b, Config{}, c.entries)
		qs := slices.Clone(c.queries)
		for i := range qs {
			qs[i].K = 50
			qs[i].Neighbors = Neighbors{Prev: 2, Next: 1}
		}
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.Search(qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLowRank times the vector channel on the `lowrank` distribution
// (lowRankCorpus), the default partition (the projected first pass, learnt
// in the background and calibrated) against one held to the exact scan,
// interleaved query by query in one loop. It reports both p50s, the
// default's rows re-scored, its projection's dimension, whether its
// results equal the exact scan's (they must), and the build times
// (upserts, then until the background training has settled).
//
//	go test ./index -run '^$' -bench LowRank/n=100k -benchtime 1x
func BenchmarkLowRank(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			data, queries := lowRankCorpus(n, 200)
			entries := make([]Entry, n)
			for i, v := range data {
				entries[i] = Entry{ID: fmt.Sprintf("%07d", i), Vector: v, Status: "active", CreatedAt: 1}
			}
			build := func(cfg Config) (*Partition, time.Duration) {
				start := time.Now()
				p := buildPartition(b, cfg, entries)
				return p, time.Since(start)
			}
			def, td := build(Config{})
			exact, te := build(Config{ApproxMinRows: -1, ProjectMinRows: -1})
			var ld, le []time.Duration
			same, rescored, survivors := 0, 0, 0
			for range b.N {
				ld, le = ld[:0], le[:0]
				same, rescored, survivors = 0, 0, 0
				for i, v := range queries {
					q := Query{Vector: v, K: 10, Filter: Filter{Now: now}}
					var rd, re *Result
					run := func(p *Partition, out *[]time.Duration) *Result {
						start := time.Now()
						res, err := p.Search(q)
						*out = append(*out, time.Since(start))
						if err != nil {
							b.Fatal(err)
						}
						return res
					}
					if i%2 == 0 {
						rd, re = run(def, &ld), run(exact, &le)
					} else {
						re, rd = run(exact, &le), run(def, &ld)
					}
					rescored += rd.Rescored
					survivors += projSurvivors(def, v)
					if recallAt(rd, re) == 1 {
						same++
					}
				}
			}
			slices.Sort(ld)
			slices.Sort(le)
			b.ReportMetric(float64(ld[len(ld)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(le[len(le)/2].Microseconds()), "exact-p50-µs")
			b.ReportMetric(float64(rescored)/float64(len(queries)), "rescored/query")
			b.ReportMetric(float64(survivors)/float64(len(queries)), "survivors/query")
			b.ReportMetric(float64(same)/float64(len(queries)), "same-as-exact")
			b.ReportMetric(float64(def.Stats().Projection), "proj-dims")
			b.ReportMetric(td.Seconds(), "build-s")
			b.ReportMetric(te.Seconds(), "exact-build-s")
		})
	}
}

// projSurvivors is how many rows of p survive the projected first pass
// for the query vector v at k 10 (0 without a projection).
func projSurvivors(p *Partition, v []float32) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	pj := p.proj
	if pj == nil {
		return 0
	}
	sc := getScratch()
	defer putScratch(sc)
	qv := prepareQuery(v, norm64(v), p.stride, nil)
	pq := pj.prepare(&qv, sc)
	f := compiled{anyAgent: true, anyConv: true, kinds: 0xff, sources: 0xff, restrictedOK: true}
	w := sc.workers(1)[0]
	p.projScan(projInUse(), pj, &pq, &f, 10, 0, pj.rows, w)
	lows := slices.Clone(w.lows)
	slices.Sort(lows)
	tau := lows[len(lows)-10]
	n := 0
	for _, c := range w.cands {
		if c.hi >= tau {
			n++
		}
	}
	return n
}
