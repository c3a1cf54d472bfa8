// Package rank turns the evidence that the index gathered for a recall query
// into final scores in [0, 1], applies the relevance floor, and picks what
// recall returns: at most k memories, optionally diversified, that fit a
// character budget, each with the components of its score.
//
// It is pure computation: no I/O, no clock (the caller passes Now), no
// global state, no logging. It never filters by scope, status or expiry —
// those belong to the store query and are applied before candidates reach
// rank — and it never sees memory content, only numbers.
//
// # Scores
//
// For a query and each candidate memory i of one partition:
//
//   - text_i = BM25_i / ((K1+1)·IDFSum), clamped to [0, 1]: the share of the
//     query's maximum attainable BM25 mass that the memory matches. BM25 is
//     the index's score of the memory (formula in BM25 and IDF: k1 = 1.2,
//     b = 0.75, idf = ln(1 + (N + PriorDocs − df + 0.5)/(df + 0.5)), query terms from
//     analysis.Terms, deduplicated) and IDFSum is the sum of idf over the
//     distinct query terms, including terms that no memory of the partition
//     contains (df = 0: they carry the largest idf). A memory that contains
//     every query term once, at average length, scores 1/(K1+1) ≈ 0.45. A
//     query whose distinctive words the partition has never seen (a name,
//     a topic) therefore gets low text evidence everywhere.
//   - vector_i = Calibrate(z_i, ZLow, ZHigh): the memory's z-score (see
//     Calibration: how far its cosine with the query stands above the
//     query's cosines with the probe set, in deviations), mapped linearly
//     to [0, 1]. It is 0 when the memory has no vector comparable with the
//     query's.
//   - order_vector_i is the content query's z-score mapped the same way
//     from OrderZLow (one deviation lower than relatedness needs: a
//     paraphrase is told from an unrelated memory well below ZLow).
//   - content_text_i and content_vector_i are the same for the content
//     query: the query without the terms that identify the partition (see
//     "Names are not evidence").
//   - evidence_i = (1 − VectorWeight)·text_i + VectorWeight·order_vector_i
//     (see "Vector weight"); when no memory holds a content term of the
//     query, text evidence is the identifying terms' alone, which cannot
//     tell memories apart, and evidence_i = order_vector_i.
//   - context_i: a message memory is rarely self-contained (an answer follows
//     its question), so evidence flows from neighbours in the same
//     conversation (Candidate.Group, ordered by Candidate.Seq) as a noisy-or:
//     s_i = 1 − (1−evidence_i)·Π(1 − w·evidence_j) over the previous two,
//     the next one, and the best memory of the conversation, with the weights
//     of Context. context_i = s_i − evidence_i is what the neighbours added.
//   - optional recency and feedback factors multiply s_i (off by default).
//   - relatedness R = max over candidates of min(1, RelatednessText·
//     content_text + RelatednessVector·content_vector) (of min(1,
//     TextOnlyRelatedness·content_text) for a memory without a comparable
//     vector): how strongly the partition answers the query at all, on
//     the query's content; absolute, without context.
//   - score_i = R · (s_i / max_j s_j)^Sharpness.
//
// So the best candidate scores exactly R, and the others decay with their
// standing relative to it: the order is that of s, and the floor is a floor
// on an absolute quantity. An unrelated query (R below Floor) returns
// nothing, whatever k is; a related query returns the memories whose
// evidence is close enough to the best one. Sharpness = 1 makes the decay
// proportional; Sharpness → 0 would return every candidate of a related
// query. The blend is deliberate: a floor on each memory's own evidence
// alone cannot separate related from unrelated queries without losing
// recall, because the memory that answers a question often shares few
// words with it while its conversation clearly does.
//
// # Calibration
//
// Cosines mean different things for different embedders: unrelated texts
// score about 0.1 with the built-in lexical model, 0.5 with GloVe sentence
// vectors, above 0.8 with some neural models, whose vectors all lie in a
// narrow cone. A floor on raw cosines calibrated for one model passes
// everything from another. So every embedder model (its provider, model
// and dimension) is measured on the same probe set (Probes: 201 short,
// unrelated statements about made-up people, ProbeVersion), embedded once
// and kept in the store (package engine). For each query, Background is
// the mean and deviation of its cosines with the probes: what an unrelated
// memory's cosine with this query looks like, for this model and this
// query (a query close to everything, a hub, has a high background). A
// memory's z-score is how many deviations its cosine stands above that
// mean, and its vector evidence is Calibrate(z, ZLow, ZHigh).
//
// A z-score is unchanged when a model's cosines are shifted and compressed
// (cos' = a + b·cos, b > 0), which is what another model mostly looks like
// to a floor, so one ZLow, ZHigh, floor and set of relatedness weights
// serve every embedder. The engine's TestFloorHoldsForAShiftedEmbedder
// checks it with a fake model whose cosines all exceed 0.8: the same
// questions recall the same memories. (Centering the vectors on the probes'
// mean direction was measured too: it changed no LoCoMo figure by more
// than 0.012 and made the index re-score far more vectors, so it is not
// done.) explain shows each query's background, the probe count and each
// result's z-score.
//
// # Names are not evidence
//
// The principal's own name (the terms of its id: "alice"), and in a
// partition of at least IdentifyingMinMemories (20) memories every term in
// at least IdentifyingShare (40 %) of them, identify the partition: the
// person's name, the speakers' names, a word in nearly everything it
// holds. (In a smaller partition a dominant topic would look the same.) Such a term says whose memory this is, not what the query asks:
// "What car does Alice drive?" against Alice's memories shares "Alice"
// with all of them. The engine embeds the query a second time without its
// identifying words (the content query) and the index scores every
// candidate for it too; relatedness is judged on the content query alone,
// in the text and the vector channel, so a known name lifts nothing over
// the floor. Ordering keeps the whole query's text (the name does tell
// which of two speakers a question is about) and the content query's
// vector. On LoCoMo every speaker's name is in 47–83 % of its
// conversation's turns and facts, and no other term in more than 38 %.
//
// # Vector weight
//
// The vector's share of ordering is measured per embedder on LoCoMo
// (BENCHMARKS.md): LexicalVectorWeight for the built-in lexical model (any
// positive weight lowered recall), HybridVectorWeight for the built-in
// hybrid model and SemanticVectorWeight for a semantic model over the wire
// (GloVe sentence vectors; also the weight of every other model, which
// memgate cannot measure offline). A weight above those lowered turns
// recall@10 for both: word-vector semantics help facts more than chatty
// turns.
//
// # The default floor
//
// DefaultFloor, ZLow/ZHigh, the relatedness weights, Sharpness,
// IdentifyingShare and PriorDocs were chosen on the LoCoMo development
// split (bench/locomo: `memgate bench locomo --embedders
// builtin,builtin:lexical-v1,glove-wire`, through the whole engine), for
// the three embedders at once, with one set of values: every question is
// asked of its own person's memories (recall), of the paired person's
// (foreign silence: nothing should come back) and of the paired person's
// with the speakers' names swapped in (name-swapped silence: the name is
// known, the topic mostly not), for turns and for facts. A grid of 1,872
// combinations per embedder (ZLow 1.5–3, ZHigh 5–12, RelatednessText
// 1.5–2, RelatednessVector 0.15–0.5, Sharpness 0.5–0.75, floors 0.15–0.45)
// was searched for the values that keep foreign silence ≥ 0.90,
// name-swapped silence ≥ 0.60 and facts injected per question ≤ 6 for all
// three while losing the least recall@10 to the floor. The values chosen
// give (BENCHMARKS.md has every figure): foreign silence 0.92–0.96,
// name-swapped silence 0.69–0.80, 5.3–6.0 facts injected per question,
// and a recall@10 drop of 0.12–0.15 from the floor-off figure. No
// combination met silence ≥ 0.90 with a drop under 0.10: with lexical and
// word-vector evidence, the questions a floor silences overlap the own
// questions it keeps (a logistic model over eleven relatedness features,
// fitted on one half, kept 0.91–0.98 of recall@10 on the other at the
// same silence, before any per-memory cut). The earlier floor (0.22 on ½ text + ½ lexical cosine)
// lost 0.024 but let 15 % of foreign and 82 % of name-swapped questions
// through. scripts/test runs the harness with the default floor's
// targets, so a change that breaks them fails CI.
//
// # Candidates
//
// Rank expects the candidates of one partition and one query: every memory
// with non-zero text evidence or vector similarity, at best the whole
// partition (the relatedness, the context of neighbours and the relative
// scores are computed over what it is given: a memory whose neighbour was
// left out simply gets no context from it). Candidates must already be
// visible to the caller: rank only orders and cuts.
package rank

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/memgate/memgate"
)

