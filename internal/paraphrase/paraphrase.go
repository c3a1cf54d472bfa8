// Package paraphrase reads memgate's user-style recall sets (bench/paraphrase
// in the repository, or the directory $MEMGATE_PARAPHRASE_DIR names) and
// measures recall on them through the whole engine: questions a person or
// an assistant asks in other words than the memory that answers them must
// find it (missed recall), and questions on topics a person never stored,
// the same questions asked of another person, and general questions about
// nobody must recall nothing (forbidden recall). It is used by tests and by
// `memgate bench paraphrase`; it never downloads anything.
package paraphrase

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// DirEnv names a directory of sets to use instead of the repository's.
const DirEnv = "MEMGATE_PARAPHRASE_DIR"

// RepoDir is where the repository keeps the sets, relative to its root.
const RepoDir = "bench/paraphrase"

// Sets are the set names `--set` takes: dev.json is written to be looked
// at and tuned on; heldout.json is kept apart to check what was tuned.
var Sets = []string{"dev", "heldout"}

// Dir returns the sets' directory: $MEMGATE_PARAPHRASE_DIR, or the
// repository's bench/paraphrase, found from the working directory or one
// of its parents (tests run in their package's directory).
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("paraphrase: %s=%s is not a directory", DirEnv, d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, filepath.FromSlash(RepoDir))
		if _, err := os.Stat(filepath.Join(dir, "dev.json")); err == nil {
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("paraphrase: no %s/dev.json in %s or its parents (run from the repository, or set %s)", RepoDir, wd, DirEnv)
		}
	}
}

// SetPath returns the file of the named set (dev or heldout) in Dir, or
// an error saying why there is none.
func SetPath(set string) (string, error) {
	if !slices.Contains(Sets, set) {
		return "", memgate.FieldError("set", "must be dev or heldout")
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, set+".json")
	if _, err := os.Stat(p); err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("paraphrase: the %s set is not in %s (no %s.json; it is written apart from dev.json: use --file to name one)", set, dir, set)
		}
		return "", err
	}
	return p, nil
}

// Kind is what a question tests.
type Kind string

// The kinds of question.
const (
	// Paraphrase asks for a stored fact in other words than the fact's.
	Paraphrase Kind = "paraphrase"
	// Task asks for help that needs a stored fact without asking for it.
	Task Kind = "task"
	// Unrelated asks about the person on a topic none of their facts holds.
	Unrelated Kind = "unrelated"
	// Offtopic is a general question about nobody.
	Offtopic Kind = "offtopic"
)

// Kinds lists the kinds in report order.
var Kinds = []Kind{Paraphrase, Task, Unrelated, Offtopic}

// Targeted reports whether questions of kind k have answers.
func (k Kind) Targeted() bool { return k == Paraphrase || k == Task }

// Data is one set file.
type Data struct {
	Comment string `json:"_comment,omitempty"`
	// TopicRelations says how the set's author vetted its unrelated
	// questions and name swaps: "" by the vocabulary's relations (a
	// question is answered by facts on its topic and on the topics that
	// answer it: AnsweredBy), "exact" by the topic alone, having read
	// every fact.
	TopicRelations string     `json:"topic_relations,omitempty"`
	People         []Person   `json:"people"`
	Questions      []Question `json:"questions"`
	Distractors    []string   `json:"distractors"`
}

// Person is one principal and the facts they told or an assistant noted.
type Person struct {
	Principal string `json:"principal"`
	Name      string `json:"name"`
	Facts     []Fact `json:"facts"`
}

// Fact is one memory of a person, on one topic of the vocabulary.
type Fact struct {
	ID      string `json:"id"`
	Topic   string `json:"topic"`
	Content string `json:"content"`
}

// Question is one question asked of its principal.
type Question struct {
	ID        string   `json:"id"`
	Principal string   `json:"principal"`
	Kind      Kind     `json:"kind"`
	Text      string   `json:"text"`
	Answers   []string `json:"answers,omitempty"`
	Topic     string   `json:"topic,omitempty"`
}

// Load reads and validates a set file (see Validate).
func Load(path string) (*Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d Data
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	d.canonicalTopics()
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return &d, nil
}

// canonicalTopics replaces the topics another set's author named otherwise
// (aliases: "partner" for spouse) by the vocabulary's.
func (d *Data) canonicalTopics() {
	for i := range d.People {
		for j := range d.People[i].Facts {
			d.People[i].Facts[j].Topic = Canonical(d.People[i].Facts[j].Topic)
		}
	}
	for i := range d.Questions {
		d.Questions[i].Topic = Canonical(d.Questions[i].Topic)
	}
}

var principalRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Validate checks the set's structure: principals lowercase identifiers
// and unique, every person named; fact ids unique and every fact's topic
// from the vocabulary (Topics), its content unique in its partition;
// question ids unique, every question's principal a person of the set,
// its kind one of Kinds; a paraphrase or task question has answers, each
// a fact of its own principal, and a topic; an unrelated question has a
// topic and no answers; an off-topic one neither; distractors are unique
// and none is a person's fact. What the words of a set must satisfy (no
// word shared with the answer, silence is deserved) is checked by the
// package's tests on every set file.
func (d *Data) Validate() error {
	if d.TopicRelations != "" && d.TopicRelations != "exact" {
		return fmt.Errorf("topic_relations must be empty or \"exact\", not %q", d.TopicRelations)
	}
	if len(d.People) == 0 {
		return fmt.Errorf("no people")
	}
	people := map[string]*Person{}
	facts := map[string]string{} // fact id → principal
	distractors := map[string]int{}
	for i, s := range d.Distractors {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("distractor #%d is empty", i+1)
		}
		if j, dup := distractors[s]; dup {
			return fmt.Errorf("distractor #%d repeats #%d", i+1, j)
		}
		distractors[s] = i + 1
	}
	for i := range d.People {
		p := &d.People[i]
		if !principalRE.MatchString(p.Principal) || !memgate.ValidIdent(p.Principal) {
			return fmt.Errorf("person %d: principal %q must be a lowercase identifier", i+1, p.Principal)
		}
		if people[p.Principal] != nil {
			return fmt.Errorf("principal %q appears twice", p.Principal)
		}
		people[p.Principal] = p
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("principal %q has no name", p.Principal)
		}
		if len(p.Facts) == 0 {
			return fmt.Errorf("principal %q has no facts", p.Principal)
		}
		contents := map[string]string{}
		for _, f := range p.Facts {
			switch {
			case f.ID == "":
				return fmt.Errorf("a fact of %q has no id", p.Principal)
			case facts[f.ID] != "":
				return fmt.Errorf("fact id %q appears twice", f.ID)
			case !IsTopic(f.Topic):
				return fmt.Errorf("fact %q: topic %q is not in the vocabulary", f.ID, f.Topic)
			case strings.TrimSpace(f.Content) == "":
				return fmt.Errorf("fact %q has no content", f.ID)
			case contents[f.Content] != "":
				return fmt.Errorf("facts %q and %q have the same content", contents[f.Content], f.ID)
			case distractors[f.Content] != 0:
				return fmt.Errorf("fact %q is also distractor #%d", f.ID, distractors[f.Content])
			}
			facts[f.ID] = p.Principal
			contents[f.Content] = f.ID
		}
	}
	ids := map[string]bool{}
	for i, q := range d.Questions {
		name := q.ID
		if name == "" {
			return fmt.Errorf("question %d has no id", i+1)
		}
		if ids[q.ID] {
			return fmt.Errorf("question id %q appears twice", q.ID)
		}
		ids[q.ID] = true
		if people[q.Principal] == nil {
			return fmt.Errorf("question %q: principal %q is not a person of the set", name, q.Principal)
		}
		if strings.TrimSpace(q.Text) == "" {
			return fmt.Errorf("question %q has no text", name)
		}
		switch q.Kind {
		case Paraphrase, Task:
			if len(q.Answers) == 0 {
				return fmt.Errorf("%s question %q has no answers", q.Kind, name)
			}
			for _, a := range q.Answers {
				switch owner, ok := facts[a]; {
				case !ok:
					return fmt.Errorf("question %q: answer %q is not a fact of the set", name, a)
				case owner != q.Principal:
					return fmt.Errorf("question %q: answer %q is a fact of %q, not of %q", name, a, owner, q.Principal)
				}
			}
			if len(slices.Compact(slices.Sorted(slices.Values(q.Answers)))) != len(q.Answers) {
				return fmt.Errorf("question %q lists an answer twice", name)
			}
			if !IsTopic(q.Topic) {
				return fmt.Errorf("question %q: topic %q is not in the vocabulary", name, q.Topic)
			}
		case Unrelated:
			if len(q.Answers) > 0 {
				return fmt.Errorf("unrelated question %q has answers", name)
			}
			if !IsTopic(q.Topic) {
				return fmt.Errorf("question %q: topic %q is not in the vocabulary", name, q.Topic)
			}
		case Offtopic:
			if len(q.Answers) > 0 || q.Topic != "" {
				return fmt.Errorf("off-topic question %q has answers or a topic", name)
			}
		default:
			return fmt.Errorf("question %q: kind %q is not one of paraphrase, task, unrelated, offtopic", name, q.Kind)
		}
	}
	return nil
}

