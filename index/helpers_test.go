package index

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// now is the fixed "now" of the tests.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func micros(t time.Time) int64 { return t.UnixMicro() }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func gaussVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// vecGen makes vectors of one distribution.
type vecGen func(r *rand.Rand, dim, i int) []float32

var distributions = map[string]func(r *rand.Rand, dim int) vecGen{
	"gaussian": func(r *rand.Rand, dim int) vecGen {
		return func(r *rand.Rand, dim, i int) []float32 { return gaussVec(r, dim) }
	},
	// A few tight clusters: many near-equal cosines around the threshold.
	"clustered": func(r *rand.Rand, dim int) vecGen {
		centers := make([][]float32, 4)
		for i := range centers {
			centers[i] = gaussVec(r, dim)
		}
		return func(r *rand.Rand, dim, i int) []float32 {
			c := centers[r.IntN(len(centers))]
			v := make([]float32, dim)
			for j := range v {
				v[j] = c[j] + float32(0.01*r.NormFloat64())
			}
			return v
		}
	},
	// Groups of identical vectors: exact ties, broken by ID.
	"duplicates": func(r *rand.Rand, dim int) vecGen {
		pool := make([][]float32, 8)
		for i := range pool {
			pool[i] = gaussVec(r, dim)
		}
		return func(r *rand.Rand, dim, i int) []float32 { return slices.Clone(pool[r.IntN(len(pool))]) }
	},
	// Values in {-1, 0, 1}: few distinct cosines, many ties.
	"ternary": func(r *rand.Rand, dim int) vecGen {
		return func(r *rand.Rand, dim, i int) []float32 {
			v := make([]float32, dim)
			for {
				for j := range v {
					v[j] = float32(r.IntN(3) - 1)
				}
				if _, ok := checkVector(v); ok {
					return v
				}
			}
		}
	},
	// One huge component: the int8 grid is coarse for every other one, so
	// quantization errors are as large as they get.
	"outlier": func(r *rand.Rand, dim int) vecGen {
		return func(r *rand.Rand, dim, i int) []float32 {
			v := gaussVec(r, dim)
			v[r.IntN(dim)] = float32(50 * (r.Float64() + 0.5))
			return v
		}
	},
	// Tiny perturbations of one vector: cosines differing in the last
	// float32 bits.
	"near-ties": func(r *rand.Rand, dim int) vecGen {
		base := gaussVec(r, dim)
		return func(r *rand.Rand, dim, i int) []float32 {
			if i < 0 { // a query: the cosines differ at first order
				return gaussVec(r, dim)
			}
			v := slices.Clone(base)
			for j := range v {
				v[j] += float32(1e-4 * r.NormFloat64())
			}
			return v
		}
	},
	// Adversarial to the bound: each vector lies between two int8 grid
	// points, its rounding residual aligned with the query (±0.49 of a grid
	// step on every component, toward or away from it), so the quantized
	// score is off by most of the Cauchy–Schwarz bound, in both directions.
	// Queries are the fixed direction with a little noise. The vectors are
	// a few grid steps around one grid point, so vectors biased low and
	// biased high interleave closely around every k-th score.
	"aligned": func(r *rand.Rand, dim int) vecGen {
		// A ±1 query: with equal magnitudes the residual can be parallel to
		// it, which makes Cauchy–Schwarz nearly an equality.
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(2*r.IntN(2) - 1)
		}
		base := make([]int, dim)
		for j := range base {
			base[j] = r.IntN(241) - 120
		}
		return func(r *rand.Rand, dim, i int) []float32 {
			if i < 0 {
				v := slices.Clone(q)
				for j := range v {
					v[j] += float32(0.01 * r.NormFloat64())
				}
				return v
			}
			bias := float32(0.49)
			if r.IntN(2) == 0 {
				bias = -bias
			}
			top := r.IntN(dim)
			v := make([]float32, dim)
			for j := range v {
				if j == top {
					v[j] = 127 // fixes the scale at exactly one grid step per unit
					continue
				}
				c := float32(base[j] + r.IntN(5) - 2)
				if q[j] < 0 {
					v[j] = c - bias
				} else {
					v[j] = c + bias
				}
			}
			return v
		}
	},
	// Vectors of wildly different magnitudes (cosine ignores them).
	"scaled": func(r *rand.Rand, dim int) vecGen {
		return func(r *rand.Rand, dim, i int) []float32 {
			v := gaussVec(r, dim)
			s := float32(math.Pow(10, float64(r.IntN(13)-6)))
			for j := range v {
				v[j] *= s
			}
			return v
		}
	},
}

