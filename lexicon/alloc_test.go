package lexicon_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memgate/memgate/lexicon"
)

// The embedded file is wordnet.bin, the one scripts/gen-wordnet made and
// checked against wordnet.sha256.
func TestEmbeddedFile(t *testing.T) {
	want, err := os.ReadFile("wordnet.sha256")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("wordnet.bin")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != lexicon.Data {
		t.Fatal("the embedded data is not wordnet.bin")
	}
	sum := sha256.Sum256([]byte(lexicon.Data))
	if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(want)) {
		t.Fatalf("wordnet.bin has sha256 %s, wordnet.sha256 says %s", got, want)
	}
}

var sink int

// The hot paths allocate nothing.
func TestZeroAllocations(t *testing.T) {
	dog := word(t, "dog")
	mi := synset(t, "musical_instrument.n.01")
	eat := lexicon.Sense{Synset: synset(t, "eat.v.01"), Word: word(t, "eat")}
	veg, meat, eatW := synset(t, "vegetarian.n.01"), word(t, "meat"), word(t, "eat")
	dst := make([]lexicon.Word, 0, 16)
	for name, f := range map[string]func(){
		"Lookup":       func() { w, _ := lexicon.Lookup("Musical Instrument"); sink += int(w) },
		"Lookup miss":  func() { w, _ := lexicon.Lookup("xyzzyq"); sink += int(w) },
		"String":       func() { sink += len(dog.String()) + dog.Parts() },
		"BaseForms":    func() { sink += len(lexicon.BaseForms(dst[:0], "Allergies", lexicon.Noun)) },
		"BaseForms ex": func() { sink += len(lexicon.BaseForms(dst[:0], "better", lexicon.Adj)) },
		"BaseForms v":  func() { sink += len(lexicon.BaseForms(dst[:0], "eating", lexicon.Verb)) },
		"Senses": func() {
			for i, s := range lexicon.Senses(dog, lexicon.Noun) {
				sink += i + int(s)
			}
		},
		"TagCount": func() { sink += lexicon.TagCount(eat) },
		"Members": func() {
			for w := range mi.Members() {
				sink += int(w)
			}
		},
		"Synset.Pointers": func() {
			for s := range mi.Pointers(lexicon.Hyponym) {
				for h := range s.Pointers(lexicon.Hypernym) {
					sink += int(h) + h.Depth() + h.Descendants()
				}
			}
		},
		"Sense.Pointers": func() {
			for x := range eat.Pointers(lexicon.Derivation) {
				sink += int(x.Word)
			}
		},
		"Definition": func() {
			for w := range veg.Definition() {
				sink += int(w)
			}
		},
		"DefinedBy": func() {
			for s := range lexicon.DefinedBy(meat) {
				sink += int(s)
			}
			sink += lexicon.DefinedByCount(meat)
		},
		"Inflections": func() {
			for f := range lexicon.Inflections(eatW, lexicon.Verb) {
				sink += len(f)
			}
		},
		"HasPOS": func() {
			if lexicon.HasPOS(dog, lexicon.Verb) {
				sink++
			}
		},
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %.1f allocations", name, n)
		}
	}
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"dog", "ice cream", "Ice_Cream", "", " ", "_", "'hood", ".22", "caf\u00e9", "\xff\xfe", strings.Repeat("a", 255), strings.Repeat("a", 256), "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := lexicon.Lookup(s)
		if ok != (w != 0) {
			t.Fatalf("Lookup(%q) = %d, %v", s, w, ok)
		}
		if !ok {
			return
		}
		if got, want := w.String(), strings.ToLower(strings.ReplaceAll(s, " ", "_")); got != want && utf8.ValidString(s) {
			t.Fatalf("Lookup(%q) = %q", s, got)
		}
		if w.Parts() < 1 {
			t.Fatalf("%q has %d parts", w, w.Parts())
		}
	})
}

func FuzzBaseForms(f *testing.F) {
	for _, s := range []string{"allergies", "children", "ate", "went", "better", "glasses", "boxesful", "ful", "ss", "s", "es", "ies", "ing", "ed", "est", "ice creams", "", "\xff", strings.Repeat("s", 255), strings.Repeat("ful", 90)} {
		for pos := range 6 {
			f.Add(s, uint8(pos))
		}
	}
	f.Fuzz(func(t *testing.T, s string, p uint8) {
		pos := lexicon.POS(p)
		got := lexicon.BaseForms(nil, s, pos)
		for i, w := range got {
			if !lexicon.HasPOS(w, pos) {
				t.Fatalf("BaseForms(%q, %d) has %q, no lemma of the POS", s, p, w)
			}
			for _, x := range got[:i] {
				if x == w {
					t.Fatalf("BaseForms(%q, %d) has %q twice", s, p, w)
				}
			}
		}
		if w, ok := lexicon.Lookup(s); ok && lexicon.HasPOS(w, pos) && (len(got) == 0 || got[0] != w) {
			t.Fatalf("BaseForms(%q, %d) = %v does not start with the token", s, p, got)
		}
	})
}
