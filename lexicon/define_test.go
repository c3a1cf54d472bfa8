package lexicon_test

import (
	"slices"
	"testing"

	"github.com/memgate/memgate/lexicon"
)

func definition(s lexicon.Synset) []string {
	var out []string
	for w := range s.Definition() {
		out = append(out, w.String())
	}
	return out
}

func definedBy(w lexicon.Word) []lexicon.Synset {
	var out []lexicon.Synset
	for s := range lexicon.DefinedBy(w) {
		out = append(out, s)
	}
	return out
}

// The paraphrases recall needs: a question's word is in the definition of
// a memory's word.
func TestDefinition(t *testing.T) {
	for _, c := range []struct {
		synset string
		has    []string // in this order
		lacks  []string
	}{
		// "eater of fruits and grains and nuts; someone who eats no meat
		// or fish or (often) any animal products"
		{"vegetarian.n.01", []string{"eater", "fruit", "eats", "eat", "meat", "fish", "animal_product", "animal", "product"},
			[]string{"vegetarian", "someone", "or", "often", "any", "no", "of", "and"}},
		// "a married man; a woman's partner in marriage"; married_man is a
		// member, though the gloss has it
		{"husband.n.01", []string{"married", "marry", "man", "woman", "partner", "marriage"},
			[]string{"husband", "hubby", "married_man", "a", "in"}},
		// "an anniversary of the day on which a person was born (or the
		// celebration of it)"
		{"birthday.n.01", []string{"anniversary", "day", "person", "born", "bear", "celebration"},
			[]string{"birthday", "be", "was", "which", "it"}},
		// "draw air into, and expel out of, the lungs; "I can breathe
		// better when the air is clean"; "The patient is respiring""
		{"breathe.v.01", []string{"draw", "air", "expel", "lung"},
			[]string{"breathe", "respire", "clean", "patient", "better", "good", "well"}},
		// "killed; `slain' is formal or literary as in "slain warriors"; "a
		// picture of St. George and the slain dragon""
		{"slain.s.01", []string{"kill", "formal", "literary"}, []string{"slain", "warrior", "dragon", "picture", "george"}},
		// "roundabout and unnecessarily wordy; "had a preference for ...";
		// "A periphrastic study ... With words and meanings."-T.S.Eliot;
		// (`ambagious' is archaic)": the usage note after the examples is
		// kept, the attribution after an example dropped
		{"circumlocutious.s.01", []string{"roundabout", "unnecessarily", "wordy", "archaic"},
			[]string{"preference", "forthright", "study", "meaning", "eliot", "ambagious", "periphrastic"}},
	} {
		s := synset(t, c.synset)
		got := definition(s)
		t.Logf("%s: %v", c.synset, got)
		at := -1
		for k, w := range c.has {
			i := slices.Index(got, w)
			if i < 0 {
				t.Errorf("%s's definition lacks %q: %v", c.synset, w, got)
			} else if i < at {
				t.Errorf("%s's definition has %q before %q: %v", c.synset, w, c.has[k-1], got)
			} else {
				at = i
			}
		}
		for _, w := range c.lacks {
			if slices.Contains(got, w) {
				t.Errorf("%s's definition has %q: %v", c.synset, w, got)
			}
		}
	}
	for _, c := range []struct{ word, synset string }{
		{"meat", "vegetarian.n.01"}, {"eat", "vegetarian.n.01"}, {"marry", "husband.n.01"},
		{"born", "birthday.n.01"}, {"bear", "birthday.n.01"}, {"health_professional", "pharmacist.n.01"},
		{"medical_practitioner", "doctor.n.01"},
	} {
		s := synset(t, c.synset)
		if !slices.Contains(definedBy(word(t, c.word)), s) {
			t.Errorf("DefinedBy(%s) lacks %s (whose definition is %v)", c.word, c.synset, definition(s))
		}
	}
	for _, s := range []lexicon.Synset{0, lexicon.Synset(lexicon.NumSynsets() + 1), 1 << 31} {
		for range s.Definition() {
			t.Errorf("invalid synset %d has a definition", s)
		}
	}
	for _, w := range []lexicon.Word{0, lexicon.Word(lexicon.NumWords() + 1), 1 << 31} {
		for range lexicon.DefinedBy(w) {
			t.Errorf("invalid word %d defines something", w)
		}
		if lexicon.DefinedByCount(w) != 0 {
			t.Errorf("invalid word %d has a DefinedByCount", w)
		}
	}
}