var vocabulary = func() []string {
	w := make([]string, 400)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i)
	}
	return w
}()

// zipfTerms draws n terms with a skewed frequency, so some terms are in most
// entries and others in few.
func zipfTerms(r *rand.Rand, n int) []string {
	ts := make([]string, n)
	for i := range ts {
		x := r.Float64()
		ts[i] = vocabulary[int(x*x*x*float64(len(vocabulary)))]
	}
	return ts
}

// randomEntry makes an entry with random filter fields; plain makes it
// active, standard, untimed and without agent or conversation.
func randomEntry(r *rand.Rand, i int, vec []float32, plain bool) Entry {
	e := Entry{
		ID:        fmt.Sprintf("m%06d", i),
		Vector:    vec,
		Terms:     zipfTerms(r, r.IntN(30)),
		Kind:      memgate.Kinds[r.IntN(len(memgate.Kinds))],
		Source:    memgate.Sources[r.IntN(len(memgate.Sources))],
		Status:    memgate.StatusActive,
		CreatedAt: micros(now.Add(-time.Duration(r.IntN(1000)) * time.Hour)),
	}
	if plain {
		return e
	}
	agents := []string{"", "", "a1", "a2"}
	e.Agent = agents[r.IntN(len(agents))]
	e.Conversation = agents[r.IntN(len(agents))]
	switch r.IntN(10) {
	case 0:
		e.Sensitivity = memgate.SensitivityRestricted
	case 1:
		e.Sensitivity = memgate.SensitivityStandard
	}
	if r.IntN(8) == 0 {
		e.Status = memgate.Statuses[r.IntN(len(memgate.Statuses))]
	}
	if r.IntN(6) == 0 {
		e.ExpiresAt = micros(now.Add(time.Duration(r.IntN(5)-2) * time.Hour))
	}
	if r.IntN(6) == 0 {
		e.ValidFrom = micros(now.Add(time.Duration(r.IntN(5)-2) * time.Hour))
	}
	if r.IntN(6) == 0 {
		e.ValidUntil = micros(now.Add(time.Duration(r.IntN(5)-1) * time.Hour))
	}
	return e
}

// randomFilter makes a filter that keeps a fair share of random entries.
func randomFilter(r *rand.Rand) Filter {
	f := Filter{Now: now}
	if r.IntN(2) == 0 {
		f.Agent = []string{"a1", "a2", "a3"}[r.IntN(3)]
	}
	if r.IntN(3) == 0 {
		f.Conversation = []string{"a1", "a2"}[r.IntN(2)]
	}
	if r.IntN(3) == 0 {
		f.Kinds = []memgate.Kind{memgate.Kinds[r.IntN(5)], memgate.Kinds[r.IntN(5)], memgate.KindFact}
	}
	if r.IntN(3) == 0 {
		f.Sources = []memgate.Source{memgate.Sources[r.IntN(6)], memgate.Sources[r.IntN(6)], memgate.SourceUser}
	}
	f.IncludeRestricted = r.IntN(2) == 0
	if r.IntN(2) == 0 {
		f.AsOf = now.Add(time.Duration(r.IntN(5)-2) * time.Hour)
	}
	if r.IntN(4) == 0 {
		f.Allow = func(id string) bool { return id[len(id)-1] != '3' }
	}
	return f
}