// BM25 parameters. The index and rank must agree on them.
const (
	K1 = 1.2
	B  = 0.75
)

// PriorDocs is the number of background memories, holding none of the
// partition's terms, that IDF counts besides the partition's own (see
// package index, PriorDocs: they keep one unmatched word of a query from
// outweighing everything it matches in a small partition).
const PriorDocs = 20

// IDF returns the BM25 idf of a term that occurs in df of the n memories of a
// partition: ln(1 + (n + PriorDocs − df + 0.5)/(df + 0.5)). It is positive
// for every 0 ≤ df ≤ n, and largest for terms the partition does not
// contain.
func IDF(n, df int) float64 {
	df = max(0, min(df, n))
	return math.Log(1 + (float64(n)+PriorDocs-float64(df)+0.5)/(float64(df)+0.5))
}

// BM25 returns the contribution of one query term with the given idf to the
// score of a memory where it occurs tf times, the memory having docLen terms
// and the partition avgDocLen terms per memory on average. A memory's BM25
// score is the sum over the distinct query terms.
func BM25(idf float64, tf, docLen int, avgDocLen float64) float64 {
	if tf <= 0 {
		return 0
	}
	if avgDocLen <= 0 {
		avgDocLen = 1
	}
	f := float64(tf)
	return idf * f * (K1 + 1) / (f + K1*(1-B+B*float64(docLen)/avgDocLen))
}

