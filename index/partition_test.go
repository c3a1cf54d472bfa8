package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
)

// withKernel runs f with the given kernel installed.
func withKernel(name string, k func([]int16, []int8, int, []int32), f func()) {
	old, oldName := dots, kernelName
	dots, kernelName = k, name
	defer func() { dots, kernelName = old, oldName }()
	f()
}

// TestVectorExact holds the vector channel to brute force: same ids, same
// order (ties by id), bit-identical cosines, on every distribution, several
// sizes, dimensions and k, with and without filters, serial and parallel.
func TestVectorExact(t *testing.T) {
	t.Parallel()
	type size struct{ n, dim int }
	sizes := []size{{0, 8}, {1, 1}, {5, 3}, {40, 33}, {300, 64}, {2000, 384}, {3000, 17}}
	if testing.Short() {
		sizes = sizes[:5]
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range distributions {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/n=%d/dim=%d", name, sz.n, sz.dim), func(t *testing.T) {
				t.Parallel()
				r := newRand(uint64(sz.n*1000 + sz.dim))
				gen := distributions[name](r, sz.dim)
				entries := make([]Entry, sz.n)
				for i := range entries {
					var v []float32
					if i%11 != 5 { // some entries without a vector
						v = gen(r, sz.dim, i)
					}
					entries[i] = randomEntry(r, i, v, i%3 == 0)
				}
				// Parallel scan even on small partitions, and serial.
				for _, cfg := range []Config{{}, {ParallelMinRows: 64, MaxParallel: 3}} {
					p := buildPartition(t, cfg, entries)
					for qi := range 12 {
						var qv []float32
						switch {
						case qi%4 == 0 && sz.n > 0 && entries[qi%sz.n].Vector != nil:
							qv = slices.Clone(entries[qi%sz.n].Vector) // cosine 1 with an entry
						case qi%4 == 1:
							qv = gaussVec(r, sz.dim)
						default:
							qv = gen(r, sz.dim, -1)
						}
						q := Query{Vector: qv, Terms: zipfTerms(r, 3), K: []int{1, 2, 10, 100}[qi%4], Filter: Filter{Now: now}}
						if qi >= 6 {
							q.Filter = randomFilter(r)
						}
						res, err := p.Search(q)
						if err != nil {
							t.Fatal(err)
						}
						checkResult(t, fmt.Sprintf("cfg %+v query %d k %d", cfg, qi, q.K), entries, q, res)
					}
				}
			})
		}
	}
}

// TestVectorExactLarge crosses the default parallel threshold.
func TestVectorExactLarge(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("-short in CI would leave the large partition untested")
		}
		t.Skip("large partition")
	}
	t.Parallel()
	const n, dim = 2*DefaultParallelMinRows + 500, 48
	r := newRand(7)
	gen := distributions["clustered"](r, dim)
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = randomEntry(r, i, gen(r, dim, i), i%2 == 0)
	}
	p := buildPartition(t, Config{}, entries)
	for qi := range 6 {
		q := Query{Vector: gen(r, dim, -1), Terms: zipfTerms(r, 2), K: []int{1, 10, 100}[qi%3], Filter: Filter{Now: now}}
		if qi%2 == 1 {
			q.Filter = randomFilter(r)
		}
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, fmt.Sprintf("query %d", qi), entries, q, res)
	}
}

