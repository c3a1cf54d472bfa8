package paraphrase

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// K is the number of results every recall of the harness asks for.
const K = 10

// Condition is what a person's partition holds when they are asked.
type Condition string

// The conditions, each in a tenant of its own.
const (
	// Alone: the person's facts only.
	Alone Condition = "alone"
	// WithDistractors: the person's facts and every distractor of the set,
	// interleaved.
	WithDistractors Condition = "distractors"
)

// Conditions lists the conditions in report order.
var Conditions = []Condition{Alone, WithDistractors}

// Tenant is the tenant a condition is imported into.
func (c Condition) Tenant() string { return "paraphrase-" + string(c) }

// Options narrows an evaluation.
type Options struct {
	// Set names the set in the report (dev, heldout, or a file's name).
	Set string
	// Half asks only the people of one half (Data.Half): 1 or 2; 0 is
	// everyone.
	Half int
	// Conditions to measure (default Conditions).
	Conditions []Condition
	// Misses keeps, in each condition's report, every question the
	// default floor failed (Miss).
	Misses bool
}

// Report is the outcome of Evaluate.
type Report struct {
	Set         string             `json:"set"`
	Embedder    string             `json:"embedder,omitempty"`
	Half        int                `json:"half,omitempty"`
	People      int                `json:"people"`
	Facts       int                `json:"facts"`
	Distractors int                `json:"distractors"`
	Conditions  []*ConditionReport `json:"conditions"`
}

// ConditionReport is what one condition measured.
type ConditionReport struct {
	Condition Condition `json:"condition"`
	Memories  int       `json:"memories"`
	// Floor is the default floor the engine applied; AtFloor the figures
	// with it (no min_score sent), FloorOff with min_score 0.
	Floor      float64       `json:"floor"`
	AtFloor    Figures       `json:"default_floor"`
	FloorOff   Figures       `json:"floor_off"`
	LatencyP50 time.Duration `json:"recall_p50_ns"`
	LatencyP99 time.Duration `json:"recall_p99_ns"`
	Misses     []Miss        `json:"misses,omitempty"`
}

// Figures are one condition's measures at one floor, each over k = K.
type Figures struct {
	// Paraphrase and Task are the questions of each kind, Targeted both.
	Paraphrase Found `json:"paraphrase"`
	Task       Found `json:"task"`
	Targeted   Found `json:"targeted"`
	// Unrelated, Swapped and Offtopic are the shares of questions that
	// recalled nothing: unrelated questions, every paraphrase and task
	// question asked (names swapped) of a person who holds nothing on its
	// topic (Data.SwapTarget), off-topic questions.
	Unrelated Silence `json:"unrelated_silence"`
	Swapped   Silence `json:"name_swapped_silence"`
	Offtopic  Silence `json:"offtopic_silence"`
	// RideAlong is the mean number of results that are not answers, over
	// the RideAlongN targeted questions whose first result is an answer.
	RideAlong  float64 `json:"ride_along"`
	RideAlongN int     `json:"ride_along_questions"`
}

// Found measures targeted questions: the share whose first result is an
// answer, and whose first three results hold one.
type Found struct {
	N     int     `json:"questions"`
	First float64 `json:"first"`
	Top3  float64 `json:"top3"`
}

// Silence is the share of N questions that recalled nothing.
type Silence struct {
	N      int     `json:"questions"`
	Silent float64 `json:"silent"`
}

// Miss is a question the default floor failed: a targeted one whose first
// result is no answer, or one that should recall nothing and did not.
type Miss struct {
	Question  string    `json:"question"`
	Kind      string    `json:"kind"` // a Kind, or "swapped"
	Condition Condition `json:"condition"`
	// Principal is who was asked (for a swapped question, the other
	// person), Text what (the swapped text).
	Principal string   `json:"principal"`
	Text      string   `json:"text"`
	Answers   []string `json:"answers,omitempty"`
	Got       []Hit    `json:"got"`
}

// Hit is one result: a fact id, or "distractor #n" (n counts from 1 in
// the set file's order).
type Hit struct {
	Memory string  `json:"memory"`
	Score  float64 `json:"score"`
}

