package locomo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// Ks are the cut-offs evidence recall is reported at.
var Ks = []int{1, 5, 10, 20}

// InjectK is the k of the injected-per-question and silence figures.
const InjectK = 10

// Recall figures for one group of questions.
type Recall struct {
	Questions int                `json:"questions"`
	At        map[string]float64 `json:"recall_at"` // "1", "5", "10", "20"
}

// Report is the outcome of Evaluate for one set.
type Report struct {
	Set       Set      `json:"set"`
	Embedder  string   `json:"embedder,omitempty"`
	Half      []string `json:"principals,omitempty"` // the principals asked; empty: all
	Memories  int      `json:"memories"`
	Questions int      `json:"questions"` // questions with (citable) evidence
	// FloorOff and AtFloor are evidence recall, "overall" and per category.
	FloorOff map[string]Recall `json:"floor_off"`
	AtFloor  map[string]Recall `json:"default_floor"`
	Floor    float64           `json:"floor"`
	// Silence is the share of questions asked of the paired principal that
	// recall nothing at the default floor (k = InjectK); Swapped the same
	// after the question's speaker names were replaced by the pair's.
	Silence  float64 `json:"foreign_silence"`
	Swapped  float64 `json:"name_swapped_silence"`
	ForeignN int     `json:"foreign_questions"`
	// Injected is the mean number of results an own question recalls at
	// the default floor with k = InjectK.
	Injected   float64       `json:"injected_per_question"`
	LatencyP50 time.Duration `json:"recall_p50_ns"`
	LatencyP99 time.Duration `json:"recall_p99_ns"`
	Sweep      []SweepPoint  `json:"sweep,omitempty"`
}

// SweepPoint is what one floor gives (k = InjectK): own recall@10,
// silence, name-swapped silence and injected per question.
type SweepPoint struct {
	Floor    float64 `json:"floor"`
	Recall10 float64 `json:"recall_at_10"`
	Silence  float64 `json:"foreign_silence"`
	Swapped  float64 `json:"name_swapped_silence"`
	Injected float64 `json:"injected_per_question"`
}

// Options narrows an evaluation.
type Options struct {
	// Principals limits the questions to those of these principals (one of
	// Halves, say); empty means all. Foreign questions go to each one's
	// pair as always.
	Principals []string
	// Floors, when set, are swept too (see SweepPoint).
	Floors []float64
}

// Evaluate asks every question of the set's principal (floor off and at
// the default floor), of its foreign pair and, names swapped, of its pair
// again (both at the default floor), and measures what the data's README
// defines: evidence recall@k per category, foreign-query silence,
// name-swapped silence and injected per question. The set must have been
// imported into eng under Tenant.
func Evaluate(ctx context.Context, eng *engine.Engine, d *Data, set Set, opts Options) (*Report, error) {
	cited, n, err := citable(d.Dir, set)
	if err != nil {
		return nil, err
	}
	rep := &Report{Set: set, Half: opts.Principals, Memories: n}
	ev := evaluator{eng: eng, set: set}
	off, at := newAccs(), newAccs()
	var injected, silent, swappedSilent int
	floor0 := 0.0
	for _, q := range d.Questions {
		if len(opts.Principals) > 0 && !slices.Contains(opts.Principals, q.Principal) {
			continue
		}
		evidence := q.Evidence
		if set == Facts {
			evidence = slices.DeleteFunc(slices.Clone(evidence), func(id string) bool { return !cited[q.Principal][id] })
		}
		if len(evidence) == 0 {
			continue
		}
		rep.Questions++
		cat := Categories[q.Category]
		// Own questions, floor off and at the default floor.
		ranks, _, err := ev.recall(ctx, q.Principal, q.Question, slices.Max(Ks), &floor0)
		if err != nil {
			return nil, err
		}
		off.add("overall", ranks, evidence)
		off.add(cat, ranks, evidence)
		ranks, res, err := ev.recall(ctx, q.Principal, q.Question, slices.Max(Ks), nil)
		if err != nil {
			return nil, err
		}
		rep.Floor = res.MinScore
		at.add("overall", ranks, evidence)
		at.add(cat, ranks, evidence)
		_, res, err = ev.recall(ctx, q.Principal, q.Question, InjectK, nil)
		if err != nil {
			return nil, err
		}
		injected += len(res.Results)

		foreign, ok := ForeignPairs[q.Principal]
		if !ok {
			continue
		}
		rep.ForeignN++
		if _, res, err = ev.recall(ctx, foreign, q.Question, InjectK, nil); err != nil {
			return nil, err
		}
		if len(res.Results) == 0 {
			silent++
		}
		if _, res, err = ev.recall(ctx, foreign, SwapNames(q.Question, d.Speakers[q.Principal], d.Speakers[foreign]), InjectK, nil); err != nil {
			return nil, err
		}
		if len(res.Results) == 0 {
			swappedSilent++
		}
	}
	rep.FloorOff, rep.AtFloor = off.recall(), at.recall()
	if rep.Questions > 0 {
		rep.Injected = float64(injected) / float64(rep.Questions)
	}
	if rep.ForeignN > 0 {
		rep.Silence = float64(silent) / float64(rep.ForeignN)
		rep.Swapped = float64(swappedSilent) / float64(rep.ForeignN)
	}
	rep.LatencyP50, rep.LatencyP99 = ev.latency()
	for _, f := range opts.Floors {
		p, err := ev.sweep(ctx, d, cited, opts.Principals, f)
		if err != nil {
			return nil, err
		}
		rep.Sweep = append(rep.Sweep, p)
	}
	return rep, nil
}

