package paraphrase

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

func hits(labels ...string) []Hit {
	out := make([]Hit, len(labels))
	for i, l := range labels {
		out[i] = Hit{Memory: l, Score: 1 - float64(i)/10}
	}
	return out
}

// The judging of a hand-made run: first, top 3, silence and ride-along
// each count what their definition says.
func TestTallyJudges(t *testing.T) {
	t.Parallel()
	var ta tally
	para := Question{Kind: Paraphrase, Answers: []string{"a.x", "a.y"}}
	task := Question{Kind: Task, Answers: []string{"a.z"}}
	for _, c := range []struct {
		q     Question
		got   []Hit
		first bool
	}{
		{para, hits("a.x", "a.q", "distractor #3"), true}, // first; 2 ride along
		{para, hits("a.y"), true},                         // first; none rides along
		{para, hits("a.q", "a.r", "a.x"), false},          // third: top 3 only
		{para, hits("a.q", "a.r", "a.s", "a.x"), false},   // fourth: neither
		{para, nil, false},                                // nothing
		{task, hits("a.z", "a.x", "a.y", "a.q"), true},    // first; 3 ride along (a.x answers another question)
		{task, hits("a.q", "a.z"), false},                 // second
	} {
		if got := ta.targeted(c.q, c.got); got != c.first {
			t.Errorf("targeted(%v) = %v, want %v", c.got, got, c.first)
		}
	}
	for _, c := range []struct {
		s      *silence
		got    []Hit
		silent bool
	}{
		{&ta.unrelated, nil, true},
		{&ta.unrelated, hits("a.x"), false},
		{&ta.unrelated, []Hit{}, true},
		{&ta.swapped, hits("distractor #1"), false},
		{&ta.offtopic, nil, true},
	} {
		if got := ta.silence(c.s, c.got); got != c.silent {
			t.Errorf("silence(%v) = %v, want %v", c.got, got, c.silent)
		}
	}
	f := ta.figures()
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.4f, want %.4f", name, got, want)
		}
	}
	if f.Paraphrase.N != 5 || f.Task.N != 2 || f.Targeted.N != 7 {
		t.Errorf("counts %d %d %d, want 5 2 7", f.Paraphrase.N, f.Task.N, f.Targeted.N)
	}
	near("paraphrase first", f.Paraphrase.First, 2.0/5)
	near("paraphrase top3", f.Paraphrase.Top3, 3.0/5)
	near("task first", f.Task.First, 1.0/2)
	near("task top3", f.Task.Top3, 2.0/2)
	near("targeted first", f.Targeted.First, 3.0/7)
	near("targeted top3", f.Targeted.Top3, 5.0/7)
	near("unrelated", f.Unrelated.Silent, 2.0/3)
	near("swapped", f.Swapped.Silent, 0)
	near("offtopic", f.Offtopic.Silent, 1)
	near("ride-along", f.RideAlong, (2.0+0+3)/3)
	if f.RideAlongN != 3 || f.Unrelated.N != 3 || f.Swapped.N != 1 || f.Offtopic.N != 1 {
		t.Errorf("ride-along over %d, silences over %d %d %d; want 3, 3 1 1", f.RideAlongN, f.Unrelated.N, f.Swapped.N, f.Offtopic.N)
	}
	// Nothing asked: every share is 0, not NaN.
	var empty tally
	if f := empty.figures(); f.Targeted.First != 0 || f.RideAlong != 0 || f.Unrelated.Silent != 0 {
		t.Errorf("empty figures %+v", f)
	}
}