// Evaluate imports the set (or the half opts names) into eng, one tenant
// per condition (Condition.Tenant, which must be empty), one partition
// per person: each fact as a memory of kind fact, source user, reason
// "benchmark"; with distractors, every distractor too, interleaved with
// the facts in an order fixed by the principal. It then asks every
// question at the default floor and with the floor off, k = K, and
// measures what Figures defines.
func Evaluate(ctx context.Context, eng *engine.Engine, d *Data, opts Options) (*Report, error) {
	d, err := d.Half(opts.Half)
	if err != nil {
		return nil, err
	}
	rep := &Report{Set: opts.Set, Half: opts.Half, People: len(d.People), Facts: d.Facts(), Distractors: len(d.Distractors)}
	conds := opts.Conditions
	if len(conds) == 0 {
		conds = Conditions
	}
	for _, c := range conds {
		if !slices.Contains(Conditions, c) {
			return nil, fmt.Errorf("paraphrase: unknown condition %q", c)
		}
		ev := &evaluator{eng: eng, d: d, cond: c, labels: map[string]string{}}
		n, err := ev.load(ctx)
		if err != nil {
			return nil, err
		}
		cr := &ConditionReport{Condition: c, Memories: n}
		zero := 0.0
		if cr.FloorOff, _, err = ev.figures(ctx, &zero, false); err != nil {
			return nil, err
		}
		var misses []Miss
		if cr.AtFloor, misses, err = ev.figures(ctx, nil, opts.Misses); err != nil {
			return nil, err
		}
		cr.Floor = ev.floor
		if opts.Misses {
			cr.Misses = misses
		}
		cr.LatencyP50, cr.LatencyP99 = ev.latency()
		rep.Conditions = append(rep.Conditions, cr)
	}
	return rep, nil
}

// evaluator asks one condition's questions through the engine.
type evaluator struct {
	eng    *engine.Engine
	d      *Data
	cond   Condition
	labels map[string]string // memory id → fact id or "distractor #n"
	floor  float64           // the default floor, as the engine reported it
	lat    []time.Duration
}

// item is one memory to write: a fact's id, or a distractor's label.
type item struct{ label, content string }

// load writes the condition's memories and returns how many.
func (ev *evaluator) load(ctx context.Context) (int, error) {
	tenant := ev.cond.Tenant()
	counts, err := ev.eng.Counts(ctx, memgate.Scope{Tenant: tenant, AllPrincipals: true})
	if err != nil {
		return 0, err
	}
	if len(counts) > 0 {
		return 0, fmt.Errorf("paraphrase: tenant %s already holds memories (the harness needs a fresh engine)", tenant)
	}
	total := 0
	for _, p := range ev.d.People {
		items := make([]item, 0, len(p.Facts)+len(ev.d.Distractors))
		for _, f := range p.Facts {
			items = append(items, item{f.ID, f.Content})
		}
		if ev.cond == WithDistractors {
			for i, s := range ev.d.Distractors {
				items = append(items, item{fmt.Sprintf("distractor #%d", i+1), s})
			}
			Shuffle(items, p.Principal)
		}
		const batch = 100
		for i := 0; i < len(items); i += batch {
			chunk := items[i:min(i+batch, len(items))]
			rs := make([]engine.RememberRequest, len(chunk))
			for j, it := range chunk {
				rs[j] = engine.RememberRequest{Memory: memgate.Memory{Tenant: tenant, Principal: p.Principal,
					Kind: memgate.KindFact, Source: memgate.SourceUser, Reason: "benchmark", Content: it.content}}
			}
			out, err := ev.eng.RememberBatch(ctx, rs)
			if err != nil {
				return 0, fmt.Errorf("paraphrase: remember %s's memories: %w", p.Principal, err)
			}
			for j, r := range out {
				switch {
				case r.Deduplicated:
					return 0, fmt.Errorf("paraphrase: %s of %s was folded into an earlier memory", chunk[j].label, p.Principal)
				case r.Status != memgate.StatusActive:
					return 0, fmt.Errorf("paraphrase: the write gate held %s of %s as %s (%s)", chunk[j].label, p.Principal, r.Status, r.StatusReason)
				}
				ev.labels[r.ID] = chunk[j].label
			}
		}
		total += len(items)
	}
	return total, nil
}

