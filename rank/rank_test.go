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
// content query leaves out the terms that identify the partition, each
// content term is matched by the memories that hold it, and the content
// query's vector is compared with theirs.
func (p *partition) candidates(query string) ([]rank.Candidate, rank.Query) {
	exclude := map[string]bool{}
	var content []string
	seen := map[string]bool{}
	for _, t := range analysis.Terms(query) {
		if rank.Identifying(len(p.texts), p.ix.df[t]) || p.principal != "" && slices.Contains(analysis.Terms(p.principal), t) {
			exclude[t] = true
			continue
		}
		if !seen[t] {
			seen[t] = true
			content = append(content, t)
		}
	}
	q := rank.Query{AvgDocLen: p.ix.avgdl, Memories: len(p.texts), Null: p.cal.Null()}
	for _, t := range content {
		q.Terms = append(q.Terms, rank.Term{IDF: rank.IDF(len(p.texts), p.ix.df[t])})
	}
	var cv []float32
	if text := analysis.FoldWithout(query, func(t string) bool { return exclude[t] }); text != "" {
		cv = p.embed(text)
		q.Background = p.cal.Background(cv)
	}
	cands := make([]rank.Candidate, len(p.texts))
	for i := range p.texts {
		c := rank.Candidate{ID: p.texts[i], DocLen: p.ix.lens[i], Vector: p.vecs[i], Chars: len(p.texts[i])}
		for _, t := range content {
			c.Matches = append(c.Matches, rank.Match{Weight: min(1, float64(p.ix.docs[i][t])), TF: p.ix.docs[i][t]})
		}
		if cv != nil {
			c.Cosine, c.HasVector = dot(cv, p.vecs[i])/math.Sqrt(dot(cv, cv)*dot(p.vecs[i], p.vecs[i])), true
		}
		cands[i] = c
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

// randomCandidates returns n candidates with random evidence for a query
// of terms terms.
func randomCandidates(rng *rand.Rand, n, terms int) []rank.Candidate {
	cands := make([]rank.Candidate, n)
	for i := range cands {
		c := rank.Candidate{
			ID:        string(rune('a' + i%26)),
			DocLen:    1 + rng.IntN(30),
			Cosine:    rng.Float64()*2 - 1,
			HasVector: rng.IntN(4) > 0,
			Group:     []string{"", "s1", "s2"}[rng.IntN(3)],
			Seq:       int64(rng.IntN(100)),
			Feedback:  rng.Float64()*4 - 2,
			Time:      time.Unix(int64(rng.IntN(1e9)), 0),
		}
		for range terms {
			c.Matches = append(c.Matches, rank.Match{Weight: []float64{0, 0, 0.5, 1}[rng.IntN(4)], TF: rng.IntN(3)})
		}
		cands[i] = c
	}
	return cands
}

func randomQuery(rng *rand.Rand, terms int) rank.Query {
	q := rank.Query{AvgDocLen: 10, Memories: 1 + rng.IntN(5000), Now: time.Unix(2e9, 0),
		Background: rank.Background{Mean: rng.Float64() * 0.5, SD: 0.01 + rng.Float64()*0.2}}
	for range terms {
		q.Terms = append(q.Terms, rank.Term{IDF: rng.Float64() * 8, Specificity: rng.Float64(), Modifier: rng.IntN(2) == 0})
	}
	return q
}

func TestScoresInUnitInterval(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n, terms := 1+rng.IntN(40), rng.IntN(5)
		cands, q := randomCandidates(rng, n, terms), randomQuery(rng, terms)
		o := rank.Options{
			K: 100, Floor: rank.FloorOff, SpecificityPower: rng.Float64() * 3, ModifierWeight: rng.Float64(),
			RecencyHalfLife: time.Hour, RecencyWeight: rng.Float64(), FeedbackWeight: rng.Float64(),
		}
		res, ex := mustRank(t, q, cands, o)
		if len(res) != n {
			t.Fatalf("floor off: %d results for %d candidates", len(res), n)
		}
		if !(ex.Relatedness >= 0 && ex.Relatedness <= 1) {
			t.Fatalf("best score %v", ex.Relatedness)
		}
		for i, r := range res {
			c := r.Components
			for _, v := range []float64{c.Text, c.Vector, c.Own, c.Context, c.Fused} {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("component outside [0, 1]: %+v", c)
				}
			}
			if i > 0 && r.Score > res[i-1].Score {
				t.Fatalf("results not in score order at %d", i)
			}
			if r.Score > ex.Relatedness+1e-12 {
				t.Fatalf("score %v above the best score %v", r.Score, ex.Relatedness)
			}
		}
		// At the default floor, nothing without evidence of its own.
		res, _ = mustRank(t, q, cands, rank.Options{K: 100})
		for _, r := range res {
			if r.Components.Own <= 0 {
				t.Fatalf("a result without evidence of its own: %+v", r.Components)
			}
		}
	}
}

