package lexicon_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memgate/memgate/lexicon"
)

// word returns the word of a lemma, failing the test if there is none.
func word(t testing.TB, lemma string) lexicon.Word {
	t.Helper()
	w, ok := lexicon.Lookup(lemma)
	if !ok {
		t.Fatalf("%q is not a lemma", lemma)
	}
	return w
}

var posOfLetter = map[string]lexicon.POS{"n": lexicon.Noun, "v": lexicon.Verb, "a": lexicon.Adj, "s": lexicon.Adj, "r": lexicon.Adv}

// synset resolves a name as NLTK does: "medication.n.01" is sense 1 of
// medication as a noun (whose own name is medicine.n.02).
func synset(t testing.TB, name string) lexicon.Synset {
	t.Helper()
	i := strings.LastIndexByte(name, '.')
	j := strings.LastIndexByte(name[:i], '.')
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for k, s := range lexicon.Senses(word(t, name[:j]), posOfLetter[name[j+1:i]]) {
		if k == n-1 {
			return s
		}
	}
	t.Fatalf("there is no synset %s", name)
	return 0
}

func lemmas(ws []lexicon.Word) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"dog", "dog"}, {"ice cream", "ice_cream"}, {"ice_cream", "ice_cream"}, {"Portuguese", "portuguese"},
		{"musical instrument", "musical_instrument"}, {"well-being", "well-being"}, {"'hood", "'hood"},
	} {
		w, ok := lexicon.Lookup(c.in)
		if !ok || w.String() != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.in, w, ok, c.want)
		}
	}
	for _, in := range []string{"", "dogs", "xyzzyq", " dog", "dog ", "ice  cream", "caf\u00e9", strings.Repeat("a", 300)} {
		if w, ok := lexicon.Lookup(in); ok || w != 0 {
			t.Errorf("Lookup(%q) = %q, %v; want nothing", in, w, ok)
		}
	}
	if p := word(t, "ice_cream").Parts(); p != 2 {
		t.Errorf("ice_cream has %d parts", p)
	}
	if p := word(t, "dog").Parts(); p != 1 {
		t.Errorf("dog has %d parts", p)
	}
	// Every word is found by its own lemma, and words are in byte order.
	prev := ""
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		s := w.String()
		if got, ok := lexicon.Lookup(s); !ok || got != w {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", s, got, ok, w)
		}
		if s <= prev || s != strings.ToLower(s) {
			t.Fatalf("word %d is %q after %q", w, s, prev)
		}
		prev = s
	}
	for _, w := range []lexicon.Word{0, lexicon.Word(lexicon.NumWords() + 1), 1 << 31} {
		if w.String() != "" || w.Parts() != 0 || lexicon.HasPOS(w, lexicon.Noun) {
			t.Errorf("invalid word %d has a lemma or senses", w)
		}
	}
}

func TestBaseForms(t *testing.T) {
	for _, c := range []struct {
		token string
		pos   lexicon.POS
		want  []string
	}{
		{"allergies", lexicon.Noun, []string{"allergy"}},
		{"children", lexicon.Noun, []string{"child"}},
		{"ate", lexicon.Verb, []string{"eat"}},
		{"mice", lexicon.Noun, []string{"mouse"}},
		{"went", lexicon.Verb, []string{"go"}},
		{"better", lexicon.Adj, []string{"better", "good", "well"}},
		{"glasses", lexicon.Noun, []string{"glasses", "glass"}},
		{"kids", lexicon.Noun, []string{"kid"}},
		{"Kids", lexicon.Noun, []string{"kid"}},
		{"eat", lexicon.Verb, []string{"eat"}},
		{"eating", lexicon.Verb, []string{"eat"}},
		{"axes", lexicon.Noun, []string{"ax", "axis"}},      // the exception list, not the rules (axe)
		{"archer", lexicon.Adj, nil},                        // adj.exc keeps "arch" off
		{"ice creams", lexicon.Noun, []string{"ice_cream"}}, // the rule on the last word
		{"boxesful", lexicon.Noun, []string{"boxful"}},      // morph.c's "ful"
		{"glass", lexicon.Noun, []string{"glass"}},          // "ss": no rules
		{"xyzzyq", lexicon.Noun, nil},
		{"xyzzyqs", lexicon.Noun, nil},
		{"quickly", lexicon.Adv, []string{"quickly"}},
		{"mice", lexicon.Verb, nil},
		{"ate", lexicon.Noun, []string{"ate"}}, // Ate, the goddess
		{"", lexicon.Noun, nil},
	} {
		if got := lemmas(lexicon.BaseForms(nil, c.token, c.pos)); !slices.Equal(got, c.want) {
			t.Errorf("BaseForms(%q, %s) = %q, want %q", c.token, c.pos, got, c.want)
		}
	}
	if _, ok := lexicon.Lookup("glasses"); !ok {
		t.Error("glasses is not a lemma")
	}
	// It appends, and does not look at what dst had.
	dst := lexicon.BaseForms(nil, "glasses", lexicon.Noun)
	dst = lexicon.BaseForms(dst, "glass", lexicon.Noun)
	if got := lemmas(dst); !slices.Equal(got, []string{"glasses", "glass", "glass"}) {
		t.Errorf("appending: %q", got)
	}
	if got := lexicon.BaseForms(nil, "dogs", 0); got != nil {
		t.Errorf("POS 0: %q", lemmas(got))
	}
}