func TestSwapName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, from, to, want string }{
		{"What does Dana do for a living?", "Dana", "Omar", "What does Omar do for a living?"},
		{"What's Dana's favourite colour?", "Dana", "Omar", "What's Omar's favourite colour?"},
		{"What’s Dana’s job?", "Dana", "Omar", "What’s Omar’s job?"},
		{"does dana eat meat?", "Dana", "Omar", "does omar eat meat?"},
		{"IS DANA VEGETARIAN?", "Dana", "Omar", "IS OMAR VEGETARIAN?"},
		{"Dana, Dana and dana.", "Dana", "Omar", "Omar, Omar and omar."},
		{"Does Danae know Dana?", "Dana", "Omar", "Does Danae know Omar?"}, // whole words only
		{"Is Tomás's birthday in May?", "Tomás", "Aiko", "Is Aiko's birthday in May?"},
		{"Is TOMÁS in Valencia?", "Tomás", "Aiko", "Is AIKO in Valencia?"},
		{"Is Tomásito here?", "Tomás", "Aiko", "Is Tomásito here?"},
		{"What car do I have?", "Dana", "Omar", "What car do I have?"},
		{"Which languages does she speak?", "Dana", "Omar", "Which languages does she speak?"},
		{"Where does Mary Ann live?", "Mary Ann", "Li", "Where does Li live?"},
	} {
		if got := SwapName(c.text, c.from, c.to); got != c.want {
			t.Errorf("SwapName(%q, %q, %q) = %q, want %q", c.text, c.from, c.to, got, c.want)
		}
	}
}

// small is a set of five people for the structural tests.
func small() *Data {
	d := &Data{Distractors: []string{"The elevator is out of service.", "The router was rebooted."}}
	for i, p := range []struct{ principal, topic string }{
		{"ann", "diet"}, {"ben", "pets"}, {"cai", "diet"}, {"dee", "favourite-food"}, {"eve", "job"},
	} {
		name := strings.ToUpper(p.principal[:1]) + p.principal[1:]
		d.People = append(d.People, Person{Principal: p.principal, Name: name,
			Facts: []Fact{{ID: p.principal + ".f", Topic: p.topic, Content: name + " fact " + string(rune('a'+i))}}})
		d.Questions = append(d.Questions,
			Question{ID: p.principal + ".q", Principal: p.principal, Kind: Paraphrase, Text: "What about " + name + "?", Answers: []string{p.principal + ".f"}, Topic: p.topic},
			Question{ID: p.principal + ".u", Principal: p.principal, Kind: Unrelated, Text: "Tattoo of " + name + "?", Topic: "tattoo"},
		)
	}
	d.Questions = append(d.Questions, Question{ID: "off1", Principal: "dee", Kind: Offtopic, Text: "Why is the sky blue?"})
	return d
}

func TestHalf(t *testing.T) {
	t.Parallel()
	d := small()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	principals := func(d *Data) (people, asked []string) {
		for _, p := range d.People {
			people = append(people, p.Principal)
		}
		for _, q := range d.Questions {
			if !slices.Contains(asked, q.Principal) {
				asked = append(asked, q.Principal)
			}
		}
		return people, asked
	}
	for h, want := range map[int][]string{0: {"ann", "ben", "cai", "dee", "eve"}, 1: {"ann", "ben", "cai"}, 2: {"dee", "eve"}} {
		hd, err := d.Half(h)
		if err != nil {
			t.Fatal(err)
		}
		people, asked := principals(hd)
		if !slices.Equal(people, want) || !slices.Equal(asked, want) {
			t.Errorf("half %d: people %v asked %v, want %v", h, people, asked, want)
		}
		if len(hd.Distractors) != 2 {
			t.Errorf("half %d has %d distractors, want all 2", h, len(hd.Distractors))
		}
		if err := hd.Validate(); err != nil {
			t.Errorf("half %d: %v", h, err)
		}
	}
	two, _ := d.Half(2)
	if n := two.Count(Offtopic); n != 1 {
		t.Errorf("half 2 has %d off-topic questions, want dee's", n)
	}
	if _, err := d.Half(3); memgate.ErrorField(err) != "half" {
		t.Errorf("half 3: %v, want an error naming half", err)
	}
}