// Defaults. See the package comment for how they were measured.
const (
	DefaultFloor     = 0.33
	DefaultSharpness = 0.5
	// DefaultZLow and DefaultZHigh map a memory's z-score (deviations above
	// the query's background, see Calibration) to vector evidence in
	// [0, 1]: 0 at or below ZLow, 1 at or above ZHigh. They hold for every
	// embedder: the z-score is the scale all share.
	DefaultZLow  = 3.0
	DefaultZHigh = 12.0
	// OrderZLow is where the vector starts to count in ordering: one
	// deviation above the background. Below ZLow a memory's vector is no
	// evidence that the partition relates to the query, but it still tells
	// a paraphrase from an unrelated memory.
	OrderZLow = 2.0
	// RelatednessText and RelatednessVector weigh a memory's content text
	// and content vector evidence in relatedness; TextOnlyRelatedness
	// scales the content text evidence of a memory without a comparable
	// vector.
	RelatednessText     = 2.0
	RelatednessVector   = 0.15
	TextOnlyRelatedness = 2.0
	DefaultMMRLambda    = 0.7
	DefaultK            = 10
	MaxK                = 1000
)

// Names are not evidence: in a partition of at least IdentifyingMinMemories
// memories, a query term in at least IdentifyingShare of them identifies the
// partition (the person's name, the speakers') rather than a topic. In a
// smaller one a dominant topic would look the same (three of five memories
// about the dog), so only the principal's own name is taken as identifying
// there (the engine adds it whatever the partition's size).
const (
	IdentifyingShare       = 0.4
	IdentifyingMinMemories = 20
)

// Identifying reports whether a term that occurs in df of a partition's n
// memories identifies the partition (see "Names are not evidence").
func Identifying(n, df int) bool {
	return n >= IdentifyingMinMemories && float64(df) >= IdentifyingShare*float64(n)
}

// Vector weights measured per embedder (see "Vector weight"): the built-in
// lexical model, the built-in hybrid model, and a semantic model reached
// over the wire (the GloVe sentence-vector model of the benchmarks, the
// default for every model memgate did not measure).
const (
	LexicalVectorWeight  = 0.0
	HybridVectorWeight   = 0.05
	SemanticVectorWeight = 0.1
)

