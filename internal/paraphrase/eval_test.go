package paraphrase

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/sqlite"
)

// tiny is an inline set for the end-to-end test: one planted question per
// person asks for its fact in the fact's own words (so any ranking finds
// it), and an off-topic question is one of the distractors, word for word
// (so its recall in the distractor condition is that distractor).
func tiny() *Data {
	return &Data{
		People: []Person{
			{Principal: "alice", Name: "Alice", Facts: []Fact{
				{ID: "alice.allergy", Topic: "allergy", Content: "Alice is allergic to peanuts."},
				{ID: "alice.home-city", Topic: "home-city", Content: "Alice lives in Rome."},
				{ID: "alice.job", Topic: "job", Content: "I work as a nurse."},
			}},
			{Principal: "bob", Name: "Bob", Facts: []Fact{
				{ID: "bob.instrument", Topic: "instrument", Content: "Bob plays the violin in a community orchestra."},
				{ID: "bob.pets", Topic: "pets", Content: "My dog Rex is a border collie."},
			}},
		},
		Questions: []Question{
			{ID: "alice.allergy.1", Principal: "alice", Kind: Paraphrase, Text: "Is Alice allergic to peanuts?", Answers: []string{"alice.allergy"}, Topic: "allergy"},
			{ID: "alice.job.t1", Principal: "alice", Kind: Task, Text: "Find me shifts where I work as a nurse.", Answers: []string{"alice.job"}, Topic: "job"},
			{ID: "bob.instrument.1", Principal: "bob", Kind: Paraphrase, Text: "Does Bob play the violin in an orchestra?", Answers: []string{"bob.instrument"}, Topic: "instrument"},
			{ID: "alice.u1", Principal: "alice", Kind: Unrelated, Text: "What car does Alice drive?", Topic: "vehicle"},
			{ID: "off1", Principal: "alice", Kind: Offtopic, Text: "How do I file quarterly taxes?"},
			{ID: "off2", Principal: "bob", Kind: Offtopic, Text: "The council confirmed the bulky waste collection for the 9th."},
		},
		Distractors: []string{
			"The elevator in the east stairwell is out of service until Wednesday.",
			"The council confirmed the bulky waste collection for the 9th.",
			"The router was rebooted after the outage on Monday.",
		},
	}
}

func TestEvaluateThroughTheEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	d := tiny()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(ctx, eng, d, Options{Set: "tiny", Misses: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.People != 2 || rep.Facts != 5 || rep.Distractors != 3 || len(rep.Conditions) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range rep.Conditions {
		t.Run(string(c.Condition), func(t *testing.T) {
			want := 5
			if c.Condition == WithDistractors {
				want = 5 + 2*3
			}
			if c.Memories != want {
				t.Errorf("%d memories, want %d", c.Memories, want)
			}
			if c.Floor <= 0 {
				t.Errorf("default floor %.3f: the engine reported none", c.Floor)
			}
			f := c.AtFloor
			if f.Paraphrase.N != 2 || f.Task.N != 1 || f.Targeted.N != 3 || f.Unrelated.N != 1 || f.Offtopic.N != 2 {
				t.Errorf("question counts %+v", f)
			}
			// Every targeted question has someone to be swapped to (the
			// other person holds nothing on its topic).
			if f.Swapped.N != 3 {
				t.Errorf("%d swapped questions, want 3", f.Swapped.N)
			}
			// The planted questions are found first, the fact alone rides
			// along with nothing it does not answer... or with what it does.
			if f.Paraphrase.First != 1 || f.Paraphrase.Top3 != 1 {
				t.Errorf("planted paraphrases: first %.3f, top3 %.3f, want 1", f.Paraphrase.First, f.Paraphrase.Top3)
			}
			if f.RideAlongN < 2 {
				t.Errorf("ride-along over %d questions, want the planted ones at least", f.RideAlongN)
			}
			if c.FloorOff.Targeted.Top3 != 1 {
				t.Errorf("floor off: top3 %.3f, want 1", c.FloorOff.Targeted.Top3)
			}
			// Taxes are nobody's: silent at the default floor.
			for _, m := range c.Misses {
				if m.Question == "off1" {
					t.Errorf("off-topic question recalled %v", m.Got)
				}
			}
			// The distractor asked word for word is recalled, and named.
			off2 := slices.IndexFunc(c.Misses, func(m Miss) bool { return m.Question == "off2" })
			switch {
			case c.Condition == Alone && off2 >= 0:
				t.Errorf("alone: the distractor's words recalled %v from bob's facts", c.Misses[off2].Got)
			case c.Condition == WithDistractors && (off2 < 0 || c.Misses[off2].Got[0].Memory != "distractor #2"):
				t.Errorf("distractors: the distractor's own words are not a miss naming distractor #2 (%+v)", c.Misses)
			}
			for _, m := range c.Misses {
				if m.Condition != c.Condition {
					t.Errorf("miss %s of %s in %s", m.Question, m.Condition, c.Condition)
				}
				for _, h := range m.Got {
					if d.Fact(h.Memory) == nil && !strings.HasPrefix(h.Memory, "distractor #") {
						t.Errorf("miss %s names %q, neither a fact nor a distractor", m.Question, h.Memory)
					}
				}
			}
			if c.LatencyP50 <= 0 || c.LatencyP99 < c.LatencyP50 {
				t.Errorf("latency p50 %v p99 %v", c.LatencyP50, c.LatencyP99)
			}
		})
	}
	var out bytes.Buffer
	rep.WriteTable(&out)
	rep.WriteMisses(&out)
	for _, want := range []string{"paraphrase tiny: 2 people, 5 facts, 3 distractors", "alone (5 memories, k=10)", "distractors (11 memories, k=10)", "miss distractors off2 [offtopic] bob:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}

	// The engine now holds the set: a second evaluation refuses it rather
	// than count its memories twice.
	if _, err := Evaluate(ctx, eng, d, Options{}); err == nil || !strings.Contains(err.Error(), "fresh engine") {
		t.Errorf("a second evaluation in the same engine: %v", err)
	}
}

// The facts are written as the harness says: kind fact, source user,
// reason "benchmark", active, and in the distractor condition interleaved
// with the distractors, not after them.
func TestEvaluateWritesFactsAsUserFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	d := tiny()
	for i := range 40 {
		d.Distractors = append(d.Distractors, "Locker "+string(rune('A'+i%26))+string(rune('a'+i/26))+" at the depot was emptied.")
	}
	if _, err := Evaluate(ctx, eng, d, Options{Conditions: []Condition{WithDistractors}}); err != nil {
		t.Fatal(err)
	}
	page, err := eng.List(ctx, memgate.Scope{Tenant: WithDistractors.Tenant(), Principal: "alice"}, engine.ListRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Memories) != 3+len(d.Distractors) {
		t.Fatalf("%d memories of alice, want %d", len(page.Memories), 3+len(d.Distractors))
	}
	var facts []int // the facts' places in the listing
	for i, m := range page.Memories {
		if m.Kind != memgate.KindFact || m.Source != memgate.SourceUser || m.Reason != "benchmark" || m.Status != memgate.StatusActive {
			t.Errorf("memory %q: kind %s source %s reason %q status %s", m.Content, m.Kind, m.Source, m.Reason, m.Status)
		}
		if d.Fact("alice.allergy").Content == m.Content || d.Fact("alice.home-city").Content == m.Content || d.Fact("alice.job").Content == m.Content {
			facts = append(facts, i)
		}
	}
	n := len(page.Memories)
	if len(facts) != 3 || slices.Equal(facts, []int{0, 1, 2}) || slices.Equal(facts, []int{n - 3, n - 2, n - 1}) {
		t.Errorf("the facts are at %v of %d memories: written before or after the distractors, not among them", facts, n)
	}
	if c, _ := eng.Counts(ctx, memgate.Scope{Tenant: Alone.Tenant(), AllPrincipals: true}); len(c) != 0 {
		t.Errorf("the alone condition was written though not asked for: %v", c)
	}
}
