package locomo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// Question is one line of questions.jsonl.
type Question struct {
	Principal string   `json:"principal"`
	Question  string   `json:"question"`
	Answer    any      `json:"answer"`
	Evidence  []string `json:"evidence"`
	Category  int      `json:"category"`
}

// Categories names LoCoMo's numeric categories.
var Categories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// Ks are the cut-offs evidence recall is reported at.
var Ks = []int{1, 5, 10, 20}

// ForeignPairs maps each principal to the one its questions are asked of
// for the silence metric.
var ForeignPairs = map[string]string{"conv-26": "conv-30", "conv-30": "conv-26", "conv-41": "conv-42", "conv-42": "conv-41"}

// Tenant is the tenant the harness imports into.
const Tenant = "locomo"

// LoadQuestions reads questions.jsonl from dir.
func LoadQuestions(dir string) ([]Question, error) {
	f, err := os.Open(filepath.Join(dir, "questions.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Question
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q Question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("questions.jsonl line %d: %w", n, err)
		}
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// Import loads memories.jsonl from dir into eng under Tenant.
func Import(ctx context.Context, eng *engine.Engine, dir string) (engine.ImportResult, error) {
	f, err := os.Open(filepath.Join(dir, "memories.jsonl"))
	if err != nil {
		return engine.ImportResult{}, err
	}
	defer f.Close()
	return eng.Import(ctx, engine.ImportRequest{Tenant: Tenant}, f)
}

// Recall figures for one group of questions.
type Recall struct {
	Questions int                `json:"questions"`
	At        map[string]float64 `json:"recall_at"` // "1", "5", "10", "20"
}

// Report is the outcome of Evaluate.
type Report struct {
	Questions   int               `json:"questions"`
	FloorOff    map[string]Recall `json:"floor_off"`     // "overall" and per category
	AtFloor     map[string]Recall `json:"default_floor"` // likewise
	Floor       float64           `json:"floor"`
	Silence     float64           `json:"foreign_silence"` // share of foreign questions answered with nothing
	SilenceN    int               `json:"foreign_questions"`
	MeanResults float64           `json:"mean_results_at_floor"` // results per own question at the floor (k=20)
	LatencyP50  time.Duration     `json:"recall_p50_ns"`
	LatencyP99  time.Duration     `json:"recall_p99_ns"`
	Sweep       []SweepPoint      `json:"sweep,omitempty"`
}

// SweepPoint is recall@10 and silence at one floor, for choosing the
// default floor.
type SweepPoint struct {
	Floor    float64 `json:"floor"`
	Recall10 float64 `json:"recall_at_10"`
	Silence  float64 `json:"foreign_silence"`
}

// Sweep measures recall@10 (own questions) and foreign-query silence at
// each floor.
func Sweep(ctx context.Context, eng *engine.Engine, qs []Question, floors []float64) ([]SweepPoint, error) {
	var out []SweepPoint
	for _, f := range floors {
		floor := f
		var recall float64
		var n, silent, foreignN int
		for _, q := range qs {
			if len(q.Evidence) == 0 {
				continue
			}
			res, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: Tenant, Principal: q.Principal}, Query: q.Question, K: 10, MinScore: &floor})
			if err != nil {
				return nil, err
			}
			found := 0
			for _, ev := range q.Evidence {
				for _, h := range res.Results {
					if h.Memory.Metadata["dia_id"] == ev {
						found++
						break
					}
				}
			}
			recall += float64(found) / float64(len(q.Evidence))
			n++
			if foreign, ok := ForeignPairs[q.Principal]; ok {
				res, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: Tenant, Principal: foreign}, Query: q.Question, K: 10, MinScore: &floor})
				if err != nil {
					return nil, err
				}
				foreignN++
				if len(res.Results) == 0 {
					silent++
				}
			}
		}
		p := SweepPoint{Floor: f}
		if n > 0 {
			p.Recall10 = recall / float64(n)
		}
		if foreignN > 0 {
			p.Silence = float64(silent) / float64(foreignN)
		}
		out = append(out, p)
	}
	return out, nil
}

// Check returns an error naming every target the report misses.
func (r *Report) Check(minRecall10, maxFloorDrop, minSilence float64) error {
	var miss []string
	off, at := r.FloorOff["overall"].At["10"], r.AtFloor["overall"].At["10"]
	if off < minRecall10 {
		miss = append(miss, fmt.Sprintf("recall@10 with the floor off is %.3f, below %.3f", off, minRecall10))
	}
	if off-at > maxFloorDrop {
		miss = append(miss, fmt.Sprintf("recall@10 drops by %.3f at the default floor, more than %.3f", off-at, maxFloorDrop))
	}
	if r.Silence < minSilence {
		miss = append(miss, fmt.Sprintf("foreign-query silence is %.3f, below %.3f", r.Silence, minSilence))
	}
	if len(miss) > 0 {
		return fmt.Errorf("LoCoMo targets missed: %s", strings.Join(miss, "; "))
	}
	return nil
}