// TestKernelsSameResults runs whole searches with every kernel: the results
// must be identical, down to the number of re-scored vectors.
func TestKernelsSameResults(t *testing.T) {
	if kernelName == "generic" {
		needSIMD(t, "vector kernel (AVX2)")
	}
	r := newRand(11)
	const n, dim = 3000, 384
	gen := distributions["outlier"](r, dim)
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = randomEntry(r, i, gen(r, dim, i), false)
	}
	p := buildPartition(t, Config{ParallelMinRows: 500}, entries)
	for qi := range 20 {
		q := Query{Vector: gen(r, dim, -1), K: 10, Filter: randomFilter(r)}
		var g *Result
		var err error
		// The reference: the generic kernel and the bound check in Go.
		withKernel("generic", dotsGeneric, func() {
			bm := boundMask
			boundMask = nil
			defer func() { boundMask = bm }()
			g, err = p.Search(q)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range asmKernels {
			var a *Result
			withKernel(k.name, k.fn, func() { a, err = p.Search(q) })
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(g) {
				t.Fatalf("query %d: %s kernel and generic kernel differ:\n%+v\n%+v", qi, k.name, a, g)
			}
		}
	}
}

// TestQuantizationBound checks the inequality the exactness proof rests on,
// directly, on the distributions that stress it most.
func TestQuantizationBound(t *testing.T) {
	t.Parallel()
	r := newRand(3)
	var worst float64 // largest error seen, as a fraction of the bound
	for _, name := range []string{"gaussian", "outlier", "scaled", "ternary", "aligned"} {
		for _, dim := range []int{1, 2, 31, 384, 1000} {
			gen := distributions[name](r, dim)
			stride := alignStride(dim)
			for range 50 {
				v, q := gen(r, dim, 0), gen(r, dim, -1)
				vn, _ := checkVector(v)
				qn, _ := checkVector(q)
				codes := make([]int8, stride)
				scale, resid := quantize(v, vn, codes)
				qv := prepareQuery(q, qn, stride, nil)
				out := make([]int32, 1)
				dots(qv.codes, codes, stride, out)
				a := float64(scale) * qv.t * float64(out[0])
				e := float64(resid) + (1+float64(resid))*qv.rho + roundingMargin
				exact := float64(Cosine(q, v))
				if exact < a-e || exact > a+e {
					t.Fatalf("%s dim %d: exact %v outside [%v, %v]", name, dim, exact, a-e, a+e)
				}
				if name == "aligned" && dim >= 31 {
					worst = math.Max(worst, math.Abs(exact-a)/e)
				}
			}
		}
	}
	// The aligned distribution must come close to the bound, or the
	// exactness tests would not notice a bound that is too tight.
	if worst < 0.9 {
		t.Fatalf("aligned vectors reach only %.2f of the bound", worst)
	}
}

// TestVectorExactAdversarialPairs builds, for a ±1 query q, a winner
// c + 0.49·q (every code rounds down, away from q: its quantized score is
// about a whole bound too low) and a decoy c + 0.51·q with m components moved
// one step away from q (codes round up: its quantized score is about a whole
// bound too high), with the smallest m that puts the decoy's exact cosine
// below the winner's. The quantized pass ranks the decoy first by almost two
// bounds; only a sound bound re-scores the winner. A bound even a few percent
// too small fails this test.
func TestVectorExactAdversarialPairs(t *testing.T) {
	t.Parallel()
	r := newRand(31)
	for _, dim := range []int{16, 64, 384, 1000} {
		stride := alignStride(dim)
		for trial := range 20 {
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(2*r.IntN(2) - 1)
			}
			top := r.IntN(dim)
			c := make([]float32, dim)
			for j := range c {
				c[j] = float32(r.IntN(201) - 100 + int(20*q[j]))
			}
			vec := func(bias float32, m int) []float32 {
				v := make([]float32, dim)
				moved := 0
				for j := range v {
					switch {
					case j == top:
						v[j] = 127 // sets the scale: one grid step per unit
					case moved < m:
						v[j] = c[j] + (bias-1)*q[j]
						moved++
					default:
						v[j] = c[j] + bias*q[j]
					}
				}
				return v
			}
			winner := vec(0.49, 0)
			wcos := Cosine(q, winner)
			var decoy []float32
			for m := 0; m < dim; m++ {
				if decoy = vec(0.51, m); Cosine(q, decoy) < wcos {
					break
				}
			}
			if Cosine(q, decoy) >= wcos {
				t.Fatalf("dim %d trial %d: no decoy below the winner", dim, trial)
			}
			// The quantized scores must rank the decoy first, or the trial
			// proves nothing.
			approx := func(v []float32) float64 {
				n, _ := checkVector(v)
				codes := make([]int8, stride)
				s, _ := quantize(v, n, codes)
				qn, _ := checkVector(q)
				qv := prepareQuery(q, qn, stride, nil)
				out := make([]int32, 1)
				dots(qv.codes, codes, stride, out)
				return float64(s) * qv.t * float64(out[0])
			}
			if approx(decoy) <= approx(winner) {
				t.Fatalf("dim %d trial %d: the quantized pass already ranks the winner first", dim, trial)
			}
			entries := []Entry{
				{ID: "decoy", Vector: decoy, Status: memgate.StatusActive},
				{ID: "winner", Vector: winner, Status: memgate.StatusActive},
			}
			p := buildPartition(t, Config{}, entries)
			query := Query{Vector: q, K: 1, Filter: Filter{Now: now}}
			res, err := p.Search(query)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, fmt.Sprintf("dim %d trial %d", dim, trial), entries, query, res)
		}
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"same", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, 2, 3}, []float32{-1, -2, -3}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"tiny", []float32{1e-30, 1e-30}, []float32{1e-30, 0}, float32(1 / math.Sqrt2)},
		{"huge", []float32{3e38, 3e38}, []float32{3e38, 0}, float32(1 / math.Sqrt2)},
	}
	for _, c := range cases {
		if got := Cosine(c.a, c.b); got != c.want {
			t.Errorf("%s: Cosine = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFilters puts one target memory first in both channels (query vector =
// its vector, query terms = its terms) and checks each filter keeps it out,
// beside a control that differs only by the filter and returns it.
func TestFilters(t *testing.T) {
	t.Parallel()
	hour := time.Hour
	type tc struct {
		name    string
		target  func(e *Entry)
		refuse  func(f *Filter) // filter that must keep the target out
		control func(f *Filter) // the same query, which must return it
	}
	nop := func(*Filter) {}
	cases := []tc{
		{"other agent", func(e *Entry) { e.Agent = "bot-b" }, func(f *Filter) { f.Agent = "bot-a" }, nop},
		{"same agent", func(e *Entry) { e.Agent = "bot-b" }, func(f *Filter) { f.Agent = "bot-a" }, func(f *Filter) { f.Agent = "bot-b" }},
		{"unknown agent", func(e *Entry) { e.Agent = "bot-b" }, func(f *Filter) { f.Agent = "never-seen" }, nop},
		{"other conversation", func(e *Entry) { e.Conversation = "c2" }, func(f *Filter) { f.Conversation = "c1" }, func(f *Filter) { f.Conversation = "c2" }},
		{"kind not listed", func(e *Entry) { e.Kind = memgate.KindTask }, func(f *Filter) { f.Kinds = []memgate.Kind{memgate.KindFact} },
			func(f *Filter) { f.Kinds = []memgate.Kind{memgate.KindFact, memgate.KindTask} }},
		{"unknown entry kind", func(e *Entry) { e.Kind = "bogus" }, func(f *Filter) { f.Kinds = []memgate.Kind{"bogus", memgate.KindFact} }, nop},
		{"unknown entry source", func(e *Entry) { e.Source = "rumour" }, func(f *Filter) { f.Sources = []memgate.Source{"rumour", memgate.SourceUser} }, nop},
		{"source not listed", func(e *Entry) { e.Source = memgate.SourceTool }, func(f *Filter) { f.Sources = []memgate.Source{memgate.SourceUser} },
			func(f *Filter) { f.Sources = []memgate.Source{memgate.SourceTool} }},
		{"restricted", func(e *Entry) { e.Sensitivity = memgate.SensitivityRestricted }, nop, func(f *Filter) { f.IncludeRestricted = true }},
		{"unknown sensitivity", func(e *Entry) { e.Sensitivity = "secret" }, nop, func(f *Filter) { f.IncludeRestricted = true }},
		{"expired", func(e *Entry) { e.ExpiresAt = micros(now.Add(-hour)) }, nop, func(f *Filter) { f.Now = now.Add(-2 * hour) }},
		{"expires now", func(e *Entry) { e.ExpiresAt = micros(now) }, nop, func(f *Filter) { f.Now = now.Add(-time.Microsecond) }},
		{"expires within the microsecond", func(e *Entry) { e.ExpiresAt = micros(now) }, func(f *Filter) { f.Now = now.Add(999 * time.Nanosecond) },
			func(f *Filter) { f.Now = now.Add(-time.Nanosecond) }},
		{"not yet valid", func(e *Entry) { e.ValidFrom = micros(now.Add(hour)) }, func(f *Filter) { f.AsOf = now }, func(f *Filter) { f.AsOf = now.Add(hour) }},
		{"no longer valid", func(e *Entry) { e.ValidUntil = micros(now) }, func(f *Filter) { f.AsOf = now }, func(f *Filter) { f.AsOf = now.Add(-time.Microsecond) }},
		{"as-of defaults to now", func(e *Entry) { e.ValidUntil = micros(now.Add(-hour)) }, nop, func(f *Filter) { f.AsOf = now.Add(-2 * hour) }},
		{"expired at as-of", func(e *Entry) { e.ExpiresAt = micros(now.Add(hour)) }, func(f *Filter) { f.AsOf = now.Add(2 * hour) }, func(f *Filter) { f.AsOf = now.Add(hour / 2) }},
		{"expired now, valid at an earlier as-of", func(e *Entry) { e.ExpiresAt = micros(now.Add(-hour)) }, func(f *Filter) { f.AsOf = now.Add(-2 * hour) },
			func(f *Filter) { f.AsOf, f.Now = now.Add(-2*hour), now.Add(-2*hour) }},
		{"allow hook", func(e *Entry) {}, func(f *Filter) { f.Allow = func(id string) bool { return id != "target" } },
			func(f *Filter) { f.Allow = func(id string) bool { return true } }},
	}
	for _, st := range []memgate.Status{memgate.StatusPending, memgate.StatusRevoked, memgate.StatusSuperseded, ""} {
		cases = append(cases, tc{"status " + string(st), func(e *Entry) { e.Status = st }, nop, nil})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRand(5)
			const dim = 24
			var entries []Entry
			for i := range 60 {
				entries = append(entries, randomEntry(r, i, gaussVec(r, dim), true))
			}
			target := randomEntry(r, 99, gaussVec(r, dim), true)
			target.ID = "target"
			target.Kind, target.Source = memgate.KindFact, memgate.SourceUser
			target.Terms = []string{"zebra", "quartz", "zebra"}
			c.target(&target)
			entries = append(entries, target)
			// A twin with the same vector and terms but no restriction shows
			// the filter does not starve the channels.
			twin := target
			twin.ID, twin.Agent, twin.Conversation, twin.Kind, twin.Source = "twin", "", "", memgate.KindFact, memgate.SourceUser
			twin.Sensitivity, twin.Status, twin.ExpiresAt, twin.ValidFrom, twin.ValidUntil = "", memgate.StatusActive, 0, 0, 0
			entries = append(entries, twin)
			p := buildPartition(t, Config{}, entries)

			search := func(mod func(*Filter)) *Result {
				t.Helper()
				q := Query{Vector: target.Vector, Terms: target.Terms, K: 5, Filter: Filter{Now: now}}
				mod(&q.Filter)
				res, err := p.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, c.name, entries, q, res)
				return res
			}
			find := func(res *Result, id string) *Candidate {
				for i := range res.Candidates {
					if res.Candidates[i].ID == id {
						return &res.Candidates[i]
					}
				}
				return nil
			}
			refused := search(c.refuse)
			if find(refused, "target") != nil {
				t.Fatalf("target proposed despite the filter")
			}
			if tw := find(refused, "twin"); tw == nil || tw.VectorRank != 1 || tw.TextRank != 1 {
				t.Fatalf("twin not first in both channels: %+v", refused.Candidates)
			}
			if c.control == nil {
				return // no filter lets this status through
			}
			got := find(search(c.control), "target")
			if got == nil || got.VectorRank > 2 || got.TextRank > 2 || got.Cosine != 1 {
				t.Fatalf("control: target not proposed first: %+v", got)
			}
		})
	}
}

