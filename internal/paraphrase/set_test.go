package paraphrase

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate/analysis"
)

// DistractorAllowList are the terms a distractor may share with a
// question: words so general that they say nothing of a topic, so that a
// distractor holding one still answers no question (bench/paraphrase's
// README gives the reasons).
var DistractorAllowList = []string{"day", "first", "last", "need", "next", "one", "remind", "still", "use", "week"}

// setFiles returns every set file of the repository's bench/paraphrase.
func setFiles(t *testing.T) []string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no set files in %s (%v)", dir, err)
	}
	return files
}

// nameTerms are the terms of a person's name.
func nameTerms(p *Person) []string { return analysis.Terms(p.Name) }

// contentTerms are the terms of text minus those of the name.
func contentTerms(text string, name []string) []string {
	var out []string
	for _, t := range analysis.Terms(text) {
		if !slices.Contains(name, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// firstPerson reports whether text is said by the person: it has "I"
// (with "I'm", "I've"), "me", "my", "we", "our" or "us".
func firstPerson(text string) bool {
	for _, tok := range analysis.Tokens(text) {
		switch tok {
		case "i", "me", "my", "we", "our", "us":
			return true
		}
	}
	return false
}

// TestSetInvariants holds every set file to what the README promises.
func TestSetInvariants(t *testing.T) {
	t.Parallel()
	for _, path := range setFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			d, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			checkCounts(t, d)
			checkPersons(t, d)
			checkTargeted(t, d)
			checkSilent(t, d)
			allow, ok := allowLists[filepath.Base(path)]
			if !ok {
				t.Fatalf("no allow list of distractor terms for %s", filepath.Base(path))
			}
			checkDistractors(t, d, allow)
		})
	}
}

func checkCounts(t *testing.T, d *Data) {
	t.Helper()
	targeted := d.Count(Paraphrase) + d.Count(Task)
	for _, c := range []struct {
		what     string
		n, least int
	}{
		{"people", len(d.People), 8},
		{"facts", d.Facts(), 150},
		{"paraphrase and task questions", targeted, 250},
		{"task questions", d.Count(Task), 30},
		{"unrelated questions", d.Count(Unrelated), 100},
		{"off-topic questions", d.Count(Offtopic), 30},
		{"distractors", len(d.Distractors), 300},
	} {
		if c.n < c.least {
			t.Errorf("%d %s, want at least %d", c.n, c.what, c.least)
		}
	}
	if len(d.Distractors) > 500 {
		t.Errorf("%d distractors, want at most 500", len(d.Distractors))
	}
}

// checkPersons: 15 to 25 facts a person, in the first and the third
// person both (each at least a quarter of the facts).
func checkPersons(t *testing.T, d *Data) {
	t.Helper()
	first := 0
	for _, p := range d.People {
		if n := len(p.Facts); n < 15 || n > 25 {
			t.Errorf("%s has %d facts, want 15 to 25", p.Principal, n)
		}
		for _, f := range p.Facts {
			if firstPerson(f.Content) {
				first++
			}
		}
	}
	n := d.Facts()
	if first < n/4 || n-first < n/4 {
		t.Errorf("%d of %d facts are in the first person, want each person's voice for at least a quarter", first, n)
	}
}

// checkTargeted: a paraphrase or task question shares no term with any of
// its answers but the person's name, and has a person to be asked of
// with the names swapped.
func checkTargeted(t *testing.T, d *Data) {
	t.Helper()
	// Most targeted questions can be asked of another person, names
	// swapped: one who holds nothing on the topic or on a topic that
	// answers it (the held-out set's author chose swaps by topic alone,
	// so a few of its questions have nobody under the vocabulary's
	// relations, and are left out of name-swapped silence).
	noSwap, targeted := 0, 0
	defer func() {
		if 5*noSwap > targeted {
			t.Errorf("%d of %d targeted questions have nobody to be asked of with the names swapped, want at most a fifth", noSwap, targeted)
		}
	}()
	for _, q := range d.Questions {
		if !q.Kind.Targeted() {
			continue
		}
		targeted++
		p := d.Person(q.Principal)
		name := nameTerms(p)
		qt := contentTerms(q.Text, name)
		for _, a := range q.Answers {
			f := d.Fact(a)
			for _, term := range contentTerms(f.Content, name) {
				if slices.Contains(qt, term) {
					t.Errorf("question %s %q and its answer %s %q share %q", q.ID, q.Text, f.ID, f.Content, term)
				}
			}
		}
		if _, ok := d.SwapTarget(q); !ok {
			noSwap++
			t.Logf("question %s (%s) has nobody to be asked of with the names swapped: everyone holds one of %v", q.ID, q.Topic, sortedKeys(d.Excluded(q)))
		}
	}
}