// sweep measures one floor (see SweepPoint).
func (ev *evaluator) sweep(ctx context.Context, d *Data, cited map[string]map[string]bool, principals []string, floor float64) (SweepPoint, error) {
	p := SweepPoint{Floor: floor}
	acc := newAccs()
	var n, foreignN, silent, swapped, injected int
	for _, q := range d.Questions {
		if len(principals) > 0 && !slices.Contains(principals, q.Principal) {
			continue
		}
		evidence := q.Evidence
		if ev.set == Facts {
			evidence = slices.DeleteFunc(slices.Clone(evidence), func(id string) bool { return !cited[q.Principal][id] })
		}
		if len(evidence) == 0 {
			continue
		}
		n++
		ranks, res, err := ev.recall(ctx, q.Principal, q.Question, InjectK, &floor)
		if err != nil {
			return p, err
		}
		acc.add("overall", ranks, evidence)
		injected += len(res.Results)
		foreign, ok := ForeignPairs[q.Principal]
		if !ok {
			continue
		}
		foreignN++
		if _, res, err = ev.recall(ctx, foreign, q.Question, InjectK, &floor); err != nil {
			return p, err
		}
		if len(res.Results) == 0 {
			silent++
		}
		if _, res, err = ev.recall(ctx, foreign, SwapNames(q.Question, d.Speakers[q.Principal], d.Speakers[foreign]), InjectK, &floor); err != nil {
			return p, err
		}
		if len(res.Results) == 0 {
			swapped++
		}
	}
	p.Recall10 = acc.recall()["overall"].At["10"]
	if n > 0 {
		p.Injected = float64(injected) / float64(n)
	}
	if foreignN > 0 {
		p.Silence = float64(silent) / float64(foreignN)
		p.Swapped = float64(swapped) / float64(foreignN)
	}
	return p, nil
}

// evaluator recalls through the engine and keeps the latencies.
type evaluator struct {
	eng *engine.Engine
	set Set
	lat []time.Duration
}

// recall asks q of principal with k results and the floor (nil: the
// default) and returns the rank of each evidence turn the results cite.
func (ev *evaluator) recall(ctx context.Context, principal, q string, k int, floor *float64) (map[string]int, *engine.RecallResult, error) {
	start := time.Now()
	res, err := ev.eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: Tenant, Principal: principal}, Query: q, K: k, MinScore: floor})
	if err != nil {
		return nil, nil, fmt.Errorf("recall of %s: %w", principal, err)
	}
	ev.lat = append(ev.lat, time.Since(start))
	ranks := map[string]int{}
	for i, h := range res.Results {
		for _, id := range Cites(h.Memory) {
			if _, seen := ranks[id]; !seen {
				ranks[id] = i + 1
			}
		}
	}
	return ranks, res, nil
}

func (ev *evaluator) latency() (p50, p99 time.Duration) {
	if len(ev.lat) == 0 {
		return 0, 0
	}
	l := slices.Clone(ev.lat)
	slices.Sort(l)
	return l[len(l)/2], l[min(len(l)-1, len(l)*99/100)]
}

// Cites returns the dialogue turns a memory of the split stands for: a
// turn's own dia_id, or the dia_ids a fact cites.
func Cites(m *memgate.Memory) []string {
	if id, ok := m.Metadata["dia_id"].(string); ok {
		return []string{id}
	}
	if ids, ok := m.Metadata["dia_ids"].(string); ok {
		return strings.Fields(ids)
	}
	return nil
}

// citable returns, for facts, the turns some fact of each principal cites
// (only those count as evidence), and the number of memories in the set.
func citable(dir string, set Set) (map[string]map[string]bool, int, error) {
	f, err := os.Open(filepath.Join(dir, set.File()))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	out := map[string]map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		n++
		var m memgate.Memory
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, 0, fmt.Errorf("%s line %d: %w", set.File(), n, err)
		}
		if out[m.Principal] == nil {
			out[m.Principal] = map[string]bool{}
		}
		for _, id := range Cites(&m) {
			out[m.Principal][id] = true
		}
	}
	return out, n, sc.Err()
}