// TestUnknownFilterValues: a kind or source outside the vocabulary matches
// nothing, not everything.
func TestUnknownFilterValues(t *testing.T) {
	t.Parallel()
	r := newRand(9)
	var entries []Entry
	for i := range 50 {
		entries = append(entries, randomEntry(r, i, gaussVec(r, 8), true))
	}
	p := buildPartition(t, Config{}, entries)
	for _, f := range []Filter{
		{Now: now, Kinds: []memgate.Kind{"bogus"}},
		{Now: now, Sources: []memgate.Source{"rumour"}},
	} {
		q := Query{Vector: gaussVec(r, 8), Terms: []string{"w0", "w1"}, K: 5, Filter: f}
		res, err := p.Search(q)
		if err != nil || len(res.Candidates) != 0 {
			t.Fatalf("filter %+v: %d candidates, %v", f, len(res.Candidates), err)
		}
		q.Filter = Filter{Now: now} // control
		if res, _ := p.Search(q); len(res.Candidates) == 0 {
			t.Fatal("control: no candidates")
		}
	}
}

// TestBM25 holds the text channel, the idf sum and the statistics to the
// plain formula on a skewed vocabulary, with repeated query terms, absent
// terms and filters.
func TestBM25(t *testing.T) {
	t.Parallel()
	r := newRand(17)
	var entries []Entry
	for i := range 1500 {
		e := randomEntry(r, i, nil, i%2 == 0)
		if i%97 == 0 {
			e.Terms = nil // empty documents count in N and the average length
		}
		entries = append(entries, e)
	}
	p := buildPartition(t, Config{}, entries)
	st := p.Stats()
	var total int64
	for _, e := range entries {
		total += int64(len(e.Terms))
	}
	if st.Entries != len(entries) || st.TotalLen != total || st.AvgDocLen != float64(total)/float64(len(entries)) {
		t.Fatalf("stats %+v, want N %d total %d", st, len(entries), total)
	}
	queries := [][]string{
		{"w0"}, {"w1", "w1", "w1"}, {"w5", "w399", "absent", "w5"}, {"absent"}, {},
		zipfTerms(r, 8), zipfTerms(r, 40),
	}
	for i, terms := range queries {
		for _, k := range []int{1, 7, 1000} {
			q := Query{Terms: terms, K: k, Filter: Filter{Now: now}}
			if i%2 == 1 {
				q.Filter = randomFilter(r)
			}
			res, err := p.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, fmt.Sprintf("query %v k %d", terms, k), entries, q, res)
			if res.N != len(entries) || res.QueryTerms != len(distinctTerms(terms, nil)) {
				t.Fatalf("N %d terms %d", res.N, res.QueryTerms)
			}
		}
	}
	// Pruning: with a rare term first, the common terms only update the
	// entries already touched, and the results stay exact.
	pruned := false
	for _, terms := range [][]string{{"w0", "w399"}, {"w1", "w0", "w380", "w390"}, {"w0", "w2", "w350"}} {
		for _, k := range []int{1, 3} {
			q := Query{Terms: terms, K: k, Filter: Filter{Now: now}}
			res, err := p.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, fmt.Sprintf("pruned query %v k %d", terms, k), entries, q, res)
			total := 0
			for _, term := range terms {
				total += p.DF(term)
			}
			if res.Postings < total {
				pruned = true
			}
		}
	}
	if !pruned {
		t.Fatal("no query pruned its postings")
	}

	// The idf of an absent term in an empty partition is that of the
	// prior documents alone: ln(1 + (PriorDocs + 0.5)/0.5).
	res, err := NewPartition(Config{}).Search(Query{Terms: []string{"a", "b", "a"}, K: 3, Filter: Filter{Now: now}})
	if err != nil || !closeEnough(res.IDFSum, 2*math.Log(1+(PriorDocs+0.5)/0.5)) || len(res.Candidates) != 0 {
		t.Fatalf("empty partition: %+v, %v", res, err)
	}
}