// DefaultContext returns the neighbour weights chosen on LoCoMo. Recall@10
// moved by less than 0.01 over Prev 0.3–0.5, Next 0.15–0.3, Prev2 0.15–0.3
// and Group 0.2–0.3; weights tuned on one half of the conversations lost
// at most 0.035 on the other half against that half's own best.
func DefaultContext() Context {
	return Context{Prev: 0.4, Prev2: 0.2, Next: 0.2, Group: 0.25}
}

// FloorOff disables the floor when given as Options.Floor: every candidate
// may be returned, however weak. It is for measurement, never a default.
const FloorOff = -1.0

// Context weighs the evidence a memory inherits from its conversation.
type Context struct {
	Prev  float64 // the memory right before it
	Prev2 float64 // the one before that
	Next  float64 // the memory right after it
	Group float64 // the best memory of the same conversation
}

// Options configures Rank. The zero value, after WithDefaults, is the
// documented default behaviour.
type Options struct {
	// K is the maximum number of results (default DefaultK, at most MaxK).
	K int
	// Floor is the minimum final score (default DefaultFloor; FloorOff to
	// disable). It is applied to every result, every time.
	Floor float64
	// Budget is the maximum total Chars of the results; 0 means no budget.
	// Results are taken whole, in rank order, and the first one that does
	// not fit ends the list (a lower-ranked memory never displaces a
	// higher-ranked one).
	Budget int

	// VectorWeight is the vector's share of a memory's evidence for
	// ordering, in [0, 1]. The zero value orders on text evidence and
	// context only; the engine sets the weight measured for its embedder
	// (see "Vector weight" in the package comment). The vector counts in
	// relatedness whatever this weight.
	VectorWeight float64
	// ZLow and ZHigh calibrate a memory's z-score to vector evidence
	// (defaults DefaultZLow, DefaultZHigh).
	ZLow, ZHigh float64
	// Context weighs evidence from conversation neighbours; the zero value
	// means DefaultContext(). NoContext disables it.
	Context   Context
	NoContext bool
	// Sharpness is the exponent of a memory's standing relative to the
	// best candidate, in (0, 1] (default DefaultSharpness).
	Sharpness float64

	// MMR reorders the results for diversity (maximal marginal relevance)
	// using candidate vectors; MMRLambda in (0, 1] weighs relevance against
	// novelty (default DefaultMMRLambda). Off by default: it did not help
	// recall on LoCoMo, but avoids returning near-duplicates.
	MMR       bool
	MMRLambda float64

	// RecencyHalfLife, when positive, favours newer memories: a factor
	// (1 − RecencyWeight) + RecencyWeight·2^(−age/half-life) multiplies the
	// evidence. Off by default (it did not help on LoCoMo).
	RecencyHalfLife time.Duration
	RecencyWeight   float64
	// FeedbackWeight, when positive, multiplies the evidence by
	// 1 + FeedbackWeight·Candidate.Feedback. Off by default (unmeasured).
	FeedbackWeight float64
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.K <= 0 {
		o.K = DefaultK
	}
	o.K = min(o.K, MaxK)
	if o.Floor == 0 {
		o.Floor = DefaultFloor
	}
	if o.ZLow == 0 && o.ZHigh == 0 {
		o.ZLow, o.ZHigh = DefaultZLow, DefaultZHigh
	}
	switch {
	case o.NoContext:
		o.Context = Context{}
	case o.Context == (Context{}):
		o.Context = DefaultContext()
	}
	if o.Sharpness == 0 {
		o.Sharpness = DefaultSharpness
	}
	if o.MMRLambda == 0 {
		o.MMRLambda = DefaultMMRLambda
	}
	return o
}