// Evaluate asks every question of its principal (floor off and at the
// default floor) and of its foreign pair (at the default floor), and
// measures evidence recall@k and foreign-query silence as the data's
// README defines them.
func Evaluate(ctx context.Context, eng *engine.Engine, qs []Question) (*Report, error) {
	maxK := Ks[len(Ks)-1]
	off := 0.0
	type acc struct {
		n   int
		sum map[int]float64
	}
	newAcc := func() map[string]*acc { return map[string]*acc{} }
	offAcc, floorAcc := newAcc(), newAcc()
	add := func(m map[string]*acc, key string, ranks map[string]int, evidence []string) {
		a := m[key]
		if a == nil {
			a = &acc{sum: map[int]float64{}}
			m[key] = a
		}
		a.n++
		for _, k := range Ks {
			found := 0
			for _, ev := range evidence {
				if r, ok := ranks[ev]; ok && r <= k {
					found++
				}
			}
			a.sum[k] += float64(found) / float64(len(evidence))
		}
	}
	rep := &Report{Questions: len(qs)}
	var lat []time.Duration
	results := 0
	silent := 0
	for _, q := range qs {
		if len(q.Evidence) == 0 {
			continue
		}
		cat := Categories[q.Category]
		for _, floorOff := range []bool{true, false} {
			req := engine.RecallRequest{Scope: memgate.Scope{Tenant: Tenant, Principal: q.Principal}, Query: q.Question, K: maxK}
			if floorOff {
				req.MinScore = &off
			}
			start := time.Now()
			res, err := eng.Recall(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("recall %q of %s: %w", q.Question, q.Principal, err)
			}
			lat = append(lat, time.Since(start))
			ranks := map[string]int{}
			for i, h := range res.Results {
				if id, ok := h.Memory.Metadata["dia_id"].(string); ok {
					if _, seen := ranks[id]; !seen {
						ranks[id] = i + 1
					}
				}
			}
			m := offAcc
			if !floorOff {
				m = floorAcc
				rep.Floor = res.MinScore
				results += len(res.Results)
			}
			add(m, "overall", ranks, q.Evidence)
			add(m, cat, ranks, q.Evidence)
		}
		foreign, ok := ForeignPairs[q.Principal]
		if !ok {
			continue
		}
		res, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: Tenant, Principal: foreign}, Query: q.Question, K: 10})
		if err != nil {
			return nil, err
		}
		rep.SilenceN++
		if len(res.Results) == 0 {
			silent++
		}
	}
	conv := func(m map[string]*acc) map[string]Recall {
		out := map[string]Recall{}
		for key, a := range m {
			r := Recall{Questions: a.n, At: map[string]float64{}}
			for _, k := range Ks {
				r.At[fmt.Sprint(k)] = a.sum[k] / float64(a.n)
			}
			out[key] = r
		}
		return out
	}
	rep.FloorOff, rep.AtFloor = conv(offAcc), conv(floorAcc)
	if rep.SilenceN > 0 {
		rep.Silence = float64(silent) / float64(rep.SilenceN)
	}
	if n := rep.AtFloor["overall"].Questions; n > 0 {
		rep.MeanResults = float64(results) / float64(n)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		rep.LatencyP50 = lat[len(lat)/2]
		rep.LatencyP99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return rep, nil
}

// WriteTable prints the report as a table.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "questions\tfloor\tgroup\tn\tR@1\tR@5\tR@10\tR@20\t")
	groups := []string{"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
	for _, set := range []struct {
		name string
		m    map[string]Recall
	}{{"off", r.FloorOff}, {fmt.Sprintf("%.2f", r.Floor), r.AtFloor}} {
		for _, g := range groups {
			rc, ok := set.m[g]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "own\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", set.name, g, rc.Questions, rc.At["1"], rc.At["5"], rc.At["10"], rc.At["20"])
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "foreign-query silence at floor %.2f: %.3f of %d questions\n", r.Floor, r.Silence, r.SilenceN)
	fmt.Fprintf(w, "mean results per own question at the floor (k=20): %.1f\n", r.MeanResults)
	fmt.Fprintf(w, "recall latency through the engine: p50 %v, p99 %v\n", r.LatencyP50.Round(time.Microsecond), r.LatencyP99.Round(time.Microsecond))
	if len(r.Sweep) > 0 {
		fmt.Fprintln(w, "\nfloor sweep (k=10):")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "floor\tR@10\tsilence\t")
		for _, p := range r.Sweep {
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t\n", p.Floor, p.Recall10, p.Silence)
		}
		tw.Flush()
	}
}