// SwapTarget is the next person in file order, wrapping around, who holds
// nothing on the question's topic nor on a topic answering it.
func TestSwapTarget(t *testing.T) {
	t.Parallel()
	d := small()
	for _, c := range []struct{ q, want string }{
		{"ann.q", "ben"}, // diet: ben holds pets only
		{"ben.q", "cai"}, // pets
		{"cai.q", "eve"}, // diet: dee's favourite food answers diet questions
		{"eve.q", "ann"}, // job: wraps around
	} {
		q := d.Questions[slices.IndexFunc(d.Questions, func(q Question) bool { return q.ID == c.q })]
		got, ok := d.SwapTarget(q)
		if !ok || got.Principal != c.want {
			t.Errorf("SwapTarget(%s) = %v, %v; want %s", c.q, got, ok, c.want)
		}
	}
	// Within a half, the target is a person of the half, or none.
	one, _ := d.Half(1)
	q := one.Questions[slices.IndexFunc(one.Questions, func(q Question) bool { return q.ID == "cai.q" })]
	if got, ok := one.SwapTarget(q); !ok || got.Principal != "ben" {
		t.Errorf("half 1: SwapTarget(cai.q) = %v, %v; want ben", got, ok)
	}
	for i := range one.People {
		one.People[i].Facts[0].Topic = "diet"
	}
	if got, ok := one.SwapTarget(q); ok {
		t.Errorf("everyone holds diet, yet SwapTarget found %s", got.Principal)
	}
}

func TestParseTargets(t *testing.T) {
	t.Parallel()
	got, err := ParseTargets("alone", " first=0.75, top3=0.85,unrelated=0.85,swapped=0.8,offtopic=1,ride-along=2.5 ")
	want := Targets{First: 0.75, Top3: 0.85, Unrelated: 0.85, Swapped: 0.8, Offtopic: 1, RideAlong: 2.5}
	if err != nil || got != want {
		t.Errorf("ParseTargets = %+v, %v; want %+v", got, err, want)
	}
	if got, err := ParseTargets("alone", ""); err != nil || got != NoTargets {
		t.Errorf("empty: %+v, %v; want NoTargets", got, err)
	}
	if got, _ := ParseTargets("alone", "first=0.5"); got.Top3 >= 0 || got.RideAlong >= 0 {
		t.Errorf("unnamed targets are checked: %+v", got)
	}
	for _, bad := range []struct{ s, in string }{
		{"recall=0.5", `unknown target "recall"`},
		{"first", "name=value"},
		{"first=high", "first must be"},
		{"first=1.5", "first must be"},
		{"offtopic=-0.1", "offtopic must be"},
		{"first=NaN", "first must be"},
		{"ride-along=11", "ride-along must be"},
		{"first=0.5,first=0.6", "twice"},
	} {
		_, err := ParseTargets("distractors", bad.s)
		if memgate.ErrorField(err) != "distractors" || !strings.Contains(err.Error(), bad.in) {
			t.Errorf("ParseTargets(%q) = %v, want an error naming distractors and saying %q", bad.s, err, bad.in)
		}
	}
}

func TestCheckTargets(t *testing.T) {
	t.Parallel()
	c := &ConditionReport{Condition: WithDistractors, AtFloor: Figures{
		Targeted: Found{N: 10, First: 0.5, Top3: 0.8}, Unrelated: Silence{N: 4, Silent: 0.75},
		Swapped: Silence{N: 10, Silent: 0.9}, Offtopic: Silence{N: 2, Silent: 1}, RideAlong: 3, RideAlongN: 5,
	}}
	if err := c.Check(NoTargets); err != nil {
		t.Errorf("no targets: %v", err)
	}
	if err := c.Check(Targets{First: 0.5, Top3: 0.8, Unrelated: 0.75, Swapped: 0.9, Offtopic: 1, RideAlong: 3}); err != nil {
		t.Errorf("targets met exactly: %v", err)
	}
	err := c.Check(Targets{First: 0.6, Top3: -1, Unrelated: 0.8, Swapped: -1, Offtopic: 1, RideAlong: 2})
	if err == nil {
		t.Fatal("missed targets pass")
	}
	for _, want := range []string{"distractors:", "first 0.500, below 0.600", "unrelated silence 0.750, below 0.800", "ride-along 3.00, more than 2.00"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "top3") || strings.Contains(err.Error(), "swapped") || strings.Contains(err.Error(), "off-topic") {
		t.Errorf("%v names targets that were met or not set", err)
	}
}