// SwapNames replaces, as whole words, each of the speakers from by the
// speaker of to at the same position: the first speaker's name by the
// other conversation's first speaker, the second by the second.
func SwapNames(q string, from, to []string) string {
	if len(from) == 0 || len(from) != len(to) {
		return q
	}
	repl := map[string]string{}
	alts := make([]string, 0, len(from))
	for i, f := range from {
		repl[f] = to[i]
		alts = append(alts, regexp.QuoteMeta(f))
	}
	re := regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
	return re.ReplaceAllStringFunc(q, func(s string) string { return repl[s] })
}

type acc struct {
	n   int
	sum map[int]float64
}

type accs map[string]*acc

func newAccs() accs { return accs{} }

// add counts one question: the share of its evidence found at each k.
func (m accs) add(key string, ranks map[string]int, evidence []string) {
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

func (m accs) recall() map[string]Recall {
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

// Targets are the figures a report must reach; a zero field is not
// checked (MaxInjected and MaxFloorDrop: a negative one is not checked).
type Targets struct {
	MinRecall10  float64 // recall@10 with the floor off
	MinRecall5   float64 // recall@5 with the floor off
	MaxFloorDrop float64 // recall@10 lost at the default floor
	MinSilence   float64 // foreign-query silence
	MinSwapped   float64 // name-swapped silence
	MaxInjected  float64 // injected per own question
}

// Check returns an error naming every target the report misses.
func (r *Report) Check(t Targets) error {
	var miss []string
	off, at := r.FloorOff["overall"].At, r.AtFloor["overall"].At
	name := string(r.Set)
	if r.Embedder != "" {
		name = r.Embedder + " " + name
	}
	if off["10"] < t.MinRecall10 {
		miss = append(miss, fmt.Sprintf("recall@10 with the floor off is %.3f, below %.3f", off["10"], t.MinRecall10))
	}
	if off["5"] < t.MinRecall5 {
		miss = append(miss, fmt.Sprintf("recall@5 with the floor off is %.3f, below %.3f", off["5"], t.MinRecall5))
	}
	if t.MaxFloorDrop > 0 && off["10"]-at["10"] > t.MaxFloorDrop {
		miss = append(miss, fmt.Sprintf("recall@10 drops by %.3f at the default floor, more than %.3f", off["10"]-at["10"], t.MaxFloorDrop))
	}
	if r.Silence < t.MinSilence {
		miss = append(miss, fmt.Sprintf("foreign-query silence is %.3f, below %.3f", r.Silence, t.MinSilence))
	}
	if r.Swapped < t.MinSwapped {
		miss = append(miss, fmt.Sprintf("name-swapped silence is %.3f, below %.3f", r.Swapped, t.MinSwapped))
	}
	if t.MaxInjected > 0 && r.Injected > t.MaxInjected {
		miss = append(miss, fmt.Sprintf("%.2f injected per question, more than %.2f", r.Injected, t.MaxInjected))
	}
	if len(miss) > 0 {
		return fmt.Errorf("LoCoMo %s: targets missed: %s", name, strings.Join(miss, "; "))
	}
	return nil
}

// WriteTable prints the report as a table.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%s: %d memories, %d questions", r.Set, r.Memories, r.Questions)
	if r.Embedder != "" {
		fmt.Fprintf(w, ", embedder %s", r.Embedder)
	}
	if len(r.Half) > 0 {
		fmt.Fprintf(w, ", principals %s", strings.Join(r.Half, " "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "floor\tgroup\tn\tR@1\tR@5\tR@10\tR@20\t")
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
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", set.name, g, rc.Questions, rc.At["1"], rc.At["5"], rc.At["10"], rc.At["20"])
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "at floor %.2f (k=%d): foreign silence %.3f, name-swapped silence %.3f (%d questions), injected per question %.2f\n",
		r.Floor, InjectK, r.Silence, r.Swapped, r.ForeignN, r.Injected)
	fmt.Fprintf(w, "recall latency through the engine: p50 %v, p99 %v\n", r.LatencyP50.Round(time.Microsecond), r.LatencyP99.Round(time.Microsecond))
	if len(r.Sweep) > 0 {
		fmt.Fprintf(w, "floor sweep (k=%d):\n", InjectK)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "floor\tR@10\tsilence\tswapped\tinjected\t")
		for _, p := range r.Sweep {
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t\n", p.Floor, p.Recall10, p.Silence, p.Swapped, p.Injected)
		}
		tw.Flush()
	}
}