// sense finds the sense of lemma as pos in the synset named.
func sense(t *testing.T, lemma string, pos lexicon.POS, name string) lexicon.Sense {
	t.Helper()
	w := word(t, lemma)
	for _, s := range lexicon.Senses(w, pos) {
		if s.Name() == name {
			return lexicon.Sense{Synset: s, Word: w}
		}
	}
	t.Fatalf("%s is not a sense of %s as %s", name, lemma, pos)
	return lexicon.Sense{}
}

func related(s lexicon.Sense, r lexicon.Relation) []string {
	var out []string
	for x := range s.Pointers(r) {
		out = append(out, x.Word.String()+"/"+x.Synset.Name())
	}
	return out
}

func TestDerivation(t *testing.T) {
	for _, c := range []struct {
		lemma string
		pos   lexicon.POS
		name  string
		want  string // one of the derivations
	}{
		{"allergic", lexicon.Adj, "allergic.a.01", "allergy/allergy.n.01"},
		{"allergy", lexicon.Noun, "allergy.n.01", "allergic/allergic.a.01"},
		{"eat", lexicon.Verb, "eat.v.01", "eater/eater.n.01"},
		{"eater", lexicon.Noun, "eater.n.01", "eat/eat.v.01"},
	} {
		got := related(sense(t, c.lemma, c.pos, c.name), lexicon.Derivation)
		if !slices.Contains(got, c.want) {
			t.Errorf("derivations of %s in %s: %q, want %s among them", c.lemma, c.name, got, c.want)
		}
	}
	if got := related(sense(t, "allergic", lexicon.Adj, "allergic.a.01"), lexicon.Pertainym); !slices.Equal(got, []string{"allergy/allergy.n.01"}) {
		t.Errorf("allergic pertains to %q", got)
	}
	if got := related(sense(t, "husband", lexicon.Noun, "husband.n.01"), lexicon.Antonym); !slices.Equal(got, []string{"wife/wife.n.01"}) {
		t.Errorf("antonyms of husband: %q", got)
	}
	// Lexical relations belong to senses: a word outside the synset has
	// none there, and the synset itself has no semantic derivation.
	if got := related(lexicon.Sense{Synset: synset(t, "eat.v.01"), Word: word(t, "dog")}, lexicon.Derivation); got != nil {
		t.Errorf("a pair that is no sense has derivations %q", got)
	}
	for range synset(t, "eat.v.01").Pointers(lexicon.Derivation) {
		t.Error("a synset has a semantic derivation pointer")
	}
}

func TestSynonyms(t *testing.T) {
	share := func(a, b string) lexicon.Synset {
		wa, wb := word(t, a), word(t, b)
		for _, s := range lexicon.Senses(wa, lexicon.Noun) {
			for x := range s.Members() {
				if x == wb {
					return s
				}
			}
		}
		return 0
	}
	for _, c := range [][2]string{{"spectacles", "glasses"}, {"kid", "child"}, {"glasses", "spectacles"}, {"child", "kid"}} {
		s := share(c[0], c[1])
		if s == 0 {
			t.Errorf("%s and %s share no synset", c[0], c[1])
			continue
		}
		t.Logf("%s and %s share %s", c[0], c[1], s.Name())
	}
	if s := share("kid", "glasses"); s != 0 {
		t.Errorf("kid and glasses share %s", s.Name())
	}
}

