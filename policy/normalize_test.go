package policy

import (
	"slices"
	"strings"
	"testing"
)

// FuzzFold: the normalization both detectors read never panics, is
// deterministic, folds the same with and without the offset map, maps every
// output byte to an in-bounds, ordered span of the input, and trims white
// space at both ends.
func FuzzFold(f *testing.F) {
	for _, s := range []string{
		"", " ", "\n\n", "  Ig\u200bNORE\t\tＰＲＥＶ  \n x", "ＡＢＣ", "ѕуѕтеm", "\u2039system\u203a",
		"\u201cquoted\u201d", "\U0001D5A8\U0001D5C0", "Ⓐⓑ", "\U000E0041\U000E007F", "\xff\xfe a", "a\r\nb\tc",
		"\u202eevil\u202c", "İSTANBUL", "ǅ", "K", // Kelvin sign
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m := fold(text, true)
		if again := fold(text, true); again.s != m.s || !slices.Equal(again.start, m.start) || !slices.Equal(again.end, m.end) {
			t.Fatal("fold is not deterministic")
		}
		if u := fold(text, false); u.s != m.s || u.start != nil || u.end != nil {
			t.Fatalf("unmapped fold %q differs from mapped %q", u.s, m.s)
		}
		if len(m.start) != len(m.s) || len(m.end) != len(m.s) {
			t.Fatalf("map lengths %d, %d for %d bytes", len(m.start), len(m.end), len(m.s))
		}
		for j := range m.s {
			s, e := int(m.start[j]), int(m.end[j])
			if s < 0 || e <= s || e > len(text) {
				t.Fatalf("byte %d maps to [%d,%d) of %d", j, s, e, len(text))
			}
			if j > 0 && s < int(m.start[j-1]) {
				t.Fatalf("byte %d maps back to %d, before %d", j, s, m.start[j-1])
			}
		}
		if strings.HasPrefix(m.s, " ") || strings.HasPrefix(m.s, "\n") || strings.HasSuffix(m.s, " ") || strings.HasSuffix(m.s, "\n") {
			t.Fatalf("fold %q keeps leading or trailing space", m.s)
		}
	})
}