// checkInvariants verifies the internal cross-references of p.
func checkInvariants(t *testing.T, p *Partition) {
	t.Helper()
	live := 0
	for sl := range int32(p.nslots) {
		s := p.sl(sl)
		if s.id == "" {
			continue
		}
		live++
		if got, ok := p.findID(s.id); !ok || got != sl {
			t.Fatalf("findID(%s) = %d, %v, want %d", s.id, got, ok, sl)
		}
		if s.row >= 0 && p.slotOfRow(int(s.row)) != sl {
			t.Fatalf("slot %d row %d points back to %d", sl, s.row, p.slotOfRow(int(s.row)))
		}
		for _, ref := range s.terms {
			if ps := ref.p.list[ref.pos]; ps.slot != int32(sl) || ps.tf != ref.tf {
				t.Fatalf("slot %d term %s: posting %+v, want slot %d tf %d", sl, ref.p.term, ps, sl, ref.tf)
			}
			if p.terms[ref.p.term] != ref.p {
				t.Fatalf("term %s not in the term map", ref.p.term)
			}
		}
	}
	if got, want := p.bytes, recount(p); got != want {
		t.Fatalf("bytes %d, counted from scratch %d", got, want)
	}
	// The term filter has no false negatives (termfilter.go).
	for term := range p.terms {
		if !p.tfilter.mayHold(analysis.TermHash(term)) {
			t.Fatalf("term %q is in the term map but not in its filter", term)
		}
	}
	if len(p.terms) > p.tfilter.capacity() {
		t.Fatalf("%d terms in a filter sized for %d", len(p.terms), p.tfilter.capacity())
	}
	if live != p.live || live != p.ids.n || live+len(p.free) != p.nslots {
		t.Fatalf("live %d, p.live %d, ids %d, free %d, slots %d", live, p.live, p.ids.n, len(p.free), p.nslots)
	}
	cells := 0
	for _, c := range p.ids.cells {
		if c != 0 {
			cells++
		}
	}
	if cells != p.ids.n {
		t.Fatalf("id table: %d cells used, %d ids", cells, p.ids.n)
	}
	rows := 0
	for ci := range p.chunks {
		c := &p.chunks[ci]
		if ci < len(p.chunks)-1 && c.rows() != chunkRows || c.rows() == 0 {
			t.Fatalf("chunk %d of %d has %d rows", ci, len(p.chunks), c.rows())
		}
		if len(c.vecs) != c.rows()*p.dim || len(c.codes) != c.rows()*p.stride || len(c.norms) != c.rows() || len(c.scales) != c.rows() || len(c.resid) != c.rows() {
			t.Fatalf("chunk %d: arrays out of step", ci)
		}
		rows += c.rows()
	}
	if rows != p.rows {
		t.Fatalf("%d rows in chunks, p.rows %d", rows, p.rows)
	}
	for row := range p.rows {
		if sl := p.slotOfRow(row); p.sl(sl).row != int32(row) {
			t.Fatalf("row %d → slot %d → row %d", row, sl, p.sl(sl).row)
		}
	}
	// Every group is a non-empty, well-linked list in ascending seq order
	// holding exactly the live slots of that group.
	inGroups := 0
	for name, g := range p.groups {
		if g.name != name || g.n == 0 {
			t.Fatalf("group %q: name %q, %d entries", name, g.name, g.n)
		}
		n, prev := 0, int32(-1)
		for sl := g.head; sl >= 0; sl = p.sl(sl).next {
			s := p.sl(sl)
			if s.id == "" || s.group != g || s.prev != prev || prev >= 0 && p.sl(prev).seq >= s.seq || s.seq > p.seq {
				t.Fatalf("group %q: slot %d (%s, seq %d, prev %d) after %d", name, sl, s.id, s.seq, s.prev, prev)
			}
			prev = sl
			if n++; n > g.n {
				t.Fatalf("group %q: longer than %d", name, g.n)
			}
		}
		if n != g.n || g.tail != prev {
			t.Fatalf("group %q: %d linked of %d, tail %d, last %d", name, n, g.n, g.tail, prev)
		}
		inGroups += n
	}
	grouped := 0
	for sl := range int32(p.nslots) {
		s := p.sl(sl)
		if s.group != nil {
			grouped++
			if s.id == "" || p.groups[s.group.name] != s.group {
				t.Fatalf("slot %q points to a group not in the partition", s.id)
			}
		} else if s.prev != -1 || s.next != -1 {
			t.Fatalf("slot %q without a group has links %d, %d", s.id, s.prev, s.next)
		}
	}
	if grouped != inGroups {
		t.Fatalf("%d slots have a group, the groups link %d", grouped, inGroups)
	}
}

