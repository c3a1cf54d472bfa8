package rank_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/rank"
)

// partition is a tiny end-to-end setup: memories analysed, embedded and
// calibrated as the engine would, scored with the reference BM25.
type partition struct {
	texts []string
	ix    *bm25Index
	vecs  [][]float32
	embed func(string) []float32
	cal   *rank.Calibration
	// principal, when set, names whose memories these are (its terms
	// identify the partition, as in the engine).
	principal string
}

// calibrationOf embeds the probe set with embed.
func calibrationOf(t testing.TB, embed func(string) []float32) *rank.Calibration {
	t.Helper()
	var vs [][]float32
	for _, p := range rank.Probes() {
		vs = append(vs, embed(p))
	}
	c, err := rank.NewCalibration(vs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var builtinCal = sync.OnceValue(func() *rank.Calibration {
	var vs [][]float32
	for _, p := range rank.Probes() {
		vs = append(vs, builtin.Vector(p))
	}
	c, err := rank.NewCalibration(vs)
	if err != nil {
		panic(err)
	}
	return c
})

func newPartition(texts ...string) *partition {
	return newPartitionWith(builtin.Vector, builtinCal(), texts...)
}

func newPartitionWith(embed func(string) []float32, cal *rank.Calibration, texts ...string) *partition {
	p := &partition{texts: texts, ix: newBM25(texts, analysis.Terms), embed: embed, cal: cal}
	for _, s := range texts {
		p.vecs = append(p.vecs, embed(s))
	}
	return p
}

// candidates scores every memory for query as the engine does: the
// content query leaves out the terms that identify the partition.
func (p *partition) candidates(query string) ([]rank.Candidate, rank.Query) {
	terms := analysis.Terms(query)
	exclude := map[string]bool{}
	for _, t := range terms {
		if rank.Identifying(len(p.texts), p.ix.df[t]) || p.principal != "" && slices.Contains(analysis.Terms(p.principal), t) {
			exclude[t] = true
		}
	}
	var content []string
	for _, t := range terms {
		if !exclude[t] {
			content = append(content, t)
		}
	}
	bm, idfSum := p.ix.score(terms)
	cbm, cidfSum := p.ix.score(content)
	qv := p.embed(query)
	q := rank.Query{IDFSum: idfSum, Content: true, ContentIDFSum: cidfSum, Background: p.cal.Background(qv)}
	cv := qv
	q.ContentBackground = q.Background
	if len(exclude) > 0 {
		q.ContentBackground = rank.Background{}
		if text := analysis.FoldWithout(query, func(t string) bool { return exclude[t] }); text != "" {
			cv = p.embed(text)
			q.ContentBackground = p.cal.Background(cv)
		}
	}
	cands := make([]rank.Candidate, len(p.texts))
	for i := range p.texts {
		cands[i] = rank.Candidate{
			ID: p.texts[i], BM25: bm[i], ContentBM25: cbm[i], Cosine: dot(qv, p.vecs[i]), ContentCosine: dot(cv, p.vecs[i]),
			HasVector: true, Vector: p.vecs[i], Chars: len(p.texts[i]),
		}
	}
	return cands, q
}

func mustRank(t *testing.T, q rank.Query, cands []rank.Candidate, o rank.Options) ([]rank.Result, rank.Explain) {
	t.Helper()
	res, ex, err := rank.Rank(q, cands, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !(r.Score >= 0 && r.Score <= 1) {
			t.Fatalf("score %v outside [0, 1]", r.Score)
		}
		if o.Floor != rank.FloorOff && r.Score < ex.Floor {
			t.Fatalf("score %v below the floor %v was returned", r.Score, ex.Floor)
		}
	}
	return res, ex
}

var household = []string{
	"User: I adopted a rescue dog named Biscuit last spring.",
	"User: My sister lives in Lisbon and works as an architect.",
	"User: I'm allergic to peanuts, so please avoid recipes with them.",
	"User: We usually go hiking in the mountains on weekends.",
	"User: My favourite painter is Hokusai; I love his wave prints.",
	"User: I started learning the cello in January.",
	"User: The car needs new tyres before the winter trip.",
	"User: Our daughter's school play is on the 14th.",
}

func TestFloorSilencesUnrelatedQuery(t *testing.T) {
	t.Parallel()
	p := newPartition(household...)

	// Control: a related query returns its match first.
	cands, q := p.candidates("What is the name of my rescue dog?")
	res, ex := mustRank(t, q, cands, rank.Options{})
	if len(res) == 0 || res[0].ID != household[0] {
		t.Fatalf("related query: got %v (relatedness %.3f), want the dog memory first", ids(res), ex.Relatedness)
	}

	// An unrelated query returns nothing at the default floor...
	for _, query := range []string{
		"How do I configure Kubernetes ingress controllers?",
		"Quarterly revenue projections for the semiconductor division",
	} {
		cands, q := p.candidates(query)
		res, ex := mustRank(t, q, cands, rank.Options{K: 50})
		if len(res) != 0 {
			t.Errorf("%q: got %d results (relatedness %.3f), want none", query, len(res), ex.Relatedness)
		}
		if ex.BelowFloor != len(household) || ex.Floor != rank.DefaultFloor {
			t.Errorf("%q: explain %+v, want all %d below the default floor", query, ex, len(household))
		}
		// ...but the same candidates do come back with the floor off, so
		// the floor (not a lack of candidates) is what silenced it.
		res, _ = mustRank(t, q, cands, rank.Options{K: 50, Floor: rank.FloorOff})
		if len(res) != len(household) {
			t.Errorf("%q with the floor off: got %d results, want %d", query, len(res), len(household))
		}
	}
}

func TestScoresInUnitInterval(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		cands := make([]rank.Candidate, n)
		for i := range cands {
			cands[i] = rank.Candidate{
				ID:        string(rune('a' + i%26)),
				BM25:      rng.Float64() * 30,
				Cosine:    rng.Float64()*2 - 1,
				HasVector: rng.IntN(4) > 0,
				Group:     []string{"", "s1", "s2"}[rng.IntN(3)],
				Seq:       int64(rng.IntN(100)),
				Feedback:  rng.Float64()*4 - 2,
				Time:      time.Unix(int64(rng.IntN(1e9)), 0),
			}
		}
		q := rank.Query{IDFSum: rng.Float64() * 10, Now: time.Unix(2e9, 0)}
		o := rank.Options{
			K: 100, Floor: rank.FloorOff, VectorWeight: rng.Float64(),
			RecencyHalfLife: time.Hour, RecencyWeight: rng.Float64(), FeedbackWeight: rng.Float64(),
		}
		res, ex := mustRank(t, q, cands, o)
		if len(res) != n {
			t.Fatalf("floor off: %d results for %d candidates", len(res), n)
		}
		if !(ex.Relatedness >= 0 && ex.Relatedness <= 1) {
			t.Fatalf("relatedness %v", ex.Relatedness)
		}
		for i, r := range res {
			c := r.Components
			for _, v := range []float64{c.Text, c.Vector, c.Context, c.Fused} {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("component outside [0, 1]: %+v", c)
				}
			}
			if i > 0 && r.Score > res[i-1].Score {
				t.Fatalf("results not in score order at %d", i)
			}
			if r.Score > ex.Relatedness+1e-12 {
				t.Fatalf("score %v above relatedness %v", r.Score, ex.Relatedness)
			}
		}
	}
}