// Shuffle orders items in a way fixed by seed (a principal), so that
// neither a fact's place nor its time among the distractors tells it.
func Shuffle[T any](items []T, seed string) {
	h := fnv.New64a()
	io.WriteString(h, seed)
	r := rand.New(rand.NewPCG(h.Sum64(), 0x6d656d67617465))
	r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
}

// figures asks every question at one floor (nil: the default).
func (ev *evaluator) figures(ctx context.Context, floor *float64, keepMisses bool) (Figures, []Miss, error) {
	var t tally
	var misses []Miss
	miss := func(q Question, kind, principal, text string, got []Hit) {
		if keepMisses {
			m := Miss{Question: q.ID, Kind: kind, Condition: ev.cond, Principal: principal, Text: text, Got: got}
			if kind == string(q.Kind) {
				m.Answers = q.Answers
			}
			misses = append(misses, m)
		}
	}
	for _, q := range ev.d.Questions {
		got, err := ev.recall(ctx, q.Principal, q.Text, floor)
		if err != nil {
			return Figures{}, nil, err
		}
		switch q.Kind {
		case Paraphrase, Task:
			if !t.targeted(q, got) {
				miss(q, string(q.Kind), q.Principal, q.Text, got)
			}
			to, ok := ev.d.SwapTarget(q)
			if !ok {
				continue // the set's tests require a target; a half may lack one
			}
			from := ev.d.Person(q.Principal)
			text := SwapName(q.Text, from.Name, to.Name)
			got, err := ev.recall(ctx, to.Principal, text, floor)
			if err != nil {
				return Figures{}, nil, err
			}
			if !t.silence(&t.swapped, got) {
				miss(q, "swapped", to.Principal, text, got)
			}
		case Unrelated:
			if !t.silence(&t.unrelated, got) {
				miss(q, string(q.Kind), q.Principal, q.Text, got)
			}
		case Offtopic:
			if !t.silence(&t.offtopic, got) {
				miss(q, string(q.Kind), q.Principal, q.Text, got)
			}
		}
	}
	return t.figures(), misses, nil
}

// recall asks q of principal and labels the results.
func (ev *evaluator) recall(ctx context.Context, principal, q string, floor *float64) ([]Hit, error) {
	start := time.Now()
	res, err := ev.eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: ev.cond.Tenant(), Principal: principal}, Query: q, K: K, MinScore: floor})
	if err != nil {
		return nil, fmt.Errorf("paraphrase: recall of %s: %w", principal, err)
	}
	ev.lat = append(ev.lat, time.Since(start))
	if floor == nil {
		ev.floor = res.MinScore
	}
	hits := make([]Hit, len(res.Results))
	for i, h := range res.Results {
		label, ok := ev.labels[h.Memory.ID]
		if !ok {
			label = "memory " + h.Memory.ID // not one the harness wrote
		}
		hits[i] = Hit{Memory: label, Score: h.Score}
	}
	return hits, nil
}

func (ev *evaluator) latency() (p50, p99 time.Duration) {
	if len(ev.lat) == 0 {
		return 0, 0
	}
	l := slices.Clone(ev.lat)
	slices.Sort(l)
	return l[len(l)/2], l[min(len(l)-1, len(l)*99/100)]
}

// tally counts what Figures reports; its methods judge one question each.
type tally struct {
	para, task                   found
	unrelated, swapped, offtopic silence
	rideN, rideSum               int
}

type (
	found   struct{ n, first, top3 int }
	silence struct{ n, silent int }
)

// targeted judges a paraphrase or task question's results and reports
// whether the first is an answer.
func (t *tally) targeted(q Question, got []Hit) bool {
	c := &t.para
	if q.Kind == Task {
		c = &t.task
	}
	c.n++
	first := len(got) > 0 && slices.Contains(q.Answers, got[0].Memory)
	if first {
		c.first++
		t.rideN++
		for _, h := range got {
			if !slices.Contains(q.Answers, h.Memory) {
				t.rideSum++
			}
		}
	}
	for _, h := range got[:min(3, len(got))] {
		if slices.Contains(q.Answers, h.Memory) {
			c.top3++
			break
		}
	}
	return first
}

