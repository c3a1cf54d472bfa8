package relate

import (
	"testing"

	"github.com/memgate/memgate/analysis"
)

// TestRelatedWordsCarryTheirHash: every word Related and Bigram return
// carries analysis.TermHash of its term, made when it was found (a
// caller's filter test must not read the term again), on words of every
// relation and on the cached lists; the control: a hash set to another
// term's is what TermHash returns, so the test reads the field.
func TestRelatedWordsCarryTheirHash(t *testing.T) {
	r := New(Options{})
	relations := map[Relation]int{}
	for range 2 { // found, then cached
		for _, ws := range [][]Word{r.Related("cello"), r.Related("vegetarian"), r.Related("husband"), r.Related("ran"), r.Bigram("ice", "cream")} {
			if len(ws) == 0 {
				t.Fatal("no related words: the test needs some")
			}
			for _, w := range ws {
				if w.hash != analysis.TermHash(w.Term) {
					t.Fatalf("%s (%s): hash %x, want %x", w.Term, w.Relation, w.hash, analysis.TermHash(w.Term))
				}
				if w.TermHash() != w.hash {
					t.Fatalf("%s: TermHash %x, field %x", w.Term, w.TermHash(), w.hash)
				}
				relations[w.Relation]++
			}
		}
	}
	if len(relations) < 4 {
		t.Fatalf("relations seen: %v; the test needs more kinds", relations)
	}
	w := Word{Term: "a", hash: analysis.TermHash("b")}
	if w.TermHash() != analysis.TermHash("b") {
		t.Fatal("TermHash does not return the field")
	}
	if (&Word{Term: "a"}).TermHash() != analysis.TermHash("a") {
		t.Fatal("TermHash of a word without its hash is not the term's")
	}
}