// checkSilent: an unrelated question's topic (and the topics related to
// it) are none of its person's facts' topics; an off-topic question names
// nobody of the set.
func checkSilent(t *testing.T, d *Data) {
	t.Helper()
	var names []string
	for _, p := range d.People {
		names = append(names, nameTerms(&p)...)
	}
	for _, q := range d.Questions {
		switch q.Kind {
		case Unrelated:
			p := d.Person(q.Principal)
			for _, f := range p.Facts {
				if d.Excluded(q)[f.Topic] {
					t.Errorf("unrelated question %s (%s) %q: %s holds %s %q", q.ID, q.Topic, q.Text, p.Principal, f.ID, f.Content)
				}
			}
		case Offtopic:
			for _, term := range analysis.Terms(q.Text) {
				if slices.Contains(names, term) {
					t.Errorf("off-topic question %s %q names %q", q.ID, q.Text, term)
				}
			}
		}
	}
}

// allowLists are the distractor terms each set's author allows (README.md,
// HELDOUT.md), by set file.
var allowLists = map[string][]string{
	"dev.json":     DistractorAllowList,
	"heldout.json": {"day", "week", "need", "new"},
}

// checkDistractors: no distractor shares a term with a question (of any
// kind, name swaps included) but those of the set's allow list, or names
// a person of the set.
func checkDistractors(t *testing.T, d *Data, allow []string) {
	t.Helper()
	questionTerms := map[string]string{} // term → a question holding it
	for _, q := range d.Questions {
		for _, term := range analysis.Terms(q.Text) {
			if _, ok := questionTerms[term]; !ok {
				questionTerms[term] = q.ID
			}
		}
	}
	for _, p := range d.People {
		for _, term := range nameTerms(&p) {
			questionTerms[term] = "the name of " + p.Principal
		}
	}
	bad := 0
	for i, s := range d.Distractors {
		for _, term := range analysis.Terms(s) {
			if q, ok := questionTerms[term]; ok && !slices.Contains(allow, term) {
				bad++
				if bad <= 50 {
					t.Errorf("distractor #%d %q shares %q with %s", i+1, s, term, q)
				}
			}
		}
	}
	if bad > 50 {
		t.Errorf("... %d shared terms in all", bad)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestReadmeListsTheVocabulary: bench/paraphrase/README.md lists exactly
// the topics of the vocabulary, each with the topics that answer it, and
// the allow list of distractor terms.
func TestReadmeListsTheVocabulary(t *testing.T) {
	t.Parallel()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Topic vocabulary\n")
	if !ok {
		t.Fatal("README has no section \"Topic vocabulary\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|([^|]*)\\|([^|]*)\\|")
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if _, dup := got[m[1]]; dup {
			t.Errorf("README lists %s twice", m[1])
		}
		got[m[1]] = strings.Join(strings.Fields(strings.NewReplacer("`", "", ",", " ").Replace(m[3])), " ")
	}
	for _, topic := range Topics() {
		want := strings.Join(AnsweredBy(topic), " ")
		if rel, ok := got[topic]; !ok {
			t.Errorf("README does not list topic %s", topic)
		} else if rel != want {
			t.Errorf("README says %s is answered by %q, the vocabulary by %q", topic, rel, want)
		}
		delete(got, topic)
	}
	for topic := range got {
		t.Errorf("README lists %s, which is not in the vocabulary", topic)
	}
	allow := regexp.MustCompile(`(?m)^\s*Allowed terms: (.*)$`).FindStringSubmatch(string(b))
	if allow == nil {
		t.Fatal("README has no line \"Allowed terms: ...\"")
	}
	if g, w := strings.Fields(strings.NewReplacer("`", "", ",", " ", ".", " ").Replace(allow[1])), DistractorAllowList; !slices.Equal(g, w) && !(len(g) == 1 && g[0] == "none" && len(w) == 0) {
		t.Errorf("README allows %v, the test %v", g, w)
	}
}

// TestVocabularyIsClosed: every topic that answers another is a topic of
// its own, and topics are kebab-case.
func TestVocabularyIsClosed(t *testing.T) {
	declared := map[string]bool{}
	for _, v := range vocabulary {
		if declared[v.topic] {
			t.Errorf("%s declared twice", v.topic)
		}
		declared[v.topic] = true
	}
	for _, v := range vocabulary {
		for _, r := range v.answeredBy {
			if !declared[r] {
				t.Errorf("%s is answered by %s, which is not declared", v.topic, r)
			}
		}
	}
	if !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(strings.Join(Topics(), "-")) {
		t.Errorf("topics are not kebab-case: %v", Topics())
	}
}