// Person returns the person of principal p, or nil.
func (d *Data) Person(p string) *Person {
	for i := range d.People {
		if d.People[i].Principal == p {
			return &d.People[i]
		}
	}
	return nil
}

// Fact returns the fact of the id, or nil.
func (d *Data) Fact(id string) *Fact {
	for i := range d.People {
		for j := range d.People[i].Facts {
			if d.People[i].Facts[j].ID == id {
				return &d.People[i].Facts[j]
			}
		}
	}
	return nil
}

// Facts counts the facts of the set.
func (d *Data) Facts() int {
	n := 0
	for _, p := range d.People {
		n += len(p.Facts)
	}
	return n
}

// Count counts the questions of kind k.
func (d *Data) Count(k Kind) int {
	n := 0
	for _, q := range d.Questions {
		if q.Kind == k {
			n++
		}
	}
	return n
}

// Half returns the first (h = 1) or second (h = 2) half of the people in
// file order (the first half has the odd one), with their questions, and
// every distractor; 0 is the whole set. A half is a set of its own: its
// name-swapped questions go to people of the same half.
func (d *Data) Half(h int) (*Data, error) {
	if h == 0 {
		return d, nil
	}
	if h != 1 && h != 2 {
		return nil, memgate.FieldError("half", "must be 1 or 2")
	}
	cut := (len(d.People) + 1) / 2
	people := d.People[:cut]
	if h == 2 {
		people = d.People[cut:]
	}
	out := &Data{Comment: d.Comment, People: people, Distractors: d.Distractors}
	for _, q := range d.Questions {
		if out.Person(q.Principal) != nil {
			out.Questions = append(out.Questions, q)
		}
	}
	return out, nil
}

// Topics of the person's facts.
func (p *Person) Topics() map[string]bool {
	out := map[string]bool{}
	for _, f := range p.Facts {
		out[f.Topic] = true
	}
	return out
}

// Excluded returns the topics a person must hold no fact on to be asked
// q's swapped question (or, for an unrelated question, for the question
// to be unanswered by them): q's topic, its answers' topics, and every
// topic whose facts may answer one of those (AnsweredBy).
func (d *Data) Excluded(q Question) map[string]bool {
	out := map[string]bool{}
	add := func(t string) {
		if t == "" {
			return
		}
		out[t] = true
		if d.TopicRelations == "exact" {
			return
		}
		for _, r := range AnsweredBy(t) {
			out[r] = true
		}
	}
	add(q.Topic)
	for _, a := range q.Answers {
		if f := d.Fact(a); f != nil {
			add(f.Topic)
		}
	}
	return out
}

// SwapTarget returns the person a paraphrase or task question is asked of
// with the names swapped: the next person after its own in file order
// (wrapping around) who holds no fact on an excluded topic (Excluded), so
// that nothing of theirs answers it. ok is false when nobody qualifies.
func (d *Data) SwapTarget(q Question) (target *Person, ok bool) {
	from := slices.IndexFunc(d.People, func(p Person) bool { return p.Principal == q.Principal })
	if from < 0 {
		return nil, false
	}
	excluded := d.Excluded(q)
	for i := 1; i < len(d.People); i++ {
		p := &d.People[(from+i)%len(d.People)]
		if !holdsAny(p, excluded) {
			return p, true
		}
	}
	return nil, false
}

func holdsAny(p *Person, topics map[string]bool) bool {
	for _, f := range p.Facts {
		if topics[f.Topic] {
			return true
		}
	}
	return false
}

// SwapName replaces the name from in text, as a whole word in any case
// ("Dana", "dana", "DANA", and "Dana's" with its possessive), by to,
// written in the same case as what it replaces (all lower or all upper
// case, else as to is written). Text without the name (a question in the
// first person, or with a pronoun) is returned as it is.
func SwapName(text, from, to string) string {
	if from == "" {
		return text
	}
	re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(from))
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringIndex(text, -1) {
		before, _ := utf8.DecodeLastRuneInString(text[:m[0]])
		after, _ := utf8.DecodeRuneInString(text[m[1]:])
		if isWordRune(before) || isWordRune(after) {
			continue
		}
		b.WriteString(text[last:m[0]])
		switch s := text[m[0]:m[1]]; {
		case s == strings.ToLower(s) && s != strings.ToUpper(s):
			b.WriteString(strings.ToLower(to))
		case s == strings.ToUpper(s) && s != strings.ToLower(s):
			b.WriteString(strings.ToUpper(to))
		default:
			b.WriteString(to)
		}
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}