// Definition and DefinedBy are each other's inverse, hold no member, no
// repeat and no function word, and DefinedBy is in synset order.
func TestDefinitionStructure(t *testing.T) {
	stop := map[string]bool{}
	for _, w := range []string{"a", "in", "be", "have", "one", "who", "it", "as", "us", "i", "at", "or", "will", "can", "may", "an", "do", "etc", "someone", "something", "especially", "usually"} {
		stop[w] = true
	}
	inDef := make([]int, lexicon.NumWords()+1)
	entries := 0
	for s := lexicon.Synset(1); int(s) <= lexicon.NumSynsets(); s++ {
		var seen []lexicon.Word
		for w := range s.Definition() {
			if w == 0 || int(w) > lexicon.NumWords() {
				t.Fatalf("%s's definition has word %d", s, w)
			}
			if slices.Contains(seen, w) {
				t.Fatalf("%s's definition has %s twice", s, w)
			}
			if stop[w.String()] {
				t.Fatalf("%s's definition has %q", s, w)
			}
			for m := range s.Members() {
				if m == w {
					t.Fatalf("%s's definition has its member %s", s, w)
				}
			}
			seen = append(seen, w)
			inDef[w]++
			entries++
		}
	}
	if entries != golden.definitions {
		t.Errorf("%d definition entries, want %d", entries, golden.definitions)
	}
	if n := lexicon.NumDefined(); n != entries {
		t.Errorf("the header says %d definition entries, the synsets have %d", n, entries)
	}
	back := 0
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		prev := lexicon.Synset(0)
		n := 0
		for s := range lexicon.DefinedBy(w) {
			if s <= prev || int(s) > lexicon.NumSynsets() {
				t.Fatalf("DefinedBy(%s) has %d after %d", w, s, prev)
			}
			prev = s
			n++
			found := false
			for x := range s.Definition() {
				found = found || x == w
			}
			if !found {
				t.Fatalf("DefinedBy(%s) has %s, whose definition lacks it", w, s)
			}
		}
		if n != inDef[w] || lexicon.DefinedByCount(w) != n {
			t.Fatalf("DefinedBy(%s) has %d synsets, DefinedByCount %d, the definitions have it %d times", w, n, lexicon.DefinedByCount(w), inDef[w])
		}
		back += n
	}
	if back != entries {
		t.Errorf("DefinedBy has %d entries, Definition %d", back, entries)
	}
}

// The figures the package comment reports: how many definitions a word is
// in.
func TestDefinitionReport(t *testing.T) {
	var over10, over100, over1000, defined, maxN int
	var maxW lexicon.Word
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		n := lexicon.DefinedByCount(w)
		if n > 0 {
			defined++
		}
		if n > 10 {
			over10++
		}
		if n > 100 {
			over100++
		}
		if n > 1000 {
			over1000++
		}
		if n > maxN {
			maxN, maxW = n, w
		}
	}
	empty := 0
	for s := lexicon.Synset(1); int(s) <= lexicon.NumSynsets(); s++ {
		n := 0
		for range s.Definition() {
			n++
		}
		if n == 0 {
			empty++
		}
	}
	t.Logf("definition entries %d (%.2f per synset, %d synsets with none); words in a definition %d, in > 10: %d, > 100: %d, > 1000: %d; most: %s %d",
		golden.definitions, float64(golden.definitions)/float64(lexicon.NumSynsets()), empty, defined, over10, over100, over1000, maxW, maxN)
	if defined != golden.defined || over100 != golden.over100 || over1000 != golden.over1000 {
		t.Errorf("%d words in a definition, %d in over 100, %d in over 1000; want %d, %d, %d", defined, over100, over1000, golden.defined, golden.over100, golden.over1000)
	}
	for _, c := range []struct {
		word string
		n    int
	}{
		{"eat", 296}, {"meat", 245}, {"married", 68}, {"marry", 91}, {"born", 637}, {"bear", 1140}, {"music", 392},
		{"language", 1074}, {"car", 188}, {"work", 908}, {"person", 2415},
	} {
		n := lexicon.DefinedByCount(word(t, c.word))
		t.Logf("DefinedBy(%s): %d", c.word, n)
		if n != c.n {
			t.Errorf("DefinedBy(%s) has %d synsets, want %d", c.word, n, c.n)
		}
	}
}

func inflections(w lexicon.Word, pos lexicon.POS) []string {
	var out []string
	for f := range lexicon.Inflections(w, pos) {
		out = append(out, f)
	}
	return out
}

func TestInflections(t *testing.T) {
	for _, c := range []struct {
		lemma string
		pos   lexicon.POS
		want  []string
	}{
		{"eat", lexicon.Verb, []string{"ate", "eaten"}},
		{"go", lexicon.Verb, []string{"gone", "went"}},
		{"child", lexicon.Noun, []string{"children"}},
		{"mouse", lexicon.Noun, []string{"mice"}},
		{"good", lexicon.Adj, []string{"best", "better"}},
		{"bear", lexicon.Verb, nil}, // filled in below
		{"dog", lexicon.Noun, nil},
		{"eat", lexicon.Noun, nil},
	} {
		got := inflections(word(t, c.lemma), c.pos)
		t.Logf("Inflections(%s, %s) = %v", c.lemma, c.pos, got)
		if c.lemma == "bear" {
			if !slices.Contains(got, "born") || !slices.Contains(got, "bore") {
				t.Errorf("Inflections(bear, verb) = %v, want born and bore among them", got)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Inflections(%s, %s) = %v, want %v", c.lemma, c.pos, got, c.want)
		}
	}
	// Each form's BaseForms give the word back, and the forms are in
	// order; none is the word.
	n := 0
	var dst []lexicon.Word
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		for pos := lexicon.Noun; pos <= lexicon.Adv; pos++ {
			prev := ""
			for f := range lexicon.Inflections(w, pos) {
				n++
				if f <= prev || f == w.String() {
					t.Fatalf("Inflections(%s, %s) has %q after %q", w, pos, f, prev)
				}
				prev = f
				if dst = lexicon.BaseForms(dst[:0], f, pos); !slices.Contains(dst, w) {
					t.Fatalf("Inflections(%s, %s) has %q, whose base forms are %v", w, pos, f, lemmas(dst))
				}
			}
		}
	}
	if n != golden.inflections {
		t.Errorf("%d inflections, want %d", n, golden.inflections)
	}
	for _, pos := range []lexicon.POS{0, 5, 200} {
		for range lexicon.Inflections(word(t, "eat"), pos) {
			t.Errorf("Inflections with POS %d has forms", pos)
		}
	}
	for range lexicon.Inflections(0, lexicon.Verb) {
		t.Error("Inflections of word 0 has forms")
	}
}