func TestLoadValidates(t *testing.T) {
	t.Parallel()
	good := `{"people":[{"principal":"ann","name":"Ann","facts":[{"id":"ann.diet","topic":"diet","content":"Ann is vegan."}]},
	  {"principal":"ben","name":"Ben","facts":[{"id":"ben.pets","topic":"pets","content":"Ben has a cat."}]}],
	 "questions":[{"id":"q1","principal":"ann","kind":"paraphrase","text":"Does Ann eat meat?","answers":["ann.diet"],"topic":"diet"}],
	 "distractors":["The elevator is out of service."]}`
	for _, c := range []struct{ name, from, to, want string }{
		{"good", "", "", ""},
		{"unknown field", `"content":"Ann is vegan."}`, `"content":"Ann is vegan.","colour":"red"}`, "unknown field"},
		{"duplicate fact id", `"id":"ben.pets"`, `"id":"ann.diet"`, `fact id "ann.diet" appears twice`},
		{"duplicate principal", `"principal":"ben","name"`, `"principal":"ann","name"`, `principal "ann" appears twice`},
		{"upper-case principal", `"principal":"ben","name"`, `"principal":"Ben","name"`, "lowercase"},
		{"topic outside the vocabulary", `"topic":"pets"`, `"topic":"cats"`, `topic "cats" is not in the vocabulary`},
		{"answer of another person", `"answers":["ann.diet"]`, `"answers":["ben.pets"]`, `is a fact of "ben", not of "ann"`},
		{"missing answer", `"answers":["ann.diet"]`, `"answers":["ann.job"]`, `"ann.job" is not a fact`},
		{"no answers", `"answers":["ann.diet"],`, ``, "has no answers"},
		{"bad kind", `"kind":"paraphrase"`, `"kind":"quiz"`, `kind "quiz"`},
		{"unknown principal", `"principal":"ann","kind"`, `"principal":"cat","kind"`, `principal "cat" is not a person`},
		{"fact as distractor", `"The elevator is out of service."`, `"Ben has a cat."`, "is also distractor #1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := good
			if c.from != "" {
				if !strings.Contains(text, c.from) {
					t.Fatalf("%q not in the set", c.from)
				}
				text = strings.Replace(text, c.from, c.to, 1)
			}
			path := filepath.Join(t.TempDir(), "set.json")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Load: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Load = %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestSetPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	if _, err := SetPath("heldout"); err == nil || !strings.Contains(err.Error(), "heldout.json") {
		t.Errorf("a missing heldout.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "heldout.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := SetPath("heldout"); err != nil || p != filepath.Join(dir, "heldout.json") {
		t.Errorf("SetPath = %q, %v", p, err)
	}
	if _, err := SetPath("train"); memgate.ErrorField(err) != "set" {
		t.Errorf("an unknown set: %v", err)
	}
}

func TestShuffleIsFixedBySeed(t *testing.T) {
	t.Parallel()
	mk := func() []int {
		s := make([]int, 50)
		for i := range s {
			s[i] = i
		}
		return s
	}
	a, b, c := mk(), mk(), mk()
	Shuffle(a, "dana")
	Shuffle(b, "dana")
	Shuffle(c, "omar")
	if !slices.Equal(a, b) {
		t.Error("the same seed shuffles two ways")
	}
	if slices.Equal(a, c) || slices.Equal(a, mk()) {
		t.Error("the shuffle does not depend on the seed, or does nothing")
	}
}
