package lexicon_test

import (
	"testing"

	"github.com/memgate/memgate/lexicon"
)

// What the generator said about the data (and an independent count of the
// source files agrees, less 14 lexical pointers that repeat another once a
// lemma listed in two cases is one member).
var golden = struct {
	words, senses, tagged     int
	noun, verb, adj, sat, adv int
	semantic, lexical         [16]int
	size                      int // of wordnet.bin
	definitions               int // (synset, definition word) pairs
	defined                   int // words in a definition
	over100, over1000         int // words in more than 100, 1000 definitions
	inflections               int // (word, POS, form) triples
}{
	size: 10609337, definitions: 769736, defined: 47486, over100: 1450, over1000: 47, inflections: 4591,
	words: 147478, senses: 207235, tagged: 35390,
	noun: 82192, verb: 13789, adj: 7468 + 10717, sat: 10717, adv: 3625,
	//          @      @i    ~      ~i    #m     #p    #s   %m     %p    %s   &      ^     !     +      \     <
	semantic: [16]int{89172, 8589, 89172, 8589, 12288, 9111, 797, 12288, 9111, 797, 21434, 2697, 0, 0, 0, 0},
	lexical:  [16]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 579, 7983, 74667, 8073, 73},
}

func TestGolden(t *testing.T) {
	if n := len(lexicon.Data); n != golden.size {
		t.Errorf("wordnet.bin has %d bytes, want %d", n, golden.size)
	}
	if n := lexicon.NumWords(); n != golden.words {
		t.Errorf("%d words, want %d", n, golden.words)
	}
	var perPOS [5]int
	var sem, lex [16]int
	sat, senses, tagged := 0, 0, 0
	for s := lexicon.Synset(1); int(s) <= lexicon.NumSynsets(); s++ {
		perPOS[s.POS()]++
		if s.Satellite() {
			sat++
			if s.POS() != lexicon.Adj {
				t.Fatalf("%s is a satellite and not an adjective", s)
			}
		}
		for r := lexicon.Relation(0); r < 16; r++ {
			for range s.Pointers(r) {
				sem[r]++
			}
			for w := range s.Members() {
				for range (lexicon.Sense{Synset: s, Word: w}).Pointers(r) {
					lex[r]++
				}
			}
		}
		for w := range s.Members() {
			senses++
			if lexicon.TagCount(lexicon.Sense{Synset: s, Word: w}) > 0 {
				tagged++
			}
		}
	}
	want := [5]int{0, golden.noun, golden.verb, golden.adj, golden.adv}
	if perPOS != want || sat != golden.sat {
		t.Errorf("synsets per POS %v, %d satellites; want %v, %d", perPOS, sat, want, golden.sat)
	}
	if sem != golden.semantic || lex != golden.lexical {
		t.Errorf("pointers:\nsemantic %v\nlexical  %v\nwant\nsemantic %v\nlexical  %v", sem, lex, golden.semantic, golden.lexical)
	}
	if senses != golden.senses || tagged != golden.tagged {
		t.Errorf("%d senses, %d tagged; want %d, %d", senses, tagged, golden.senses, golden.tagged)
	}
	// Every sense of a word is a synset that has the word, and back.
	n := 0
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		for _, pos := range []lexicon.POS{lexicon.Noun, lexicon.Verb, lexicon.Adj, lexicon.Adv} {
			for _, s := range lexicon.Senses(w, pos) {
				n++
				if s.POS() != pos {
					t.Fatalf("%s as %s has the sense %s", w, pos, s)
				}
				found := false
				for m := range s.Members() {
					found = found || m == w
				}
				if !found {
					t.Fatalf("%s as %s has the sense %s, which lacks it", w, pos, s)
				}
			}
		}
	}
	if n != golden.senses {
		t.Errorf("the words have %d senses, the synsets %d", n, golden.senses)
	}
}

