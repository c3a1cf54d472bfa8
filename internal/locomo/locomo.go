// Package locomo reads the LoCoMo development split that the repository
// carries in bench/locomo (or the directory $MEMGATE_LOCOMO_DIR names) and
// measures recall on it through the whole engine, as the data's README
// defines each figure. It is used by tests and by `memgate bench locomo`;
// it never downloads anything and never reads outside the directory it is
// given.
package locomo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memgate/memgate/engine"
)

// DirEnv names a LoCoMo data directory to use instead of the repository's.
const DirEnv = "MEMGATE_LOCOMO_DIR"

// RepoDir is where the repository keeps the data, relative to its root.
const RepoDir = "bench/locomo"

// Dir returns the LoCoMo data directory: $MEMGATE_LOCOMO_DIR, or the
// repository's bench/locomo, found from the working directory or one of
// its parents (tests run in their package's directory).
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, check(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, filepath.FromSlash(RepoDir))
		if check(dir) == nil {
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("locomo: no %s in %s or its parents (run from the repository, or set %s)", RepoDir, wd, DirEnv)
		}
	}
}

func check(dir string) error {
	for _, f := range []string{"memories.jsonl", "facts.jsonl", "questions.jsonl", "speakers.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("locomo data missing (set %s): %w", DirEnv, err)
		}
	}
	return nil
}

// Set is one of the two memory sets of the split.
type Set string

// The sets: dialogue turns (memories.jsonl) and LoCoMo's observations, short
// facts about each speaker citing the turns they came from (facts.jsonl).
const (
	Turns Set = "turns"
	Facts Set = "facts"
)

// Sets lists both sets in report order.
var Sets = []Set{Turns, Facts}

// ParseSet returns the set s names.
func ParseSet(s string) (Set, error) {
	switch Set(s) {
	case Turns, Facts:
		return Set(s), nil
	}
	return "", fmt.Errorf("locomo: unknown set %q (turns or facts)", s)
}

// File is the set's file name in the data directory.
func (s Set) File() string {
	if s == Facts {
		return "facts.jsonl"
	}
	return "memories.jsonl"
}

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

// ForeignPairs maps each principal to the one its questions are asked of
// for the silence metrics.
var ForeignPairs = map[string]string{"conv-26": "conv-30", "conv-30": "conv-26", "conv-41": "conv-42", "conv-42": "conv-41"}

// Halves splits the conversations in two, each closed under ForeignPairs:
// a constant chosen on one half is checked on the other.
var Halves = [][]string{{"conv-26", "conv-30"}, {"conv-41", "conv-42"}}

// Tenant is the tenant the harness imports into.
const Tenant = "locomo"

// Data is the split: its questions and each conversation's speakers.
type Data struct {
	Dir       string
	Questions []Question
	// Speakers are the two speakers of each principal, in speakers.json
	// order (the order name swapping pairs them in).
	Speakers map[string][]string
}

// Load reads questions.jsonl and speakers.json from dir.
func Load(dir string) (*Data, error) {
	qs, err := LoadQuestions(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "speakers.json"))
	if err != nil {
		return nil, err
	}
	d := &Data{Dir: dir, Questions: qs}
	if err := json.Unmarshal(b, &d.Speakers); err != nil {
		return nil, fmt.Errorf("speakers.json: %w", err)
	}
	for p, q := range ForeignPairs {
		if len(d.Speakers[p]) != 2 || len(d.Speakers[q]) != 2 {
			return nil, fmt.Errorf("speakers.json: %s and %s need two speakers each", p, q)
		}
	}
	return d, nil
}

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

// Import loads the set's file from dir into eng under Tenant.
func Import(ctx context.Context, eng *engine.Engine, dir string, set Set) (engine.ImportResult, error) {
	f, err := os.Open(filepath.Join(dir, set.File()))
	if err != nil {
		return engine.ImportResult{}, err
	}
	defer f.Close()
	return eng.Import(ctx, engine.ImportRequest{Tenant: Tenant}, f)
}