// up returns the shortest chain of hypernym and instance hypernym pointers
// from s to target (s first, target last), or nil.
func up(s, target lexicon.Synset) []lexicon.Synset {
	from := map[lexicon.Synset]lexicon.Synset{s: 0}
	level := []lexicon.Synset{s}
	for len(level) > 0 {
		if _, ok := from[target]; ok {
			break
		}
		var next []lexicon.Synset
		for _, x := range level {
			for _, r := range []lexicon.Relation{lexicon.Hypernym, lexicon.InstanceHypernym} {
				for h := range x.Pointers(r) {
					if _, seen := from[h]; !seen {
						from[h] = x
						next = append(next, h)
					}
				}
			}
		}
		level = next
	}
	if _, ok := from[target]; !ok {
		return nil
	}
	var path []lexicon.Synset
	for x := target; x != 0; x = from[x] {
		path = append(path, x)
	}
	slices.Reverse(path)
	return path
}

// hops finds the shortest chain up from a sense of w as a noun to target:
// the sense number (1-based; the first sense among equally short chains)
// and the path. It returns 0, nil when no sense reaches target.
func hops(w lexicon.Word, target lexicon.Synset) (int, []lexicon.Synset) {
	bestSense := 0
	var best []lexicon.Synset
	for i, s := range lexicon.Senses(w, lexicon.Noun) {
		if path := up(s, target); path != nil && (best == nil || len(path) < len(best)) {
			bestSense, best = i+1, path
		}
	}
	return bestSense, best
}

func TestCategories(t *testing.T) {
	for _, c := range []struct {
		lemma, target string
		sense, hops   int
	}{
		{"cello", "musical_instrument.n.01", 1, 3},
		{"portuguese", "language.n.01", 1, 6}, // 3.1: Romance is under Latin

		{"car", "vehicle.n.01", 2, 2},
		{"chess", "board_game.n.01", 2, 1},
		{"penicillin", "medication.n.01", 1, 3},
		{"collie", "dog.n.01", 1, 3},
		// 3.1: male_sibling is a kinsman, no longer a sibling; both are
		// relatives (see below).
		{"brother", "relative.n.01", 1, 3},
		{"sibling", "relative.n.01", 1, 1},
		{"husband", "spouse.n.01", 1, 1},
		{"marathon", "race.n.02", 2, 2}, // 3.1: race.n.01 is "any competition"
		{"cilantro", "herb.n.01", 1, 1},
	} {
		target := synset(t, c.target)
		n, path := hops(word(t, c.lemma), target)
		var names []string
		for _, s := range path {
			names = append(names, s.Name()+"("+strconv.Itoa(s.Depth())+")")
		}
		t.Logf("%s → %s: sense %d, %d hops: %s", c.lemma, c.target, n, len(path)-1, strings.Join(names, " → "))
		if n != c.sense || len(path)-1 != c.hops {
			t.Errorf("%s → %s: sense %d in %d hops, want sense %d in %d", c.lemma, c.target, n, len(path)-1, c.sense, c.hops)
		}
	}
	if path := up(synset(t, "car.n.01"), synset(t, "vehicle.n.01")); len(path) != 5 {
		t.Errorf("car.n.01 → vehicle.n.01: %v, want 4 hops", path)
	}
	if n, path := hops(word(t, "brother"), synset(t, "sibling.n.01")); n != 0 {
		t.Errorf("brother → sibling.n.01: sense %d, path %v; WordNet 3.1 has none", n, path)
	}
	// Instance hypernyms count: Portugal is an instance of a European
	// country, and has no hypernym.
	if n, path := hops(word(t, "portugal"), synset(t, "country.n.02")); n != 1 || len(path) != 3 {
		t.Errorf("portugal → country.n.02: sense %d, path %v", n, path)
	}
	p := synset(t, "portugal.n.01")
	for h := range p.Pointers(lexicon.Hypernym) {
		t.Errorf("portugal.n.01 has the hypernym %s", h)
	}
	var inst []lexicon.Synset
	for h := range p.Pointers(lexicon.InstanceHypernym) {
		inst = append(inst, h)
	}
	if len(inst) != 1 || inst[0].Name() != "european_country.n.01" {
		t.Errorf("portugal.n.01 is an instance of %v", inst)
	}
}
