package zipfcorpus

import (
	"slices"
	"strings"
	"testing"
)

// TestDeterministic: the same arguments give the same corpus and queries
// (the benchmarks compare runs on it), another seed another corpus, and
// every query is the start of a stored text.
func TestDeterministic(t *testing.T) {
	a, b := Texts(500, 1), Texts(500, 1)
	if !slices.Equal(a, b) {
		t.Fatal("Texts(500, 1) differs between calls")
	}
	if slices.Equal(a, Texts(500, 2)) {
		t.Fatal("seeds 1 and 2 give the same texts")
	}
	for _, s := range a {
		if n := len(strings.Fields(s)); n < 8 || n > 37 {
			t.Fatalf("a text of %d words: %q", n, s)
		}
	}
	qs := Queries(a, 50)
	if !slices.Equal(qs, Queries(b, 50)) {
		t.Fatal("Queries differs between calls")
	}
	for _, q := range qs {
		if len(strings.Fields(q)) != 6 || !slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, q+" ") }) {
			t.Fatalf("query %q is not the first six words of a stored text", q)
		}
	}
}