// groupIDs returns the ids of a group of p, in list order.
func groupIDs(p *Partition, name string) []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	if g := p.groups[name]; g != nil {
		for sl := g.head; sl >= 0; sl = p.sl(sl).next {
			out = append(out, p.sl(sl).id)
		}
	}
	return out
}

// modelGroup returns the ids of a group of entries in insertion order.
func modelGroup(entries []Entry, name string) []string {
	var out []string
	for _, e := range entries {
		if e.Group == name {
			out = append(out, e.ID)
		}
	}
	return out
}

// TestMutationsKeepStatsExact applies random upserts, replacements (within
// the group or into another) and removals and compares the partition with
// one built from scratch from the surviving entries in insertion order:
// statistics, df of every term, bytes, the order of every group, sequence
// numbers and search results with neighbours.
func TestMutationsKeepStatsExact(t *testing.T) {
	t.Parallel()
	r := newRand(23)
	const dim = 16
	p := NewPartition(Config{ParallelMinRows: 50})
	model := map[string]Entry{}
	seqs := newSeqModel()
	groupNames := []string{"", "", "g1", "g2", "g3", "a longer group name"}
	for step := range 4000 {
		id := fmt.Sprintf("m%06d", r.IntN(600))
		switch op := r.IntN(10); {
		case op < 6:
			var v []float32
			if r.IntN(5) > 0 {
				v = gaussVec(r, dim)
			}
			e := randomEntry(r, 0, v, false)
			e.ID = id
			if old, ok := model[id]; ok && r.IntN(3) > 0 {
				e.Group = old.Group // mostly, a replacement stays in its group
			} else {
				e.Group = groupNames[r.IntN(len(groupNames))]
			}
			if err := p.Upsert(e); err != nil {
				t.Fatal(err)
			}
			model[id] = e
			seqs.upsert(e)
		default:
			_, had := model[id]
			if got := p.Remove(id); got != had {
				t.Fatalf("step %d: Remove(%s) = %v, want %v", step, id, got, had)
			}
			delete(model, id)
			seqs.remove(id)
		}
		if step%500 == 0 {
			checkInvariants(t, p)
		}
	}
	checkInvariants(t, p)

	// The partition rebuilt from the surviving entries in insertion order,
	// as a load from the store would.
	entries := seqs.ordered()
	fresh := buildPartition(t, Config{ParallelMinRows: 50}, entries)
	checkInvariants(t, fresh)
	grouped := 0
	for _, g := range groupNames {
		want := modelGroup(entries, g)
		if g != "" && (!slices.Equal(groupIDs(p, g), want) || !slices.Equal(groupIDs(fresh, g), want)) {
			t.Fatalf("group %q: mutated %v, rebuilt %v, want %v", g, groupIDs(p, g), groupIDs(fresh, g), want)
		}
		if g != "" {
			grouped += len(want)
		}
	}
	if grouped < 100 || grouped == len(entries) {
		t.Fatalf("%d of %d entries in groups: not a useful mix", grouped, len(entries))
	}
	got, want := p.Stats(), fresh.Stats()
	// Both count their bytes exactly (checkInvariants), but the mutated one
	// keeps interned agents, free slots and grown capacity.
	if got.Bytes < want.Bytes*9/10 || got.Bytes > want.Bytes*2 {
		t.Fatalf("bytes after mutations %d, built from scratch %d", got.Bytes, want.Bytes)
	}
	got.Bytes, want.Bytes = 0, 0
	if got != want {
		t.Fatalf("stats after mutations %+v, built from scratch %+v", got, want)
	}
	for _, w := range vocabulary {
		if p.DF(w) != fresh.DF(w) {
			t.Fatalf("df(%s) = %d, want %d", w, p.DF(w), fresh.DF(w))
		}
	}
	neighbours := 0
	for qi := range 40 {
		q := Query{Vector: gaussVec(r, dim), Terms: zipfTerms(r, 4), K: 8, Filter: randomFilter(r)}
		if qi%4 > 0 {
			q.Neighbors = Neighbors{Prev: r.IntN(4), Next: r.IntN(3)}
		}
		a, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := fresh.Search(q)
		label := fmt.Sprintf("query %d", qi)
		checkResult(t, label, entries, q, a)
		neighbours += checkNeighbors(t, label, p, entries, seqs.seq, q, a)
		checkNeighbors(t, label+" rebuilt", fresh, entries, denseSeqs(entries), q, b)
		// Sequence numbers differ (checked above); everything else is equal.
		a.Rescored, b.Rescored = 0, 0
		for _, res := range []*Result{a, b} {
			for i := range res.Candidates {
				res.Candidates[i].Seq = 0
			}
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("query %d: mutated and fresh partitions differ:\n%+v\n%+v", qi, a, b)
		}
	}
	if neighbours < 20 {
		t.Fatalf("only %d neighbours in all the queries", neighbours)
	}

	// Removing everything returns to an empty partition, whose next vector
	// may have another dimension.
	for id := range model {
		p.Remove(id)
	}
	checkInvariants(t, p)
	if st := p.Stats(); st.Entries != 0 || st.Vectors != 0 || st.Terms != 0 || st.Groups != 0 || st.TotalLen != 0 || st.Dim != 0 || st.Bytes != want0(p) {
		t.Fatalf("emptied partition: %+v", st)
	}
	if err := p.Upsert(Entry{ID: "x", Vector: []float32{1, 2, 3}, Status: memgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
}

// want0 is the bytes a partition keeps when empty: its interned names.
// want0 is what a partition emptied by removals keeps: its interned names,
// its slots (free, and reused by the next entries) and its free list.
func want0(p *Partition) int64 {
	var b int64
	for s := range p.agents {
		b += internBytes + allocSize(len(s))
	}
	for s := range p.convs {
		b += internBytes + allocSize(len(s))
	}
	for _, c := range p.slotChunks {
		b += int64(cap(c)) * slotSize
	}
	return b + int64(len(p.free))*freeBytes + 4*int64(len(p.ids.cells)) + 4*int64(cap(p.docLen)) + 8*int64(cap(p.idKey))
}

// recount is the partition's memory counted from scratch, as p.bytes
// counts it change by change.
func recount(p *Partition) int64 {
	b := want0(p)
	for sl := range int32(p.nslots) {
		if s := p.sl(sl); s.id != "" {
			b += scratchBytes + allocSize(len(s.id)) + allocSize(refSize*len(s.terms))
		}
	}
	for i := range p.chunks {
		b += int64(cap(p.chunks[i].rowSlot)) * rowBytesOf(p.dim, p.stride)
	}
	for t, pl := range p.terms {
		b += termBytes + allocSize(len(t)) + int64(cap(pl.list))*postingSize
	}
	for g := range p.groups {
		b += groupBytes + allocSize(len(g))
	}
	return b + 8*int64(len(p.tfilter.words))
}

func TestUpsertAndSearchErrors(t *testing.T) {
	t.Parallel()
	p := NewPartition(Config{})
	if err := p.Upsert(Entry{ID: "a", Vector: []float32{1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	bad := []struct {
		name string
		e    Entry
	}{
		{"no id", Entry{Vector: []float32{1, 0, 0}}},
		{"other dimension", Entry{ID: "b", Vector: []float32{1, 0}}},
		{"zero vector", Entry{ID: "b", Vector: []float32{0, 0, 0}}},
		{"nan", Entry{ID: "b", Vector: []float32{nan, 0, 0}}},
	}
	for _, c := range bad {
		if err := p.Upsert(c.e); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%s: Upsert error %v, want invalid_argument", c.name, err)
		}
	}
	// An empty vector is no vector, in entries and queries.
	if err := p.Upsert(Entry{ID: "empty", Vector: []float32{}, Terms: []string{"x"}, Status: memgate.StatusActive}); err != nil {
		t.Errorf("empty vector: %v", err)
	}
	if res, err := p.Search(Query{K: 1, Vector: []float32{}, Terms: []string{"x"}, Filter: Filter{Now: now}}); err != nil ||
		len(res.Candidates) != 1 || res.Candidates[0].HasVector || p.Stats().Vectors != 1 {
		t.Errorf("empty vectors: %+v, %v", res, err)
	}
	// Replacing the only vector may change the dimension.
	if err := p.Upsert(Entry{ID: "a", Vector: []float32{1, 0}}); err != nil {
		t.Errorf("replace sole vector with another dimension: %v", err)
	}
	ok := Filter{Now: now}
	badQ := []struct {
		name string
		q    Query
	}{
		{"k 0", Query{K: 0, Filter: ok}},
		{"k too big", Query{K: MaxK + 1, Filter: ok}},
		{"no now", Query{K: 1}},
		{"other dimension", Query{K: 1, Vector: []float32{1, 2, 3}, Filter: ok}},
		{"zero vector", Query{K: 1, Vector: []float32{0, 0}, Filter: ok}},
		{"inf", Query{K: 1, Vector: []float32{float32(math.Inf(1)), 0}, Filter: ok}},
	}
	for _, c := range badQ {
		if _, err := p.Search(c.q); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%s: Search error %v, want invalid_argument", c.name, err)
		}
	}
	if _, err := p.Search(Query{K: 1, Vector: []float32{0, 1}, Filter: ok}); err != nil {
		t.Errorf("control: %v", err)
	}
}

// FuzzSearch holds whole searches (both channels, filters, serial and
// parallel scans) to the brute-force references on fuzzed partitions.
func FuzzSearch(f *testing.F) {
	f.Add(uint64(1), uint8(20), uint8(8), uint8(3), uint8(0), false)
	f.Add(uint64(2), uint8(200), uint8(40), uint8(10), uint8(3), true)
	f.Add(uint64(3), uint8(255), uint8(3), uint8(1), uint8(5), true)
	f.Add(uint64(4), uint8(90), uint8(64), uint8(50), uint8(1), false)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range distributions {
			if !yield(k) {
				return
			}
		}
	})
	f.Fuzz(func(t *testing.T, seed uint64, n, dim, k, dist uint8, filtered bool) {
		r := newRand(seed)
		d := 1 + int(dim)%96
		gen := distributions[names[int(dist)%len(names)]](r, d)
		entries := make([]Entry, n)
		for i := range entries {
			var v []float32
			if r.IntN(8) > 0 {
				v = gen(r, d, i)
			}
			entries[i] = randomEntry(r, i, v, !filtered)
		}
		p := buildPartition(t, Config{ParallelMinRows: 16}, entries)
		q := Query{Vector: gen(r, d, -1), Terms: zipfTerms(r, r.IntN(6)), K: 1 + int(k)%40, Filter: Filter{Now: now}}
		if filtered {
			q.Filter = randomFilter(r)
		}
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, "fuzz", entries, q, res)
	})
}