// refPass is the filter, written from the documented rules with time.Time
// comparisons, independently of the compiled form.
func refPass(e *Entry, f *Filter) bool {
	if e.Status != memgate.StatusActive {
		return false
	}
	if e.Sensitivity != "" && e.Sensitivity != memgate.SensitivityStandard && !f.IncludeRestricted {
		return false
	}
	if len(f.Kinds) > 0 && !(slices.Contains(f.Kinds, e.Kind) && slices.Contains(memgate.Kinds, e.Kind)) {
		return false
	}
	if len(f.Sources) > 0 && !(slices.Contains(f.Sources, e.Source) && slices.Contains(memgate.Sources, e.Source)) {
		return false
	}
	if f.Agent != "" && e.Agent != "" && e.Agent != f.Agent {
		return false
	}
	if f.Conversation != "" && e.Conversation != "" && e.Conversation != f.Conversation {
		return false
	}
	asOf := f.AsOf
	if asOf.IsZero() {
		asOf = f.Now
	}
	if e.ExpiresAt != 0 && !(time.UnixMicro(e.ExpiresAt).After(f.Now) && time.UnixMicro(e.ExpiresAt).After(asOf)) {
		return false
	}
	if e.ValidFrom != 0 && time.UnixMicro(e.ValidFrom).After(asOf) {
		return false
	}
	if e.ValidUntil != 0 && !time.UnixMicro(e.ValidUntil).After(asOf) {
		return false
	}
	return f.Allow == nil || f.Allow(e.ID)
}

type refHit struct {
	id    string
	score float64
}

