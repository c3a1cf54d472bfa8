package rank_test

// The LoCoMo evaluation of recall quality. It runs only when MEMGATE_LOCOMO
// names the directory of the development split (memories.jsonl,
// questions.jsonl; see its README for the metrics), e.g.
//
//	MEMGATE_LOCOMO=/work/shared/bench/locomo go test ./rank -run Locomo -v
//
// It builds, per principal, a brute-force BM25 index (the reference
// implementation of the formula in rank.BM25 and rank.IDF over
// analysis.Terms) and the built-in embedder's vectors, ranks every memory of
// the partition with rank.Rank, and reports evidence recall@1/5/10/20 per
// category and overall, with the floor off and at the default floor, and
// foreign-query silence (each question asked against the paired principal:
// 26↔30, 41↔42). Nothing in it is keyed to LoCoMo's names, speakers or
// wording: the data is used only through the generic Candidate fields.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/rank"
)

type lmMemory struct {
	Principal    string    `json:"principal"`
	Conversation string    `json:"conversation"`
	Content      string    `json:"content"`
	ValidFrom    time.Time `json:"valid_from"`
	Metadata     struct {
		DiaID string `json:"dia_id"`
	} `json:"metadata"`
}

type lmQuestion struct {
	Principal string   `json:"principal"`
	Question  string   `json:"question"`
	Evidence  []string `json:"evidence"`
	Category  int      `json:"category"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type lmData struct {
	principals []string
	mems       map[string][]lmMemory
	qs         []lmQuestion
}

func loadLocomo(t *testing.T) *lmData {
	t.Helper()
	dir := os.Getenv("MEMGATE_LOCOMO")
	if dir == "" {
		t.Skip("set MEMGATE_LOCOMO to the LoCoMo split directory to run the evaluation")
	}
	d := &lmData{mems: map[string][]lmMemory{}}
	for _, m := range readJSONL[lmMemory](t, filepath.Join(dir, "memories.jsonl")) {
		if d.mems[m.Principal] == nil {
			d.principals = append(d.principals, m.Principal)
		}
		d.mems[m.Principal] = append(d.mems[m.Principal], m)
	}
	d.qs = readJSONL[lmQuestion](t, filepath.Join(dir, "questions.jsonl"))
	return d
}

// foreignOf pairs principals for the silence metric (README: 26↔30, 41↔42).
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
type system struct {
	terms func(string) []string
	ix    map[string]*bm25Index
	vecs  map[string][][]float32
	data  *lmData
}

func newSystem(t *testing.T, d *lmData, terms func(string) []string, vectors bool) *system {
	s := &system{terms: terms, ix: map[string]*bm25Index{}, vecs: map[string][][]float32{}, data: d}
	emb := builtin.New()
	for _, p := range d.principals {
		var texts []string
		for _, m := range d.mems[p] {
			texts = append(texts, m.Content)
		}
		s.ix[p] = newBM25(texts, terms)
		if vectors {
			es, err := emb.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				s.vecs[p] = append(s.vecs[p], e.Vector)
			}
		}
	}
	return s
}

func (s *system) candidates(p, query string) ([]rank.Candidate, rank.Query) {
	bm, idfSum := s.ix[p].score(s.terms(query))
	var qv []float32
	if len(s.vecs[p]) > 0 {
		qv = builtin.Vector(query)
	}
	cands := make([]rank.Candidate, len(bm))
	var now time.Time
	for i, m := range s.data.mems[p] {
		c := rank.Candidate{ID: m.Metadata.DiaID, BM25: bm[i], Group: m.Conversation, Seq: int64(i), Chars: len(m.Content), Time: m.ValidFrom}
		if m.ValidFrom.After(now) {
			now = m.ValidFrom
		}
		if qv != nil {
			c.HasVector = true
			c.Vector = s.vecs[p][i]
			c.Cosine = dot(qv, c.Vector)
		}
		cands[i] = c
	}
	// Questions are asked the day after the last session.
	return cands, rank.Query{IDFSum: idfSum, Now: now.Add(24 * time.Hour)}
}

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

var ks = []int{1, 5, 10, 20}

type metrics struct {
	recall  map[int][4]float64 // category (0 = overall) → recall@1,5,10,20
	silence float64            // foreign questions returning nothing
	n       map[int]int
}

func (m metrics) String() string {
	var b strings.Builder
	for _, c := range []int{0, 1, 2, 3, 4} {
		v := m.recall[c]
		name := "all"
		if c > 0 {
			name = fmt.Sprintf("cat%d", c)
		}
		fmt.Fprintf(&b, " %s %.3f/%.3f/%.3f/%.3f", name, v[0], v[1], v[2], v[3])
	}
	fmt.Fprintf(&b, " silence %.3f", m.silence)
	return b.String()
}

// evaluate asks every question against its principal (recall) and against
// the paired one (silence), with options o (K is set to 20).
func (s *system) evaluate(t *testing.T, o rank.Options) metrics {
	t.Helper()
	o.K = 20
	sums := map[int]*[4]float64{}
	m := metrics{recall: map[int][4]float64{}, n: map[int]int{}}
	silent := 0
	for _, q := range s.data.qs {
		cands, rq := s.candidates(q.Principal, q.Question)
		res, _, err := rank.Rank(rq, cands, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []int{0, q.Category} {
			if sums[c] == nil {
				sums[c] = &[4]float64{}
			}
			for i, k := range ks {
				sums[c][i] += evidenceRecall(res, q.Evidence, k)
			}
			m.n[c]++
		}
		cands, rq = s.candidates(foreignOf[q.Principal], q.Question)
		res, _, err = rank.Rank(rq, cands, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 {
			silent++
		}
	}
	for c, v := range sums {
		var r [4]float64
		for i := range r {
			r[i] = v[i] / float64(m.n[c])
		}
		m.recall[c] = r
	}
	m.silence = float64(silent) / float64(len(s.data.qs))
	return m
}

// evidenceRecall is the share of evidence ids among the first k results.
func evidenceRecall(res []rank.Result, evidence []string, k int) float64 {
	if len(evidence) == 0 {
		return 0
	}
	found := 0
	for _, e := range evidence {
		for j := 0; j < k && j < len(res); j++ {
			if res[j].ID == strings.TrimSpace(e) {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(evidence))
}

// floorFor returns the lowest floor at which at least share of the foreign
// questions return nothing: just above the (1−share) quantile of the best
// score each foreign question gets.
func (s *system) floorFor(t *testing.T, o rank.Options, share float64) float64 {
	t.Helper()
	o.Floor, o.K = rank.FloorOff, 1
	var tops []float64
	for _, q := range s.data.qs {
		cands, rq := s.candidates(foreignOf[q.Principal], q.Question)
		res, _, err := rank.Rank(rq, cands, o)
		if err != nil {
			t.Fatal(err)
		}
		top := 0.0
		if len(res) > 0 {
			top = res[0].Score
		}
		tops = append(tops, top)
	}
	sort.Float64s(tops)
	i := int(math.Ceil(share*float64(len(tops)))) - 1
	return tops[max(0, min(i, len(tops)-1))] + 1e-6
}

// sStem is the classic "S-stemmer" (Harman 1991), measured against Porter2.
func sStem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:len(w)-1]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

func filtered(stem func(string) string) func(string) []string {
	return func(s string) []string {
		var out []string
		for _, w := range analysis.Tokens(s) {
			if analysis.IsStopword(w) || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
				continue
			}
			out = append(out, stem(w))
		}
		return out
	}
}

func lowerSplit(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
}

// TestLocomoEvaluation prints the table of variants and checks the targets
// the defaults were chosen for.
func TestLocomoEvaluation(t *testing.T) {
	d := loadLocomo(t)
	textOnly := rank.Options{NoContext: true, Sharpness: 1}

	type variant struct {
		name    string
		terms   func(string) []string
		vectors bool
		o       rank.Options
	}
	identity := func(s string) string { return s }
	variants := []variant{
		{"BM25, lowercase split", lowerSplit, false, textOnly},
		{"BM25, analysis.Tokens", analysis.Tokens, false, textOnly},
		{"BM25, + stopwords", filtered(identity), false, textOnly},
		{"BM25, + S-stemmer", filtered(sStem), false, textOnly},
		{"BM25, + Porter2 (analysis.Terms)", analysis.Terms, false, textOnly},
		{"cosine only (builtin)", analysis.Terms, true, rank.Options{VectorWeight: 1, NoContext: true, Sharpness: 1}},
		{"text, relatedness with vector", analysis.Terms, true, rank.Options{NoContext: true, Sharpness: 1}},
		{"text + 0.1 vector", analysis.Terms, true, rank.Options{VectorWeight: 0.1, NoContext: true, Sharpness: 1}},
		{"text + 0.3 vector", analysis.Terms, true, rank.Options{VectorWeight: 0.3, NoContext: true, Sharpness: 1}},
		{"text + context, sharpness 1", analysis.Terms, true, rank.Options{Sharpness: 1}},
		{"text + 0.1 vector + context, sharpness 1", analysis.Terms, true, rank.Options{VectorWeight: 0.1, Sharpness: 1}},
		{"defaults (text + context, sharpness 0.3)", analysis.Terms, true, rank.Options{}},
		{"defaults, no vectors at all", analysis.Terms, false, rank.Options{}},
		{"defaults + MMR 0.7", analysis.Terms, true, rank.Options{MMR: true}},
		{"defaults + recency (30 days, 0.3)", analysis.Terms, true, rank.Options{RecencyHalfLife: 30 * 24 * time.Hour, RecencyWeight: 0.3}},
	}
	t.Logf("%-42s %-7s  floor off: recall@1/5/10/20 (overall, per category) | at floor: recall@10, silence", "variant", "floor")
	for _, v := range variants {
		s := newSystem(t, d, v.terms, v.vectors)
		off := v.o
		off.Floor = rank.FloorOff
		mOff := s.evaluate(t, off)
		at := v.o
		if at.Floor == 0 {
			at.Floor = rank.DefaultFloor
		}
		mAt := s.evaluate(t, at)
		f80 := s.floorFor(t, v.o, 0.8)
		at80 := v.o
		at80.Floor = f80
		m80 := s.evaluate(t, at80)
		t.Logf("%-42s %.3f %s", v.name, at.Floor, mOff)
		t.Logf("%-42s       at default floor: r@10 %.3f (Δ %+.3f) silence %.3f | floor for 80%% silence %.3f: r@10 %.3f (Δ %+.3f)",
			"", mAt.recall[0][2], mAt.recall[0][2]-mOff.recall[0][2], mAt.silence, f80, m80.recall[0][2], m80.recall[0][2]-mOff.recall[0][2])
	}

	// The defaults must meet what they were chosen for.
	s := newSystem(t, d, analysis.Terms, true)
	off := s.evaluate(t, rank.Options{Floor: rank.FloorOff})
	t.Logf("floor sweep for the defaults (floor off: recall@10 %.3f):", off.recall[0][2])
	for _, f := range []float64{0.15, 0.18, 0.20, 0.22, 0.24, 0.26, 0.30} {
		m := s.evaluate(t, rank.Options{Floor: f})
		t.Logf("  floor %.2f: recall@10 %.3f (Δ %+.3f) silence %.3f", f, m.recall[0][2], m.recall[0][2]-off.recall[0][2], m.silence)
	}
	at := s.evaluate(t, rank.Options{})
	if drop := off.recall[0][2] - at.recall[0][2]; drop > 0.03 {
		t.Errorf("default floor costs %.3f recall@10 (limit 0.03)", drop)
	}
	if at.silence < 0.8 {
		t.Errorf("foreign-query silence %.3f at the default floor (target 0.80)", at.silence)
	}
	// Generalization across conversations: the same defaults on each pair.
	for _, pair := range [][2]string{{"conv-26", "conv-30"}, {"conv-41", "conv-42"}} {
		sub := *d
		sub.qs = nil
		for _, q := range d.qs {
			if q.Principal == pair[0] || q.Principal == pair[1] {
				sub.qs = append(sub.qs, q)
			}
		}
		ss := *s
		ss.data = &sub
		mo := ss.evaluate(t, rank.Options{Floor: rank.FloorOff})
		ma := ss.evaluate(t, rank.Options{})
		t.Logf("defaults on %s+%s (%d questions): recall@10 %.3f floor off, %.3f at the default floor, silence %.3f",
			pair[0], pair[1], len(sub.qs), mo.recall[0][2], ma.recall[0][2], ma.silence)
	}
}