// Validate reports options out of range (after WithDefaults).
func (o Options) Validate() error {
	switch {
	case o.Floor != FloorOff && (o.Floor < 0 || o.Floor > 1 || math.IsNaN(o.Floor)):
		return errors.New("rank: floor must be in [0, 1]")
	case o.Budget < 0:
		return errors.New("rank: budget must not be negative")
	case !(o.VectorWeight >= 0 && o.VectorWeight <= 1):
		return errors.New("rank: vector weight must be in [0, 1]")
	case !(o.ZHigh > o.ZLow) || math.IsInf(o.ZLow, 0) || math.IsInf(o.ZHigh, 0):
		return errors.New("rank: z calibration must satisfy low < high, both finite")
	case !(o.Sharpness > 0 && o.Sharpness <= 1):
		return errors.New("rank: sharpness must be in (0, 1]")
	case !(o.MMRLambda > 0 && o.MMRLambda <= 1):
		return errors.New("rank: MMR lambda must be in (0, 1]")
	case o.RecencyHalfLife < 0 || !(o.RecencyWeight >= 0 && o.RecencyWeight <= 1):
		return errors.New("rank: recency half-life must not be negative and its weight must be in [0, 1]")
	case !(o.FeedbackWeight >= 0 && o.FeedbackWeight <= 1):
		return errors.New("rank: feedback weight must be in [0, 1]")
	}
	c := o.Context
	for _, w := range []float64{c.Prev, c.Prev2, c.Next, c.Group} {
		if !(w >= 0 && w <= 1) {
			return errors.New("rank: context weights must be in [0, 1]")
		}
	}
	return nil
}

// Query is what rank needs to know about the query itself.
type Query struct {
	// IDFSum is the sum of IDF over the distinct query terms
	// (analysis.Terms of the query text), including terms that occur in no
	// memory of the partition. Zero means the query has no terms: text
	// evidence is then 0 for every memory.
	IDFSum float64
	// Content is set when the candidates carry the content query's scores
	// (ContentBM25, ContentCosine) and the fields below are of it: the
	// query's terms without those that identify the partition (see "Names
	// are not evidence"). When it is not set, the content query is the
	// query itself.
	Content bool
	// ContentIDFSum is IDFSum over the content terms.
	ContentIDFSum float64
	// Background and ContentBackground are the query vector's and the
	// content query vector's cosines with the probe set (see
	// Calibration). A zero Background gives no vector evidence.
	Background, ContentBackground Background
	// Now is the time recency is measured at (only used with
	// RecencyHalfLife).
	Now time.Time
}

// Candidate is one memory's evidence for the query.
type Candidate struct {
	// ID identifies the memory in results; rank does not interpret it.
	ID string
	// BM25 is the memory's BM25 score for the query (see BM25), and
	// ContentBM25 its score for the content terms only.
	BM25, ContentBM25 float64
	// Cosine is the similarity of the centered query and memory vectors
	// (Calibration.Center), in [-1, 1], and ContentCosine that of the
	// centered content query vector and the memory's; HasVector is false
	// when the memory has no vector comparable with the query's (other
	// model or dimension), and both are ignored.
	Cosine, ContentCosine float64
	HasVector             bool
	// Vector is the memory's embedding, used only by MMR; may be nil.
	Vector []float32
	// Group and Seq place a conversation turn among its neighbours: memories
	// with the same non-empty Group are ordered by Seq (insertion order).
	// Leave Group empty for memories that are not conversation turns.
	Group string
	Seq   int64
	// Time is when the memory was said or learned (for recency); zero
	// means unknown (no recency factor).
	Time time.Time
	// Feedback is a usefulness signal in [-1, 1] (for FeedbackWeight).
	Feedback float64
	// Chars is the size the memory takes in a budget (e.g. its content
	// length as rendered).
	Chars int
}

// Components is memgate.RankComponents (the callers' contract).
type Components = memgate.RankComponents

// Result is one returned memory.
type Result struct {
	Index      int        `json:"-"`     // position in the candidates slice
	ID         string     `json:"id"`    // Candidate.ID
	Score      float64    `json:"score"` // final score in [0, 1]
	Components Components `json:"components"`
}

// Explain is memgate.RankExplain (the callers' contract).
type Explain = memgate.RankExplain