// The inverse relations are each other's inverse, depth is the shortest
// way up, and descendants the size of the closure below.
func TestStructure(t *testing.T) {
	inverse := map[lexicon.Relation]lexicon.Relation{
		lexicon.Hypernym: lexicon.Hyponym, lexicon.InstanceHypernym: lexicon.InstanceHyponym,
		lexicon.MemberHolonym: lexicon.MemberMeronym, lexicon.PartHolonym: lexicon.PartMeronym,
		lexicon.SubstanceHolonym: lexicon.SubstanceMeronym,
	}
	has := func(s lexicon.Synset, r lexicon.Relation, x lexicon.Synset) bool {
		for y := range s.Pointers(r) {
			if y == x {
				return true
			}
		}
		return false
	}
	for s := lexicon.Synset(1); int(s) <= lexicon.NumSynsets(); s++ {
		for r, inv := range inverse {
			for x := range s.Pointers(r) {
				if !has(x, inv, s) {
					t.Fatalf("%s %s %s, but not back", s, r, x)
				}
			}
			for x := range s.Pointers(inv) {
				if !has(x, r, s) {
					t.Fatalf("%s %s %s, but not back", s, inv, x)
				}
			}
		}
		min := -1
		for _, r := range []lexicon.Relation{lexicon.Hypernym, lexicon.InstanceHypernym} {
			for h := range s.Pointers(r) {
				if d := h.Depth() + 1; min < 0 || d < min {
					min = d
				}
			}
		}
		if min < 0 {
			min = 0
		}
		if s.Depth() != min {
			t.Fatalf("%s has depth %d, its hypernyms say %d", s, s.Depth(), min)
		}
	}
	for _, name := range []string{"musical_instrument.n.01", "dog.n.01", "entity.n.01", "cello.n.01", "travel.v.01"} {
		s := synset(t, name)
		seen := map[lexicon.Synset]bool{s: true}
		queue := []lexicon.Synset{s}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, r := range []lexicon.Relation{lexicon.Hyponym, lexicon.InstanceHyponym} {
				for c := range x.Pointers(r) {
					if !seen[c] {
						seen[c] = true
						queue = append(queue, c)
					}
				}
			}
		}
		if s.Descendants() != len(seen)-1 {
			t.Errorf("%s has %d descendants, its closure %d", name, s.Descendants(), len(seen)-1)
		}
	}
	for _, s := range []lexicon.Synset{0, lexicon.Synset(lexicon.NumSynsets() + 1), 1 << 31} {
		if s.POS() != 0 || s.Name() != "" || s.Depth() != 0 || s.Descendants() != 0 || s.Satellite() {
			t.Errorf("invalid synset %d has data", s)
		}
		for range s.Members() {
			t.Errorf("invalid synset %d has members", s)
		}
		for range s.Pointers(lexicon.Hyponym) {
			t.Errorf("invalid synset %d has pointers", s)
		}
	}
	for range synset(t, "dog.n.01").Pointers(200) {
		t.Error("relation 200 has pointers")
	}
}

// The numbers the package comment reports.
func TestReport(t *testing.T) {
	var over500, over2000, over10000, nouns int
	for s := lexicon.Synset(1); int(s) <= lexicon.NumSynsets(); s++ {
		if s.POS() != lexicon.Noun {
			continue
		}
		nouns++
		d := s.Descendants()
		if d > 500 {
			over500++
		}
		if d > 2000 {
			over2000++
		}
		if d > 10000 {
			over10000++
		}
	}
	t.Logf("noun synsets %d: descendants > 500: %d, > 2000: %d, > 10000: %d", nouns, over500, over2000, over10000)
	if over500 != 142 || over2000 != 41 || over10000 != 11 {
		t.Errorf("noun synsets with more than 500, 2000, 10000 descendants: %d, %d, %d; want 142, 41, 11", over500, over2000, over10000)
	}
	for _, c := range []struct {
		name, is           string // is: the synset's own name
		depth, descendants int
	}{
		{"entity.n.01", "entity.n.01", 0, 82191},
		{"musical_instrument.n.01", "musical_instrument.n.01", 7, 168},
		{"language.n.01", "language.n.01", 3, 763},
		{"vehicle.n.01", "vehicle.n.01", 7, 527},
		{"food.n.01", "food.n.01", 4, 1526},
		{"food.n.02", "food.n.02", 4, 1122},
		{"animal.n.01", "animal.n.01", 6, 4016},
		{"dog.n.01", "dog.n.01", 8, 189},
		{"person.n.01", "person.n.01", 3, 10286},
		{"drug.n.01", "drug.n.01", 4, 914},
		{"medicine.n.02", "medicine.n.02", 5, 512},
		{"game.n.01", "game.n.01", 6, 192},
		{"board_game.n.01", "board_game.n.01", 8, 18},
		{"sibling.n.01", "sibling.n.01", 5, 8},
		{"spouse.n.01", "spouse.n.01", 5, 46},
		{"herb.n.01", "herb.n.01", 8, 1041},
		{"herb.n.02", "herb.n.02", 8, 40},
		{"sport.n.01", "sport.n.01", 7, 175},
		{"beverage.n.01", "beverage.n.01", 5, 339},
		{"pet.n.01", "pet.n.01", 7, 0}, // a dog is a domestic animal, not a pet
		{"job.n.01", "occupation.n.01", 6, 272},
		{"occupation.n.01", "occupation.n.01", 6, 272},
		{"city.n.01", "city.n.01", 8, 918},
		{"country.n.01", "state.n.04", 7, 16}, // the body politic
		{"country.n.02", "country.n.02", 7, 229},
	} {
		s := synset(t, c.name)
		t.Logf("%-24s %-24s depth %2d descendants %6d", c.name, s.Name(), s.Depth(), s.Descendants())
		if s.Name() != c.is || s.Depth() != c.depth || s.Descendants() != c.descendants {
			t.Errorf("%s is %s at depth %d with %d descendants; want %s, %d, %d", c.name, s.Name(), s.Depth(), s.Descendants(), c.is, c.depth, c.descendants)
		}
	}
}