func TestNonFiniteInputsStayInRange(t *testing.T) {
	t.Parallel()
	cands := []rank.Candidate{
		{ID: "nan", BM25: math.NaN(), Cosine: math.NaN(), HasVector: true},
		{ID: "inf", BM25: math.Inf(1), Cosine: math.Inf(-1), HasVector: true, Feedback: math.NaN()},
		{ID: "ok", BM25: 2, Cosine: 0.5, HasVector: true},
	}
	res, _ := mustRank(t, rank.Query{IDFSum: 3}, cands, rank.Options{Floor: rank.FloorOff, FeedbackWeight: 0.5})
	if len(res) != 3 {
		t.Fatalf("got %d results", len(res))
	}
	for _, r := range res {
		if math.IsNaN(r.Score) {
			t.Errorf("%s: NaN score", r.ID)
		}
	}
}

func TestBudgetKeepsWholeMemoriesInOrder(t *testing.T) {
	t.Parallel()
	cands := []rank.Candidate{
		{ID: "a", BM25: 9, Chars: 40},
		{ID: "b", BM25: 8, Chars: 50},
		{ID: "c", BM25: 7, Chars: 10}, // would fit after b is dropped, but must not jump ahead
		{ID: "d", BM25: 6, Chars: 5},
	}
	q := rank.Query{IDFSum: 4}
	res, ex := mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff, Budget: 60})
	if got := ids(res); len(got) != 1 || got[0] != "a" {
		t.Fatalf("budget 60: got %v, want [a]", got)
	}
	if ex.OverBudget != 3 || ex.Returned != 1 {
		t.Errorf("explain %+v, want 3 over budget, 1 returned", ex)
	}
	res, _ = mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff, Budget: 105})
	if got := ids(res); len(got) != 4 {
		t.Errorf("budget 105: got %v, want all four (105 chars)", got)
	}
	res, _ = mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff, Budget: 39})
	if len(res) != 0 {
		t.Errorf("budget smaller than the best memory: got %v, want nothing (no partial memory)", ids(res))
	}
}