// Rank scores the candidates of one partition for one query and returns the
// results in order with an explanation. It never returns a result whose
// Score is below the floor. Options are completed with WithDefaults; invalid
// options are an error.
func Rank(q Query, cands []Candidate, o Options) ([]Result, Explain, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, Explain{}, err
	}
	floor := max(o.Floor, 0)
	ex := Explain{Candidates: len(cands), Floor: floor}
	if len(cands) == 0 {
		return nil, ex, nil
	}
	sc := Score(q, cands, o)
	ex.Relatedness = sc.Relatedness

	// Order: final score, then fused evidence, then input order.
	order := make([]int, 0, len(cands))
	for i := range cands {
		if sc.Scores[i] >= floor && (sc.Scores[i] > 0 || o.Floor == FloorOff) {
			order = append(order, i)
		} else {
			ex.BelowFloor++
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(sc.Scores[b], sc.Scores[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(sc.Components[b].Fused, sc.Components[a].Fused); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if o.MMR && len(order) > 1 {
		order = mmr(order, sc.Scores, cands, o.MMRLambda, o.K)
		ex.Diversified = true
	}
	if len(order) > o.K {
		ex.BeyondK = len(order) - o.K
		order = order[:o.K]
	}
	results := make([]Result, 0, len(order))
	used := 0
	for n, i := range order {
		if o.Budget > 0 {
			if used+max(cands[i].Chars, 0) > o.Budget {
				ex.OverBudget = len(order) - n
				break
			}
			used += max(cands[i].Chars, 0)
		}
		results = append(results, Result{Index: i, ID: cands[i].ID, Score: sc.Scores[i], Components: sc.Components[i]})
	}
	ex.Returned = len(results)
	return results, ex, nil
}

// Scored is the outcome of Score: per candidate (same order) the final score
// and its components, and the query's relatedness.
type Scored struct {
	Scores      []float64
	Components  []Components
	Relatedness float64
}

// Score computes the final score of every candidate (see the package
// comment) without applying the floor, k or budget. Options are completed
// with WithDefaults and assumed valid.
func Score(q Query, cands []Candidate, o Options) Scored {
	o = o.WithDefaults()
	if !q.Content {
		q.ContentIDFSum, q.ContentBackground = q.IDFSum, q.Background
		cands = slices.Clone(cands)
		for i := range cands {
			cands[i].ContentBM25, cands[i].ContentCosine = cands[i].BM25, cands[i].Cosine
		}
	}
	n := len(cands)
	out := Scored{Scores: make([]float64, n), Components: make([]Components, n)}
	ev := make([]float64, n)
	rel := 0.0
	// When the query's content matches no memory's words, text evidence is
	// the identifying terms' alone, which says nothing about which memory
	// answers: the vector orders then.
	textSpeaks := false
	for _, c := range cands {
		if c.ContentBM25 > 0 {
			textSpeaks = true
			break
		}
	}
	for i, c := range cands {
		comp := &out.Components[i]
		comp.Text = TextEvidence(c.BM25, q.IDFSum)
		comp.ContentText = TextEvidence(c.ContentBM25, q.ContentIDFSum)
		if c.HasVector {
			comp.Vector = Calibrate(q.Background.Z(c.Cosine), o.ZLow, o.ZHigh)
			comp.ContentVector = Calibrate(q.ContentBackground.Z(c.ContentCosine), o.ZLow, o.ZHigh)
		}
		ord := 0.0
		if c.HasVector {
			ord = Calibrate(q.ContentBackground.Z(c.ContentCosine), OrderZLow, o.ZHigh)
		}
		if textSpeaks {
			ev[i] = (1-o.VectorWeight)*comp.Text + o.VectorWeight*ord
		} else {
			ev[i] = ord // the query's content matches no memory's words: the vector orders
		}
		if c.HasVector {
			rel = max(rel, min(1, RelatednessText*comp.ContentText+RelatednessVector*comp.ContentVector))
		} else {
			rel = max(rel, min(1, TextOnlyRelatedness*comp.ContentText))
		}
	}
	s := withContext(ev, cands, o.Context)
	best := 0.0
	for i, c := range cands {
		comp := &out.Components[i]
		comp.Context = s[i] - ev[i]
		comp.Recency, comp.Feedback = 1, 1
		if o.RecencyHalfLife > 0 && o.RecencyWeight > 0 && !c.Time.IsZero() && !q.Now.IsZero() {
			age := max(q.Now.Sub(c.Time), 0)
			decay := math.Exp2(-float64(age) / float64(o.RecencyHalfLife))
			comp.Recency = 1 - o.RecencyWeight + o.RecencyWeight*decay
		}
		if o.FeedbackWeight > 0 {
			f := max(-1, min(1, finite(c.Feedback)))
			comp.Feedback = 1 + o.FeedbackWeight*f
		}
		s[i] *= comp.Recency * comp.Feedback
		comp.Fused = min(1, s[i])
		best = max(best, s[i])
	}
	out.Relatedness = rel
	if best > 0 {
		for i := range s {
			if s[i] > 0 {
				out.Scores[i] = rel * math.Pow(s[i]/best, o.Sharpness)
			}
		}
	}
	return out
}

// TextEvidence maps a BM25 score to [0, 1]: BM25 / ((K1+1)·idfSum).
func TextEvidence(bm25, idfSum float64) float64 {
	if !(idfSum > 0) || !(bm25 > 0) {
		return 0
	}
	return min(1, finite(bm25/((K1+1)*idfSum)))
}

// Calibrate maps x to [0, 1] linearly between low (0) and high (1).
func Calibrate(x, low, high float64) float64 {
	if !(high > low) {
		return 0
	}
	return max(0, min(1, finite((x-low)/(high-low))))
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// withContext returns evidence combined with conversation neighbours'
// evidence as a noisy-or (see Context).
func withContext(ev []float64, cands []Candidate, c Context) []float64 {
	s := slices.Clone(ev)
	if c == (Context{}) {
		return s
	}
	// Conversation turns in (Group, Seq) order.
	idx := make([]int, 0, len(cands))
	for i, cd := range cands {
		if cd.Group != "" {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if x := cmp.Compare(cands[a].Group, cands[b].Group); x != 0 {
			return x
		}
		if x := cmp.Compare(cands[a].Seq, cands[b].Seq); x != 0 {
			return x
		}
		return cmp.Compare(a, b)
	})
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && cands[idx[hi]].Group == cands[idx[lo]].Group {
			hi++
		}
		best := 0.0
		for _, i := range idx[lo:hi] {
			best = max(best, ev[i])
		}
		for p := lo; p < hi; p++ {
			i := idx[p]
			keep := (1 - ev[i]) * (1 - c.Group*best)
			if p-1 >= lo {
				keep *= 1 - c.Prev*ev[idx[p-1]]
			}
			if p-2 >= lo {
				keep *= 1 - c.Prev2*ev[idx[p-2]]
			}
			if p+1 < hi {
				keep *= 1 - c.Next*ev[idx[p+1]]
			}
			s[i] = 1 - keep
		}
		lo = hi
	}
	return s
}

// mmr reorders order (indexes sorted by score) greedily by maximal marginal
// relevance: lambda·score − (1−lambda)·(max cosine to an already chosen
// result), keeping at most k.
func mmr(order []int, scores []float64, cands []Candidate, lambda float64, k int) []int {
	n := min(len(order), k)
	rest := slices.Clone(order)
	chosen := make([]int, 0, n)
	maxSim := make([]float64, len(rest))
	for len(chosen) < n {
		bi, bv := -1, math.Inf(-1)
		for j, i := range rest {
			if i < 0 {
				continue
			}
			v := lambda*scores[i] - (1-lambda)*maxSim[j]
			if v > bv {
				bi, bv = j, v
			}
		}
		pick := rest[bi]
		chosen = append(chosen, pick)
		rest[bi] = -1
		for j, i := range rest {
			if i >= 0 {
				maxSim[j] = max(maxSim[j], cosine(cands[pick].Vector, cands[i].Vector))
			}
		}
	}
	return chosen
}

// cosine returns the cosine similarity of two vectors, 0 if either is empty,
// zero or of another length.
func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return finite(dot(a, b) / (na * nb))
}