// TestContentQuery: every candidate's ContentBM25 is its BM25 for the query
// terms without Exclude, and its ContentCosine its exact cosine with
// ContentVector; without either, they equal BM25 and Cosine (the control).
func TestContentQuery(t *testing.T) {
	t.Parallel()
	r := newRand(23)
	const dim = 24
	var entries []Entry
	for i := range 600 {
		entries = append(entries, randomEntry(r, i, gaussVec(r, dim), false))
	}
	p := buildPartition(t, Config{}, entries)
	byID := map[string]*Entry{}
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	terms := []string{"w0", "w1", "w7", "w40", "absent"}
	exclude := []string{"w0", "absent"}
	full, idfSum := refBM25(entries, terms)
	content, contentSum := refBM25(entries, []string{"w1", "w7", "w40"})
	qv, cv := gaussVec(r, dim), gaussVec(r, dim)
	for _, withContent := range []bool{false, true} {
		q := Query{Terms: terms, Vector: qv, K: 50, Filter: Filter{Now: now}, Neighbors: Neighbors{Prev: 1, Next: 1}}
		if withContent {
			q.Exclude, q.ContentVector = exclude, cv
		}
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Candidates) < 50 {
			t.Fatalf("%d candidates", len(res.Candidates))
		}
		wantSum := idfSum
		if withContent {
			wantSum = contentSum
		}
		if !closeEnough(res.IDFSum, idfSum) || !closeEnough(res.ContentIDFSum, wantSum) {
			t.Fatalf("content %v: idf sums %v, %v; want %v, %v", withContent, res.IDFSum, res.ContentIDFSum, idfSum, wantSum)
		}
		for _, c := range res.Candidates {
			wantBM, wantCos := full[c.ID], c.Cosine
			if withContent {
				wantBM, wantCos = content[c.ID], Cosine(cv, byID[c.ID].Vector)
			}
			if !closeEnough(c.ContentBM25, wantBM) || math.Abs(float64(c.ContentCosine-wantCos)) > 1e-5 {
				t.Fatalf("content %v, %s: content BM25 %v cosine %v, want %v %v", withContent, c.ID, c.ContentBM25, c.ContentCosine, wantBM, wantCos)
			}
		}
	}
	if _, err := p.Search(Query{Vector: qv, ContentVector: qv[:dim-1], K: 5, Filter: Filter{Now: now}}); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("a content vector of another dimension: %v, want invalid_argument", err)
	}
}