func TestMMRDemotesNearDuplicates(t *testing.T) {
	t.Parallel()
	p := newPartition(
		"User: I love hiking in the Alps with my brother every summer.",
		"User: I love hiking in the Alps with my brother every summer!",
		"User: Hiking last summer I also climbed a glacier near Chamonix.",
	)
	cands, q := p.candidates("hiking in the Alps in summer")
	plain, _ := mustRank(t, q, cands, rank.Options{})
	div, ex := mustRank(t, q, cands, rank.Options{MMR: true, MMRLambda: 0.5})
	if len(plain) != 3 || len(div) != 3 {
		t.Fatalf("got %d and %d results, want 3", len(plain), len(div))
	}
	// Without MMR the two near-duplicates lead; with it the distinct memory
	// moves up to second place.
	if plain[2].Index != 2 {
		t.Fatalf("without MMR: order %v, want the distinct memory last", indexes(plain))
	}
	if div[1].Index != 2 || !ex.Diversified {
		t.Errorf("with MMR: order %v (diversified %v), want the distinct memory second", indexes(div), ex.Diversified)
	}
}

func TestContextLiftsTheAnswerAfterAQuestion(t *testing.T) {
	t.Parallel()
	p := newPartition(
		"A: Congrats on the promotion! What is the new role?",
		"B: Thanks! I'm an assistant manager now.",
		"A: By the way, the weather is lovely today.",
		"B: Yes, we should go for a walk.",
	)
	cands, q := p.candidates("What was B promoted to?")
	for i := range cands {
		cands[i].Group, cands[i].Seq = "conv-1", int64(i)
	}
	res, _ := mustRank(t, q, cands, rank.Options{K: 2})
	if len(res) < 2 || res[1].Index != 1 || res[1].Components.Context <= 0 {
		t.Fatalf("got %v with components %+v; want the answer (index 1) second, lifted by context", indexes(res), components(res))
	}
	// Without a group, a memory shares nothing with its neighbours.
	for i := range cands {
		cands[i].Group = ""
	}
	res, _ = mustRank(t, q, cands, rank.Options{K: 4, Floor: rank.FloorOff})
	for _, r := range res {
		if r.Components.Context != 0 {
			t.Errorf("memory %d got context %v without a group", r.Index, r.Components.Context)
		}
	}
}

