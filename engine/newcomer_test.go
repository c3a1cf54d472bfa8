package engine_test

import (
	"slices"
	"testing"

	"github.com/memgate/memgate/embedder/builtin"
)

// TestANewcomersQuestions: the questions a new user asks first, in other
// words than their memories, with the built-in embedder at the default
// floor. Each finds its memory first and brings nothing along that shares
// only the person's name with it ("What does Alice drink?" once injected
// her train and her flight beside the tea). The unrelated questions
// (controls for the floor) recall nothing.
func TestANewcomersQuestions(t *testing.T) {
	t.Parallel()
	memories := []string{
		"Alice is allergic to peanuts.",
		"Alice always carries an EpiPen because of her peanut allergy.",
		"Alice's train is booked.",
		"Alice's flight lands at 9pm on Sunday.",
		"Alice drinks green tea every morning.",
		"Alice is vegetarian.",
		"Alice plays the cello in a string quartet.",
		"Alice is fluent in Portuguese.",
	}
	eng := engineWith(t, openDB(t), builtin.New())
	rememberAll(t, eng, "t", "alice", memories...)
	for _, c := range []struct {
		query string
		want  []string // in any order; the first of them first
	}{
		{"Does Alice have any food allergies?", []string{memories[0], memories[1]}},
		{"What does Alice eat?", []string{memories[5]}},
		{"What does Alice drink?", []string{memories[4]}},
		{"What instrument does Alice play?", []string{memories[6]}},
		{"Which languages does Alice speak?", []string{memories[7]}},
	} {
		got, res := recallContents(t, eng, "alice", c.query, 10)
		if len(got) == 0 || !slices.Contains(c.want, got[0]) {
			t.Errorf("%q recalls %q (best %.3f), want %q first", c.query, got, res.Explain.Relatedness, c.want[0])
			continue
		}
		for _, g := range got {
			if !slices.Contains(c.want, g) {
				t.Errorf("%q brings along %q", c.query, g)
			}
		}
	}
	for _, q := range []string{"What car does Alice drive?", "Which football team does Alice support?", "How do I file quarterly taxes?"} {
		if got, res := recallContents(t, eng, "alice", q, 10); len(got) != 0 {
			t.Errorf("unrelated %q recalls %q (best %.3f)", q, got, res.Explain.Relatedness)
		}
	}
}