// TestGrowthMakesNoGarbage: building a large partition one entry at a time
// allocates little more than what it keeps, so its peak memory is its size
// (a slice grown by append allocated about 2.5 times it, and the garbage
// raised the peak; see rows.go). The control is the count itself: what the
// partition keeps is most of what was allocated.
func TestGrowthMakesNoGarbage(t *testing.T) {
	const n, dim = 24 * chunkRows, 384
	r := rand.New(rand.NewPCG(3, 4))
	v := make([]float32, dim)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m_%026d", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, slabBefore := slabs.stats()
	p := NewPartition(Config{})
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if err := p.Upsert(Entry{ID: ids[i], Vector: v, Status: memgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	_, _, slabAfter := slabs.stats()
	// Full chunks are blocks of the slab, outside the heap (slab.go).
	alloc, kept := int64(after.TotalAlloc-before.TotalAlloc)+slabAfter-slabBefore, p.Bytes()
	// The garbage allowed: the growth of the first chunk (1.5× steps up to
	// chunkRows: under 3 chunks of rows in all), and a few hundred bytes an
	// entry of small allocations (the entry Upsert copies).
	allowed := 3*chunkRows*rowBytesOf(dim, alignStride(dim)) + 300*n
	if garbage := alloc - kept; garbage > allowed || garbage < 0 {
		t.Fatalf("building %d entries allocated %d bytes, the partition counts %d: %d of garbage, want at most %d", n, alloc, kept, garbage, allowed)
	}
}

// TestTextTies: memories the text channel scores alike are ranked by id,
// and the top k is the first k of that order, whatever order they were
// stored in (so replicas that stored them differently agree). Thirty
// memories score alike for the query, three above them; each k from 1 to
// 33 must give the prefix of the full order. The heap that selects the
// top k breaks ties at its root by id too: choosing the larger ids there
// keeps each result sorted but not a prefix, and fails this test.
func TestTextTies(t *testing.T) {
	t.Parallel()
	r := newRand(5)
	var entries []Entry
	for i := range 33 {
		terms := []string{"tie", fmt.Sprintf("pad%d", i)} // one length: one score
		if i%11 == 4 {
			terms = []string{"tie", "tie"} // three above the rest
		}
		entries = append(entries, Entry{ID: fmt.Sprintf("m%03d", i), Terms: terms, Kind: memgate.KindFact,
			Source: memgate.SourceUser, Status: memgate.StatusActive, CreatedAt: micros(now)})
	}
	var want []string
	for _, i := range []int{4, 15, 26} {
		want = append(want, entries[i].ID)
	}
	for _, e := range entries {
		if !slices.Contains(want, e.ID) {
			want = append(want, e.ID)
		}
	}
	for order := range 3 {
		shuffled := slices.Clone(entries)
		if order > 0 {
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		}
		requireTextTop(t, buildPartition(t, Config{}, shuffled), "tie", want, fmt.Sprintf("stored in order %d", order))
	}
}

// requireTextTop checks that the text channel's top k for the term is
// want[:k], for every k up to len(want).
func requireTextTop(t *testing.T, p *Partition, term string, want []string, what string) {
	t.Helper()
	for k := 1; k <= len(want); k++ {
		res, err := p.Search(Query{Terms: []string{term}, K: k, Filter: Filter{Now: now}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range channel(res, false) {
			got = append(got, c.ID)
		}
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("%s, k %d: %v, want %v", what, k, got, want[:k])
		}
	}
}