// silence counts a question that should recall nothing in c and reports
// whether it did.
func (t *tally) silence(c *silence, got []Hit) bool {
	c.n++
	if len(got) == 0 {
		c.silent++
		return true
	}
	return false
}

func (t *tally) figures() Figures {
	share := func(k, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(k) / float64(n)
	}
	fd := func(c found) Found { return Found{N: c.n, First: share(c.first, c.n), Top3: share(c.top3, c.n)} }
	sl := func(c silence) Silence { return Silence{N: c.n, Silent: share(c.silent, c.n)} }
	both := found{n: t.para.n + t.task.n, first: t.para.first + t.task.first, top3: t.para.top3 + t.task.top3}
	return Figures{
		Paraphrase: fd(t.para), Task: fd(t.task), Targeted: fd(both),
		Unrelated: sl(t.unrelated), Swapped: sl(t.swapped), Offtopic: sl(t.offtopic),
		RideAlong: share(t.rideSum, t.rideN), RideAlongN: t.rideN,
	}
}

// Condition returns the report of condition c, or nil.
func (r *Report) Condition(c Condition) *ConditionReport {
	for _, cr := range r.Conditions {
		if cr.Condition == c {
			return cr
		}
	}
	return nil
}

// WriteTable prints the report as a table per condition.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "paraphrase %s: %d people, %d facts, %d distractors", r.Set, r.People, r.Facts, r.Distractors)
	if r.Embedder != "" {
		fmt.Fprintf(w, ", embedder %s", r.Embedder)
	}
	if r.Half != 0 {
		fmt.Fprintf(w, ", half %d", r.Half)
	}
	fmt.Fprintln(w)
	for _, c := range r.Conditions {
		fmt.Fprintf(w, "%s (%d memories, k=%d):\n", c.Condition, c.Memories, K)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "floor\tpara@1\tpara@3\ttask@1\ttask@3\tfirst\ttop3\tunrelated\tswapped\tofftopic\tride-along\t")
		f := c.AtFloor
		fmt.Fprintf(tw, "n\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\t\n", f.Paraphrase.N, f.Paraphrase.N, f.Task.N, f.Task.N,
			f.Targeted.N, f.Targeted.N, f.Unrelated.N, f.Swapped.N, f.Offtopic.N)
		for _, row := range []struct {
			name string
			f    Figures
		}{{fmt.Sprintf("%.2f", c.Floor), c.AtFloor}, {"off", c.FloorOff}} {
			f := row.f
			ride := "-" // no targeted question found first
			if f.RideAlongN > 0 {
				ride = fmt.Sprintf("%.2f (%d)", f.RideAlong, f.RideAlongN)
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", row.name,
				f.Paraphrase.First, f.Paraphrase.Top3, f.Task.First, f.Task.Top3, f.Targeted.First, f.Targeted.Top3,
				f.Unrelated.Silent, f.Swapped.Silent, f.Offtopic.Silent, ride)
		}
		tw.Flush()
		fmt.Fprintf(w, "recall latency through the engine: p50 %v, p99 %v\n", c.LatencyP50.Round(time.Microsecond), c.LatencyP99.Round(time.Microsecond))
	}
}

// WriteMisses prints every miss the report kept, a line a question.
func (r *Report) WriteMisses(w io.Writer) {
	for _, c := range r.Conditions {
		for _, m := range c.Misses {
			fmt.Fprintf(w, "miss %s %s [%s] %s: %q", c.Condition, m.Question, m.Kind, m.Principal, m.Text)
			if len(m.Answers) > 0 {
				fmt.Fprintf(w, " want %s", strings.Join(m.Answers, " "))
			}
			if len(m.Got) == 0 {
				fmt.Fprint(w, " got nothing")
			} else {
				fmt.Fprint(w, " got")
				for _, h := range m.Got {
					fmt.Fprintf(w, " %s (%.3f)", h.Memory, h.Score)
				}
			}
			fmt.Fprintln(w)
		}
	}
}
