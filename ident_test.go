package memgate

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestIdentAndTokenAreTheirPatterns: ValidIdent and checkToken, byte
// loops, accept exactly what their documented patterns match: every
// single byte, every length around the bounds, and random strings of the
// allowed bytes with one foreign byte or rune put in at random. Each side
// has accepted and refused cases (the control).
func TestIdentAndTokenAreTheirPatterns(t *testing.T) {
	identRE := regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,128}$`)
	tokenRE := regexp.MustCompile(`^` + tokenBytes + `{1,160}$`)
	var cases []string
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, n := range []int{0, 1, 127, 128, 129, 159, 160, 161} {
		cases = append(cases, strings.Repeat("x", n), strings.Repeat("#", n))
	}
	r := rand.New(rand.NewPCG(1, 2))
	const allowed = "abcXYZ059._:@-#/+="
	for range 5000 {
		b := make([]byte, 1+r.IntN(140))
		for i := range b {
			b[i] = allowed[r.IntN(len(allowed))]
		}
		s := string(b)
		if r.IntN(2) == 0 {
			i := r.IntN(len(s) + 1)
			s = s[:i] + []string{" ", "é", "\x00", "\n", "%", "ü", "\xff", "~"}[r.IntN(8)] + s[i:]
		}
		cases = append(cases, s)
	}
	var identOK, identNo, tokenOK, tokenNo int
	for _, s := range cases {
		if got, want := ValidIdent(s), identRE.MatchString(s); got != want {
			t.Fatalf("ValidIdent(%q) = %v, the pattern says %v", s, got, want)
		} else if got {
			identOK++
		} else {
			identNo++
		}
		if got, want := checkToken("key", s, MaxIdempotencyKeyBytes) == nil, tokenRE.MatchString(s); got != want {
			t.Fatalf("checkToken(%q) accepts: %v, the pattern says %v", s, got, want)
		} else if got {
			tokenOK++
		} else {
			tokenNo++
		}
	}
	if identOK < 100 || identNo < 100 || tokenOK < 100 || tokenNo < 100 {
		t.Fatalf("too few cases on a side: ident %d accepted, %d refused; token %d, %d", identOK, identNo, tokenOK, tokenNo)
	}
}

func BenchmarkValidIdent(b *testing.B) {
	for b.Loop() {
		ValidIdent("m_01m97qsresf7n1htt8d1jpdv7k")
	}
}