func TestExplainComponents(t *testing.T) {
	t.Parallel()
	p := newPartition(household...)
	cands, q := p.candidates("Which painter do I like? Hokusai prints")
	res, ex := mustRank(t, q, cands, rank.Options{K: 3})
	if len(res) == 0 {
		t.Fatal("no result")
	}
	top := res[0]
	if top.ID != household[4] {
		t.Fatalf("top = %q", top.ID)
	}
	c := top.Components
	if c.Text <= 0 || c.Vector <= 0 || c.Fused <= 0 || c.Recency != 1 || c.Feedback != 1 {
		t.Errorf("components %+v: want text, vector and fused evidence, neutral recency and feedback", c)
	}
	if math.Abs(top.Score-ex.Relatedness) > 1e-12 {
		t.Errorf("top score %v, relatedness %v: the best candidate scores exactly the relatedness", top.Score, ex.Relatedness)
	}
	if ex.Candidates != len(household) || ex.Returned != len(res) || ex.BelowFloor+ex.BeyondK+ex.Returned != ex.Candidates {
		t.Errorf("explain counts do not add up: %+v", ex)
	}
}

func TestKAndTies(t *testing.T) {
	t.Parallel()
	cands := make([]rank.Candidate, 30)
	for i := range cands {
		cands[i] = rank.Candidate{ID: string(rune('A' + i)), BM25: 1}
	}
	res, ex := mustRank(t, rank.Query{IDFSum: 1}, cands, rank.Options{K: 5, Floor: rank.FloorOff})
	if len(res) != 5 || ex.BeyondK != 25 {
		t.Fatalf("got %d results, beyond k %d", len(res), ex.BeyondK)
	}
	for i, r := range res {
		if r.Index != i {
			t.Errorf("ties must keep input order: position %d has candidate %d", i, r.Index)
		}
	}
}

func TestRecencyIsOffByDefault(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := []rank.Candidate{
		{ID: "old", BM25: 5, Time: now.AddDate(-2, 0, 0)},
		{ID: "new", BM25: 4.5, Time: now.AddDate(0, 0, -1)},
	}
	q := rank.Query{IDFSum: 3, Now: now}
	res, _ := mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff})
	if res[0].ID != "old" || res[0].Components.Recency != 1 {
		t.Errorf("default: got %v, want the stronger old memory first with no recency factor", ids(res))
	}
	res, _ = mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff, RecencyHalfLife: 30 * 24 * time.Hour, RecencyWeight: 0.5})
	if res[0].ID != "new" || res[1].Components.Recency >= 1 {
		t.Errorf("with recency: got %v (%+v), want the new memory first", ids(res), components(res))
	}
}

