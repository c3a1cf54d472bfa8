package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate/internal/paraphrase"
)

// tinyParaphraseSet is a set file in the schema of bench/paraphrase: a
// question in its fact's own words, a question on taxes, and an off-topic
// question that is a distractor word for word.
const tinyParaphraseSet = `{
  "people": [
    {"principal": "alice", "name": "Alice", "facts": [
      {"id": "alice.allergy", "topic": "allergy", "content": "Alice is allergic to peanuts."},
      {"id": "alice.home-city", "topic": "home-city", "content": "Alice lives in Rome."}]},
    {"principal": "bob", "name": "Bob", "facts": [
      {"id": "bob.pets", "topic": "pets", "content": "My dog Rex is a border collie."}]}
  ],
  "questions": [
    {"id": "alice.allergy.1", "principal": "alice", "kind": "paraphrase", "text": "Is Alice allergic to peanuts?", "answers": ["alice.allergy"], "topic": "allergy"},
    {"id": "off1", "principal": "alice", "kind": "offtopic", "text": "How do I file quarterly taxes?"},
    {"id": "off2", "principal": "bob", "kind": "offtopic", "text": "The router was rebooted after the outage on Monday."}
  ],
  "distractors": ["The router was rebooted after the outage on Monday.", "The elevator is out of service until Wednesday."]
}`

func runBench(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"bench"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBenchParaphrase(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tiny.json")
	if err := os.WriteFile(file, []byte(tinyParaphraseSet), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runBench("paraphrase", "--file", file, "--embedders", "builtin", "--json", "--misses", "--alone", "first=1,offtopic=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var reps []paraphrase.Report
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if len(reps) != 1 || reps[0].Set != "tiny" || len(reps[0].Conditions) != 2 || reps[0].Embedder == "" {
		t.Fatalf("reports %+v", reps)
	}
	d := reps[0].Condition(paraphrase.WithDistractors)
	if d == nil || len(d.Misses) != 1 || d.Misses[0].Question != "off2" || d.Misses[0].Got[0].Memory != "distractor #1" {
		t.Errorf("misses with distractors: %+v", d)
	}

	// A target missed fails the command and says which; the table and the
	// misses are printed all the same.
	code, out, errs = runBench("paraphrase", "--file", file, "--embedders", "builtin", "--misses", "--distractors", "offtopic=1")
	if code != 1 || !strings.Contains(errs, "distractors: targets missed: off-topic silence 0.500, below 1.000") {
		t.Errorf("missed target: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"paraphrase tiny: 2 people, 3 facts, 2 distractors", "alone (3 memories, k=10)", "distractors (7 memories, k=10)",
		"miss distractors off2 [offtopic] bob: \"The router was rebooted after the outage on Monday.\" got distractor #1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
}

func TestBenchParaphraseRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"paraphrase", "--alone", "first=0.5,recall=0.3"}, 1, `alone: unknown target "recall"`},
		{[]string{"paraphrase", "--distractors", "first"}, 1, "distractors:"},
		{[]string{"paraphrase", "--distractors", "top3=2"}, 1, "distractors: top3 must be"},
		{[]string{"paraphrase", "--half", "3"}, 1, "half: must be 1 or 2"},
		{[]string{"paraphrase", "--set", "train"}, 1, "set: must be dev or heldout"},
		{[]string{"paraphrase", "dev"}, 2, "takes no arguments"},
		{[]string{"paraphrase", "--file", filepath.Join(t.TempDir(), "none.json")}, 1, "none.json"},
		{[]string{"locomo", "--half", "3"}, 1, "half: must be 1 or 2"},
		{[]string{}, 2, "bench locomo"},
		{[]string{"speed"}, 2, "bench paraphrase"},
	} {
		code, _, errs := runBench(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit %d saying %q", c.args, code, errs, c.code, c.want)
		}
	}
}

func TestBenchParaphraseHeldoutMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dev.json"), []byte(tinyParaphraseSet), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(paraphrase.DirEnv, dir)
	code, _, errs := runBench("paraphrase", "--set", "heldout")
	if code != 1 || !strings.Contains(errs, "heldout.json") {
		t.Errorf("--set heldout without heldout.json: exit %d, stderr %q", code, errs)
	}
}