func TestNonFiniteInputsStayInRange(t *testing.T) {
	t.Parallel()
	cands := []rank.Candidate{
		{ID: "nan", Matches: []rank.Match{{Weight: math.NaN(), TF: 1}}, Cosine: math.NaN(), HasVector: true},
		{ID: "inf", Matches: []rank.Match{{Weight: math.Inf(1), TF: 1}}, Cosine: math.Inf(-1), HasVector: true, Feedback: math.NaN()},
		{ID: "ok", Matches: []rank.Match{{Weight: 1, TF: 1}}, Cosine: 0.5, HasVector: true},
	}
	q := rank.Query{Terms: []rank.Term{{IDF: math.NaN()}, {IDF: 2}}, AvgDocLen: math.NaN(), Memories: 3, Background: rank.Background{Mean: 0.1, SD: 0.1}}
	res, _ := mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff, FeedbackWeight: 0.5})
	if len(res) != 3 {
		t.Fatalf("got %d results", len(res))
	}
	for _, r := range res {
		if math.IsNaN(r.Score) {
			t.Errorf("%s: NaN score", r.ID)
		}
	}
}

// matching returns a candidate that holds a query's only term tf times
// and is docLen terms long.
func matching(id string, tf, docLen, chars int) rank.Candidate {
	return rank.Candidate{ID: id, Matches: []rank.Match{{Weight: 1, TF: tf}}, DocLen: docLen, Chars: chars}
}

var oneTerm = rank.Query{Terms: []rank.Term{{IDF: 2}}, AvgDocLen: 10, Memories: 4}

