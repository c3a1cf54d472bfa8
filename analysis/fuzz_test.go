package analysis

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAnalysis checks the invariants of the pipeline on any input, including
// invalid UTF-8: no panic, tokens are valid, bounded and space-free, Fold is
// Tokens joined, Terms are the stems of the kept tokens, and every function
// is deterministic.
func FuzzAnalysis(f *testing.F) {
	for _, s := range []string{
		"", " ", "Caroline's café", "don't we'd I'm", "東京都に行きました", "ΣΟΦΙΑ",
		"ab\xffcd\xc3", "e\u0301\u0301", "'s", "x's's", "''", "ＦＵＬＬ ﬃ",
		strings.Repeat("é", 40), strings.Repeat("a'", 50), "Straße ǅ ĳ",
		"painting generously communication skies dying",
		"\u0301abc", "猫'猫", "a\u0300'\u0300s", "ing eed ied sses",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		for _, tok := range toks {
			if tok == "" || len(tok) > MaxTokenBytes+utf8.UTFMax || !utf8.ValidString(tok) || strings.ContainsAny(tok, " \t\n") {
				t.Fatalf("bad token %q", tok)
			}
		}
		if got, want := Fold(s), strings.Join(toks, " "); got != want {
			t.Fatalf("Fold = %q, Tokens joined = %q", got, want)
		}
		terms := Terms(s)
		var want []string
		for _, tok := range toks {
			if keepTerm([]byte(tok)) {
				want = append(want, Stem(tok))
			}
		}
		if !reflect.DeepEqual(terms, want) {
			t.Fatalf("Terms = %q, stems of kept tokens = %q", terms, want)
		}
		words := AppendWords(nil, s)
		if len(words) != len(terms) {
			t.Fatalf("%d words for %d terms", len(words), len(terms))
		}
		for i, w := range words {
			if w.Term != terms[i] {
				t.Fatalf("word %d term %q, Terms has %q", i, w.Term, terms[i])
			}
		}
		// FoldWithout drops exactly the terms it is told to, and nothing
		// else: here every other distinct term.
		dropped := map[string]bool{}
		for i, tm := range terms {
			if i%2 == 0 {
				dropped[tm] = true
			}
		}
		var rest []string
		for _, tm := range terms {
			if !dropped[tm] {
				rest = append(rest, tm)
			}
		}
		if got := Terms(FoldWithout(s, func(tm string) bool { return dropped[tm] })); !reflect.DeepEqual(got, rest) {
			t.Fatalf("Terms(FoldWithout) = %q, want %q", got, rest)
		}
		if got := FoldWithout(s, func(string) bool { return false }); got != Fold(s) {
			t.Fatalf("FoldWithout dropping nothing = %q, Fold = %q", got, Fold(s))
		}
		if again := Terms(s); !reflect.DeepEqual(again, terms) {
			t.Fatalf("Terms not deterministic: %q then %q", terms, again)
		}
	})
}