func TestNoCandidatesAndNoQueryTerms(t *testing.T) {
	t.Parallel()
	res, ex, err := rank.Rank(rank.Query{IDFSum: 2}, nil, rank.Options{})
	if err != nil || len(res) != 0 || ex.Candidates != 0 {
		t.Errorf("no candidates: %v %+v %v", res, ex, err)
	}
	// A query without terms and without similar vectors relates to nothing.
	res, _ = mustRank(t, rank.Query{}, []rank.Candidate{{ID: "x", BM25: 0, Cosine: 0.05, HasVector: true}}, rank.Options{})
	if len(res) != 0 {
		t.Errorf("empty query returned %v", ids(res))
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	bad := []rank.Options{
		{Floor: 1.5},
		{Floor: -0.5},
		{Budget: -1},
		{VectorWeight: 2},
		{ZLow: 5, ZHigh: 2},
		{Sharpness: 2},
		{MMRLambda: -1},
		{RecencyHalfLife: -time.Hour},
		{FeedbackWeight: 3},
		{Context: rank.Context{Prev: 2}},
	}
	for _, o := range bad {
		if _, _, err := rank.Rank(rank.Query{}, nil, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	d := rank.Options{}.WithDefaults()
	if d.Floor != rank.DefaultFloor || d.K != rank.DefaultK || d.Sharpness != rank.DefaultSharpness || d.Context != rank.DefaultContext() {
		t.Errorf("defaults %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

func TestBM25Formula(t *testing.T) {
	t.Parallel()
	// idf = ln(1 + (N + PriorDocs - df + 0.5)/(df + 0.5))
	if got, want := rank.IDF(100, 10), math.Log(1+(90.5+rank.PriorDocs)/10.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("IDF(100, 10) = %v, want %v", got, want)
	}
	if rank.IDF(10, 0) <= rank.IDF(10, 1) || rank.IDF(10, 10) <= 0 {
		t.Error("idf must fall with df and stay positive")
	}
	// One occurrence in an average-length memory scores exactly idf.
	if got := rank.BM25(2, 1, 10, 10); math.Abs(got-2) > 1e-12 {
		t.Errorf("BM25(idf 2, tf 1, avg length) = %v, want 2", got)
	}
	if rank.BM25(2, 0, 10, 10) != 0 || rank.BM25(2, 3, 10, 10) >= 2*(rank.K1+1) {
		t.Error("BM25 must be 0 without the term and below idf·(k1+1)")
	}
	// Text evidence: all terms once at average length is 1/(k1+1).
	if got := rank.TextEvidence(5, 5); math.Abs(got-1/(rank.K1+1)) > 1e-12 {
		t.Errorf("TextEvidence = %v", got)
	}
}

func ids(res []rank.Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.ID)
	}
	return out
}

func indexes(res []rank.Result) []int {
	var out []int
	for _, r := range res {
		out = append(out, r.Index)
	}
	return out
}

func components(res []rank.Result) []rank.Components {
	var out []rank.Components
	for _, r := range res {
		out = append(out, r.Components)
	}
	return out
}

func BenchmarkRank2000(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	cands := make([]rank.Candidate, 2000)
	for i := range cands {
		cands[i] = rank.Candidate{BM25: rng.Float64() * 10, Cosine: rng.Float64(), HasVector: true, Group: "g" + string(rune('a'+i%20)), Seq: int64(i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := rank.Rank(rank.Query{IDFSum: 8}, cands, rank.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

var foreignOf = map[string]string{"conv-26": "conv-30", "conv-30": "conv-26", "conv-41": "conv-42", "conv-42": "conv-41"}

// bm25Index is the reference brute-force BM25 over one partition.
type bm25Index struct {
	docs  []map[string]int
	lens  []int
	avgdl float64
	df    map[string]int
}

func newBM25(texts []string, terms func(string) []string) *bm25Index {
	ix := &bm25Index{df: map[string]int{}}
	total := 0
	for _, s := range texts {
		tf := map[string]int{}
		ts := terms(s)
		for _, x := range ts {
			tf[x]++
		}
		for x := range tf {
			ix.df[x]++
		}
		ix.docs = append(ix.docs, tf)
		ix.lens = append(ix.lens, len(ts))
		total += len(ts)
	}
	ix.avgdl = float64(total) / float64(max(1, len(texts)))
	return ix
}

// score returns every memory's BM25 and the query's idf sum (distinct
// terms, absent ones included).
func (ix *bm25Index) score(query []string) ([]float64, float64) {
	out := make([]float64, len(ix.docs))
	idfSum := 0.0
	seen := map[string]bool{}
	for _, x := range query {
		if seen[x] {
			continue
		}
		seen[x] = true
		idf := rank.IDF(len(ix.docs), ix.df[x])
		idfSum += idf
		for i, d := range ix.docs {
			out[i] += rank.BM25(idf, d[x], ix.lens[i], ix.avgdl)
		}
	}
	return out, idfSum
}

// system is one retrieval configuration over all partitions.
func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

var ks = []int{1, 5, 10, 20}