func TestBudgetKeepsWholeMemoriesInOrder(t *testing.T) {
	t.Parallel()
	cands := []rank.Candidate{
		matching("a", 3, 5, 40),
		matching("b", 2, 5, 50),
		matching("c", 1, 10, 10), // would fit after b is dropped, but must not jump ahead
		matching("d", 1, 20, 5),
	}
	res, ex := mustRank(t, oneTerm, cands, rank.Options{Floor: rank.FloorOff, Budget: 60})
	if got := ids(res); len(got) != 1 || got[0] != "a" {
		t.Fatalf("budget 60: got %v, want [a]", got)
	}
	if ex.OverBudget != 3 || ex.Returned != 1 {
		t.Errorf("explain %+v, want 3 over budget, 1 returned", ex)
	}
	res, _ = mustRank(t, oneTerm, cands, rank.Options{Floor: rank.FloorOff, Budget: 105})
	if got := ids(res); len(got) != 4 {
		t.Errorf("budget 105: got %v, want all four (105 chars)", got)
	}
	res, _ = mustRank(t, oneTerm, cands, rank.Options{Floor: rank.FloorOff, Budget: 39})
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

// A conversation turn takes evidence from its neighbours, but only with
// evidence of its own: one that holds nothing of the query is never
// returned at the floor, however strong its neighbour (the control: with
// a little evidence of its own, the same neighbour lifts it over the
// floor). With the floor off it is ranked by what its neighbours give.
func TestContextLiftsOnlyWhatHasEvidenceOfItsOwn(t *testing.T) {
	t.Parallel()
	q := rank.Query{Terms: []rank.Term{{IDF: 3}, {IDF: 3}}, AvgDocLen: 10, Memories: 3}
	turns := func(second []rank.Match) []rank.Candidate {
		return []rank.Candidate{
			{ID: "question", Matches: []rank.Match{{Weight: 1, TF: 1}, {Weight: 1, TF: 1}}, DocLen: 10, Group: "c", Seq: 1},
			{ID: "answer", Matches: second, DocLen: 10, Group: "c", Seq: 2},
			{ID: "other", DocLen: 10, Group: "d", Seq: 3},
		}
	}
	res, _ := mustRank(t, q, turns(nil), rank.Options{})
	if got := ids(res); !slices.Equal(got, []string{"question"}) {
		t.Fatalf("an answer without evidence of its own: got %v, want only the question", got)
	}
	half := []rank.Match{{Weight: 0.25, TF: 1}}
	res, _ = mustRank(t, q, turns(half), rank.Options{NoContext: true, Floor: rank.FloorOff})
	alone := res[1].Score
	res, _ = mustRank(t, q, turns(half), rank.Options{})
	if got := ids(res); !slices.Equal(got, []string{"question", "answer"}) || res[1].Components.Context <= 0 || !(res[1].Score > alone) || alone >= rank.DefaultFloor {
		t.Fatalf("an answer holding an eighth of the query: got %v %+v (alone %.3f), want it second, lifted by its neighbour", got, components(res), alone)
	}
	res, _ = mustRank(t, q, turns(nil), rank.Options{Floor: rank.FloorOff})
	if got := ids(res); !slices.Equal(got, []string{"question", "answer", "other"}) {
		t.Errorf("floor off: got %v, want the neighbour of the question before the stranger", got)
	}
	// Without a group, a memory shares nothing with its neighbours.
	cands := turns(half)
	for i := range cands {
		cands[i].Group = ""
	}
	res, _ = mustRank(t, q, cands, rank.Options{Floor: rank.FloorOff})
	for _, r := range res {
		if r.Components.Context != 0 {
			t.Errorf("memory %d got context %v without a group", r.Index, r.Components.Context)
		}
	}
}

// A memory's score is its own evidence: a memory that holds nothing of
// the content query scores 0 beside one that holds all of it, and holding
// more of the query (by weight) scores more.
func TestScoreIsTheMemorysOwnEvidence(t *testing.T) {
	t.Parallel()
	q := rank.Query{Terms: []rank.Term{{IDF: 4}, {IDF: 1}}, AvgDocLen: 10, Memories: 3}
	cands := []rank.Candidate{
		{ID: "both", Matches: []rank.Match{{Weight: 1, TF: 1}, {Weight: 1, TF: 1}}, DocLen: 10},
		{ID: "rare", Matches: []rank.Match{{Weight: 1, TF: 1}}, DocLen: 10},
		{ID: "common", Matches: []rank.Match{{}, {Weight: 1, TF: 1}}, DocLen: 10},
		{ID: "related", Matches: []rank.Match{{Weight: 0.5, TF: 1}}, DocLen: 10},
		{ID: "none", DocLen: 10},
	}
	sc := rank.Score(q, cands, rank.Options{TextScale: 1})
	if !(sc.Scores[0] > sc.Scores[1] && sc.Scores[1] > sc.Scores[3] && sc.Scores[3] > sc.Scores[2] && sc.Scores[4] == 0) {
		t.Fatalf("scores %v: want all > the rare term > the rare term's relative > the common term > none (0)", sc.Scores)
	}
	if got, want := sc.Components[1].Text, 0.8; math.Abs(got-want) > 1e-12 {
		t.Errorf("text evidence of the rare term alone %v, want its share of the weight %v", got, want)
	}
}

// Vector evidence stands out from the partition's chance maximum: a
// z-score that is overwhelming among 3 memories is ordinary among 3,000,
// and a clear match passes the floor on its vector alone in the first.
func TestVectorEvidenceAgainstThePartitionsNull(t *testing.T) {
	t.Parallel()
	var normal *rank.Null
	for _, z := range []float64{3, 4, 5, 6} {
		prev := math.Inf(1)
		for _, n := range []int{1, 3, 30, 300, 3000} {
			x := normal.Excess(z, n)
			if !(x < prev) {
				t.Fatalf("excess of z %v grows from %v to %v at %d memories", z, prev, x, n)
			}
			prev = x
		}
	}
	bg := rank.Background{Mean: 0.2, SD: 0.1}
	cos := bg.Mean + 4.5*bg.SD // z = 4.5
	vec := func(n int) float64 {
		q := rank.Query{Background: bg, Memories: n}
		return rank.Score(q, []rank.Candidate{{ID: "m", Cosine: cos, HasVector: true}}, rank.Options{}).Scores[0]
	}
	if s := vec(3); s < rank.DefaultFloor {
		t.Errorf("z 4.5 among 3 memories scores %.3f, want at least the floor %.2f", s, rank.DefaultFloor)
	}
	if s := vec(3000); s >= rank.DefaultFloor {
		t.Errorf("z 4.5 among 3,000 memories scores %.3f, want below the floor %.2f", s, rank.DefaultFloor)
	}
	if a, b := normal.Excess(8, 10), normal.Excess(9, 10); !(b > a) || math.IsInf(b, 0) {
		t.Errorf("far tail: excess %v then %v", a, b)
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
	if c.Text <= 0 || c.Own <= 0 || c.Fused != top.Score || c.Recency != 1 || c.Feedback != 1 {
		t.Errorf("components %+v: want text and own evidence, fused = score, neutral recency and feedback", c)
	}
	if math.Abs(top.Score-ex.Relatedness) > 1e-12 {
		t.Errorf("top score %v, best %v", top.Score, ex.Relatedness)
	}
	if ex.Candidates != len(household) || ex.Returned != len(res) || ex.BelowFloor+ex.BeyondK+ex.Returned != ex.Candidates {
		t.Errorf("explain counts do not add up: %+v", ex)
	}
}

func TestKAndTies(t *testing.T) {
	t.Parallel()
	cands := make([]rank.Candidate, 30)
	for i := range cands {
		cands[i] = matching(string(rune('A'+i)), 1, 10, 1)
	}
	res, ex := mustRank(t, oneTerm, cands, rank.Options{K: 5})
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
	old, recent := matching("old", 2, 10, 1), matching("new", 1, 10, 1)
	old.Time, recent.Time = now.AddDate(-2, 0, 0), now.AddDate(0, 0, -1)
	q := oneTerm
	q.Now = now
	res, _ := mustRank(t, q, []rank.Candidate{old, recent}, rank.Options{Floor: rank.FloorOff})
	if res[0].ID != "old" || res[0].Components.Recency != 1 {
		t.Errorf("default: got %v, want the stronger old memory first with no recency factor", ids(res))
	}
	res, _ = mustRank(t, q, []rank.Candidate{old, recent}, rank.Options{Floor: rank.FloorOff, RecencyHalfLife: 30 * 24 * time.Hour, RecencyWeight: 0.5})
	if res[0].ID != "new" || res[1].Components.Recency >= 1 {
		t.Errorf("with recency: got %v (%+v), want the new memory first", ids(res), components(res))
	}
}

func TestNoCandidatesAndNoQueryTerms(t *testing.T) {
	t.Parallel()
	res, ex, err := rank.Rank(oneTerm, nil, rank.Options{})
	if err != nil || len(res) != 0 || ex.Candidates != 0 {
		t.Errorf("no candidates: %v %+v %v", res, ex, err)
	}
	// A query without terms and without a vector relates to nothing.
	res, _ = mustRank(t, rank.Query{}, []rank.Candidate{{ID: "x", Cosine: 0.05, HasVector: true}}, rank.Options{})
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
		{TextScale: -1},
		{VectorLow: 5, VectorHigh: 2},
		{MMRLambda: -1},
		{RecencyHalfLife: -time.Hour},
		{FeedbackWeight: 3},
		{Context: rank.Context{Prev: 2}},
		{Context: rank.Context{Gain: 1.5}},
	}
	for _, o := range bad {
		if _, _, err := rank.Rank(rank.Query{}, nil, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	d := rank.Options{}.WithDefaults()
	if d.Floor != rank.DefaultFloor || d.K != rank.DefaultK || d.TextScale != rank.DefaultTextScale || d.Context != rank.DefaultContext() {
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
	// Text evidence: every term once at average length is all of it.
	if got := rank.TextEvidence(oneTerm, matching("x", 1, 10, 1), rank.Options{}); math.Abs(got-1) > 1e-12 {
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
	cands, q := randomCandidates(rng, 2000, 4), randomQuery(rng, 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := rank.Rank(q, cands, rank.Options{}); err != nil {
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

// A name lowers, never lifts: when the query names the person asked about,
// a memory that does not name them scores less than one that does; a
// query that names nobody scores both alike, and a name alone scores
// nothing.
func TestANameLowersNeverLifts(t *testing.T) {
	t.Parallel()
	hold := []rank.Match{{Weight: 1, TF: 1}}
	cands := []rank.Candidate{
		{ID: "named", Matches: hold, DocLen: 10, Named: true},
		{ID: "other", Matches: hold, DocLen: 10},
		{ID: "only the name", DocLen: 10, Named: true},
	}
	q := rank.Query{Terms: []rank.Term{{IDF: 2}}, AvgDocLen: 10, Memories: 3, Named: true}
	sc := rank.Score(q, cands, rank.Options{TextScale: 0.5})
	if !(sc.Scores[0] > sc.Scores[1] && sc.Scores[1] > 0 && sc.Scores[2] == 0) {
		t.Errorf("query naming the person: scores %v, want named > other > 0 = only the name", sc.Scores)
	}
	q.Named = false
	sc = rank.Score(q, cands, rank.Options{TextScale: 0.5})
	if sc.Scores[0] != sc.Scores[1] {
		t.Errorf("query naming nobody: scores %v, want the first two alike", sc.Scores)
	}
}