func sortRef(hs []refHit) {
	slices.SortFunc(hs, func(a, b refHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// refVector is the brute-force exact top k by cosine.
func refVector(entries []Entry, q Query) []refHit {
	var hs []refHit
	if q.Vector == nil {
		return nil
	}
	for i := range entries {
		e := &entries[i]
		if e.Vector == nil || !refPass(e, &q.Filter) {
			continue
		}
		hs = append(hs, refHit{e.ID, float64(Cosine(q.Vector, e.Vector))})
	}
	sortRef(hs)
	return hs[:min(len(hs), q.K)]
}

// refBM25 scores every entry with the formula written out plainly; it also
// returns the idf sum and the scores of all entries by id.
func refBM25(entries []Entry, terms []string) (scores map[string]float64, idfSum float64) {
	n := len(entries)
	var total int
	df := map[string]int{}
	for _, e := range entries {
		total += len(e.Terms)
		seen := map[string]bool{}
		for _, t := range e.Terms {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(max(n, 1))
	var qs []string
	for _, t := range terms {
		if !slices.Contains(qs, t) {
			qs = append(qs, t)
		}
	}
	for _, t := range qs {
		idfSum += math.Log(1 + (float64(n)+PriorDocs-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	scores = map[string]float64{}
	for _, e := range entries {
		tf := map[string]int{}
		for _, t := range e.Terms {
			tf[t]++
		}
		var s float64
		for _, t := range qs {
			if tf[t] == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n)+PriorDocs-float64(df[t])+0.5)/(float64(df[t])+0.5))
			f := float64(tf[t])
			s += idf * f * (1.2 + 1) / (f + 1.2*(1-0.75+0.75*float64(len(e.Terms))/avg))
		}
		scores[e.ID] = s
	}
	return scores, idfSum
}

func refText(entries []Entry, q Query) []refHit {
	scores, _ := refBM25(entries, q.Terms)
	var hs []refHit
	for i := range entries {
		e := &entries[i]
		if s := scores[e.ID]; s > 0 && refPass(e, &q.Filter) {
			hs = append(hs, refHit{e.ID, s})
		}
	}
	sortRef(hs)
	return hs[:min(len(hs), q.K)]
}

func buildPartition(t testing.TB, cfg Config, entries []Entry) *Partition {
	t.Helper()
	p := NewPartition(cfg)
	for _, e := range entries {
		if err := p.Upsert(e); err != nil {
			t.Fatalf("upsert %s: %v", e.ID, err)
		}
	}
	p.Settle() // any inverted file trained
	return p
}

// channel returns the candidates of one channel in rank order.
func channel(res *Result, vector bool) []Candidate {
	var cs []Candidate
	for _, c := range res.Candidates {
		if vector && c.VectorRank > 0 || !vector && c.TextRank > 0 {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b Candidate) int {
		if vector {
			return a.VectorRank - b.VectorRank
		}
		return a.TextRank - b.TextRank
	})
	return cs
}

func closeEnough(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// checkResult holds a search result to the reference implementations: the
// vector channel bit for bit, the text channel up to float rounding, and the
// cross-filled scores of every candidate.
func checkResult(t *testing.T, label string, entries []Entry, q Query, res *Result) {
	t.Helper()
	byID := map[string]*Entry{}
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	want := refVector(entries, q)
	got := channel(res, true)
	if len(got) != len(want) {
		t.Fatalf("%s: vector channel has %d candidates, want %d", label, len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].id || float64(got[i].Cosine) != want[i].score || !got[i].HasVector {
			t.Fatalf("%s: vector rank %d = %s %v (%v), want %s %v", label, i+1, got[i].ID, got[i].Cosine, got[i].HasVector, want[i].id, want[i].score)
		}
	}

	scores, idfSum := refBM25(entries, q.Terms)
	if !closeEnough(res.IDFSum, idfSum) {
		t.Fatalf("%s: idf sum %v, want %v", label, res.IDFSum, idfSum)
	}
	wantT := refText(entries, q)
	gotT := channel(res, false)
	if len(gotT) != len(wantT) {
		t.Fatalf("%s: text channel has %d candidates, want %d", label, len(gotT), len(wantT))
	}
	for i := range wantT {
		if gotT[i].ID != wantT[i].id && !closeEnough(scores[gotT[i].ID], wantT[i].score) {
			t.Fatalf("%s: text rank %d = %s (%v), want %s (%v)", label, i+1, gotT[i].ID, gotT[i].BM25, wantT[i].id, wantT[i].score)
		}
	}

	seen := map[string]bool{}
	neighbours := false
	for _, c := range res.Candidates {
		if seen[c.ID] {
			t.Fatalf("%s: %s proposed twice", label, c.ID)
		}
		seen[c.ID] = true
		e := byID[c.ID]
		if e == nil || !refPass(e, &q.Filter) {
			t.Fatalf("%s: %s proposed but the filter refuses it", label, c.ID)
		}
		if !closeEnough(c.BM25, scores[c.ID]) {
			t.Fatalf("%s: %s bm25 %v, want %v", label, c.ID, c.BM25, scores[c.ID])
		}
		hasVec := q.Vector != nil && e.Vector != nil
		if c.HasVector != hasVec {
			t.Fatalf("%s: %s HasVector %v, want %v", label, c.ID, c.HasVector, hasVec)
		}
		if hasVec && c.Cosine != Cosine(q.Vector, e.Vector) {
			t.Fatalf("%s: %s cosine %v, want %v", label, c.ID, c.Cosine, Cosine(q.Vector, e.Vector))
		}
		matched := 0
		for _, qt := range distinctTerms(q.Terms, nil) {
			if slices.Contains(e.Terms, qt) {
				matched++
			}
		}
		if c.Matched != matched {
			t.Fatalf("%s: %s matched %d, want %d", label, c.ID, c.Matched, matched)
		}
		if c.CreatedAt != e.CreatedAt {
			t.Fatalf("%s: %s created %v, want %v", label, c.ID, c.CreatedAt, e.CreatedAt)
		}
		if c.Group != e.Group {
			t.Fatalf("%s: %s group %q, want %q", label, c.ID, c.Group, e.Group)
		}
		// Channel candidates first, then the neighbours, which no channel
		// proposed and which only a query that asks for them gets.
		switch {
		case c.Neighbor && (c.VectorRank != 0 || c.TextRank != 0):
			t.Fatalf("%s: neighbour %s has ranks %d, %d", label, c.ID, c.VectorRank, c.TextRank)
		case c.Neighbor && q.Neighbors == (Neighbors{}):
			t.Fatalf("%s: neighbour %s proposed to a query without neighbours", label, c.ID)
		case !c.Neighbor && c.VectorRank == 0 && c.TextRank == 0:
			t.Fatalf("%s: %s is neither ranked nor a neighbour", label, c.ID)
		case !c.Neighbor && neighbours:
			t.Fatalf("%s: channel candidate %s after a neighbour", label, c.ID)
		}
		neighbours = neighbours || c.Neighbor
	}
}

// seqModel is the documented insertion order, kept independently of the
// partition: a new id takes the next number; a replacement keeps its number
// (and so its place in its group) unless its group changes, when it takes
// the next number (the end of the new group).
type seqModel struct {
	entries map[string]Entry
	seq     map[string]int64
	last    int64
}

func newSeqModel() *seqModel {
	return &seqModel{entries: map[string]Entry{}, seq: map[string]int64{}}
}

func (m *seqModel) upsert(e Entry) {
	if old, ok := m.entries[e.ID]; !ok || old.Group != e.Group {
		m.last++
		m.seq[e.ID] = m.last
	}
	m.entries[e.ID] = e
}

func (m *seqModel) remove(id string) bool {
	_, ok := m.entries[id]
	delete(m.entries, id)
	delete(m.seq, id)
	return ok
}

// ordered returns the entries in insertion (sequence) order.
func (m *seqModel) ordered() []Entry {
	out := make([]Entry, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(m.seq[a.ID], m.seq[b.ID]) })
	return out
}

// denseSeqs numbers entries 1, 2, ... in order: the sequence numbers of a
// partition built from them.
func denseSeqs(entries []Entry) map[string]int64 {
	s := map[string]int64{}
	for i, e := range entries {
		s[e.ID] = int64(i + 1)
	}
	return s
}

// refNeighbors is the brute-force neighbour list of a result: entries are
// in insertion order, the channel candidates are taken from res (checkResult
// holds them to their own references).
func refNeighbors(entries []Entry, q Query, res *Result) []string {
	nb := q.Neighbors
	if nb == (Neighbors{}) {
		return nil
	}
	members := map[string][]*Entry{} // group → entries in order
	pos := map[string]int{}          // id → index in its group
	for i := range entries {
		e := &entries[i]
		if e.Group != "" {
			pos[e.ID] = len(members[e.Group])
			members[e.Group] = append(members[e.Group], e)
		}
	}
	cands := map[string]bool{}
	for _, c := range res.Candidates {
		if !c.Neighbor {
			cands[c.ID] = true
		}
	}
	limit := 2 * (nb.Prev + nb.Next)
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if !cands[id] && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, c := range res.Candidates {
		if c.Neighbor {
			continue
		}
		var g []*Entry
		for _, e := range entries {
			if e.ID == c.ID {
				g = members[e.Group]
				break
			}
		}
		if g == nil {
			continue
		}
		at := pos[c.ID]
		want := nb.Prev
		for j := at - 1; j >= 0 && j >= at-limit && want > 0; j-- {
			if refPass(g[j], &q.Filter) {
				add(g[j].ID)
				want--
			}
		}
		want = nb.Next
		for j := at + 1; j < len(g) && j <= at+limit && want > 0; j++ {
			if refPass(g[j], &q.Filter) {
				add(g[j].ID)
				want--
			}
		}
	}
	return out
}

// checkNeighbors holds the neighbours of res to refNeighbors, the sequence
// numbers of every candidate to seqs, and the BM25 of every candidate bit
// for bit to the text channel of the same query with K large enough for
// every entry (the score the text channel would have given it). It returns
// the number of neighbours.
func checkNeighbors(t *testing.T, label string, p *Partition, entries []Entry, seqs map[string]int64, q Query, res *Result) int {
	t.Helper()
	want := refNeighbors(entries, q, res)
	var got []string
	for _, c := range res.Candidates {
		if c.Neighbor {
			got = append(got, c.ID)
		}
		if c.Seq != seqs[c.ID] {
			t.Fatalf("%s: %s seq %d, want %d", label, c.ID, c.Seq, seqs[c.ID])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: neighbours %v, want %v", label, got, want)
	}
	if len(got) == 0 {
		return 0
	}
	all := q
	all.K, all.Neighbors = MaxK, Neighbors{}
	full, err := p.Search(all)
	if err != nil {
		t.Fatal(err)
	}
	bm25 := map[string]float64{}
	for _, c := range full.Candidates {
		bm25[c.ID] = c.BM25
	}
	for _, c := range res.Candidates {
		if b, ok := bm25[c.ID]; ok && math.Float64bits(b) != math.Float64bits(c.BM25) {
			t.Fatalf("%s: %s bm25 %v, the text channel gives %v", label, c.ID, c.BM25, b)
		} else if !ok && c.BM25 != 0 {
			t.Fatalf("%s: %s bm25 %v, not in the channels of the full search", label, c.ID, c.BM25)
		}
	}
	return len(got)
}
