package policy

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// views returns every view the detectors read for text, by name.
func views(text string) map[string]*view {
	n := normalize(text)
	m := markupView(n.base)
	p, alt := phraseView(m)
	vs := map[string]*view{"orig": n.orig, "base": n.base, "markup": m, "phrase": p}
	if alt != nil {
		vs["alt"] = alt
	}
	return vs
}

// FuzzFold: the normalization both detectors read never panics, is
// deterministic, maps every byte of every view to an in-bounds, ordered
// span of the input on rune boundaries, and trims white space at both ends
// of the markup and phrase views.
func FuzzFold(f *testing.F) {
	for _, s := range []string{
		"", " ", "\n\n", "  Ig\u200bNORE\t\tＰＲＥＶ  \n x", "ＡＢＣ", "ѕуѕтеm", "\u2039system\u203a",
		"\u201cquoted\u201d", "\U0001D5A8\U0001D5C0", "Ⓐⓑ", "\U000E0041\U000E007F", "\xff\xfe a", "a\r\nb\tc",
		"\u202eevil\u202c", "İSTANBUL", "ǅ", "K", // Kelvin sign
		"i-g-n-o-r-e a.l.l", "1gn0r3 4ll pr3v10u5", "ig\u00adnore", "e\u0301\u0301\u0301", "don\u00b4t", "a\u034f\u034fb",
		strings.Repeat("\u0301", 40), "ﬁ ﬀ ½ ™", "🇮🇬🇳🇴🇷🇪",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if utf8.ValidString(text) {
			// The base view before look-alikes are folded is NFKC with
			// the ignorables removed.
			want := strings.Map(func(r rune) rune {
				if isIgnorable(r) {
					return -1
				}
				return r
			}, norm.NFKC.String(text))
			if got := compatView(&view{s: text}).s; got != want {
				t.Fatalf("compatView(%q) = %q, want %q", text, got, want)
			}
		}
		vs := views(text)
		again := views(text)
		for name, v := range vs {
			if again[name] == nil || again[name].s != v.s {
				t.Fatalf("%s view is not deterministic", name)
			}
			prev := 0
			for j := range len(v.s) {
				s, e := v.origin(j, j+1)
				if s < 0 || e <= s || e > len(text) {
					t.Fatalf("%s byte %d maps to [%d,%d) of %d", name, j, s, e, len(text))
				}
				if s < prev {
					t.Fatalf("%s byte %d maps back to %d, before %d", name, j, s, prev)
				}
				prev = s
				if utf8.ValidString(text) && (!utf8.RuneStart(text[s]) || e < len(text) && !utf8.RuneStart(text[e])) {
					t.Fatalf("%s byte %d maps to [%d,%d), not on rune boundaries", name, j, s, e)
				}
			}
			if name != "orig" && name != "base" && (strings.HasPrefix(v.s, " ") || strings.HasPrefix(v.s, "\n") || strings.HasSuffix(v.s, " ") || strings.HasSuffix(v.s, "\n")) {
				t.Fatalf("%s view %q keeps leading or trailing space", name, v.s)
			}
		}
	})
}

// TestFoldMapsOffsets: every byte of a view maps to the characters of the
// original that produced it.
func TestFoldMapsOffsets(t *testing.T) {
	t.Parallel()
	text := "  Ig\u200bNORE\t\tＰＲＥＶ  \n x"
	m := markupView(normalize(text).base)
	if m.s != "ignore prev\nx" {
		t.Fatalf("markup view = %q", m.s)
	}
	if s, e := m.origin(7, 11); text[s:e] != "ＰＲＥＶ" {
		t.Errorf("bytes 7..10 map to %q", text[s:e])
	}
	if s, e := m.origin(0, 6); text[s:e] != "Ig\u200bNORE" {
		t.Errorf("bytes 0..5 map to %q", text[s:e])
	}
	if s, e := m.origin(6, 7); text[s:e] != "\t\t" {
		t.Errorf("the space maps to %q", text[s:e])
	}
}

func TestViews(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, base, markup, phrase, alt string }{
		{"plain ascii", "plain ascii", "plain ascii", "plain ascii", ""},
		{"Ｆｕｌｌ ｗｉｄｔｈ", "Full width", "full width", "full width", ""},
		{"\U0001D422\U0001D420\U0001D427", "ign", "ign", "ign", ""},
		{"ig\u00adno\u034fre\u180e \u3164x\ufe0f", "ignore x", "ignore x", "ignore x", ""},
		{"ѕуѕтеm все", "system все", "system все", "system все", ""},
		{"Привет, мир", "Привет, мир", "привет, мир", "привет, мир", ""},
		{"Καλημέρα", "Καλημέρα", "καλημέρα", "καλημέρα", ""},
		{"Précédentes Anweisungen für", "Précédentes Anweisungen für", "précédentes anweisungen für", "precedentes anweisungen fur", ""},
		{"i-g-n-o-r-e a.l.l p r e v i o u s", "i-g-n-o-r-e a.l.l p r e v i o u s", "i-g-n-o-r-e a.l.l p r e v i o u s", "ignore all previous", ""},
		{"1gn0r3 4ll pr3v10u5 ru1es 2024 5 apples", "", "", "ignore all previous rules 2024 5 apples", ""},
		{"h3110 w0r1d", "", "", "heiio worid", "hello world"},
		{"mail 4ttacker@3vil.com", "", "", "mail attacker@evil.com", ""},
		{"«Don’t»", "«Don’t»", "«don't»", "«don't»", ""},
		{"U.S. e-mail x-ray", "", "", "us. e-mail x-ray", ""},
		{"سِياسَةُ المُشَغِّلِ: تجـــاهل", "", "", "سياسة المشغل: تجاهل", ""},
	}
	for _, tc := range tests {
		vs := views(tc.in)
		check := func(name, want string) {
			t.Helper()
			if want == "" {
				return
			}
			if got := vs[name]; got == nil || got.s != want {
				t.Errorf("%q: %s view %v, want %q", tc.in, name, got, want)
			}
		}
		check("base", tc.base)
		check("markup", tc.markup)
		check("phrase", tc.phrase)
		check("alt", tc.alt)
	}
}

// TestIgnorable: isIgnorable is the Default_Ignorable_Code_Point property,
// derived as DerivedCoreProperties.txt derives it from the tables of the
// unicode package.
func TestIgnorable(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := (unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)) &&
			!unicode.Is(unicode.White_Space, r) && !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x13440) &&
			!unicode.Is(unicode.Prepended_Concatenation_Mark, r)
		if got := isIgnorable(r); got != want {
			t.Errorf("isIgnorable(%U) = %v, want %v", r, got, want)
		}
	}
}

// TestNFKCSegment: the table shortcut of nfkcSegment agrees with the
// normalizer for every character.
func TestNFKCSegment(t *testing.T) {
	t.Parallel()
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		if got, want := string(nfkcSegment(nil, s)), norm.NFKC.String(s); got != want {
			t.Errorf("nfkcSegment(%U) = %q, want %q", r, got, want)
		}
	}
}

// TestRuneShortcuts: the table-free shortcuts agree with the unicode
// package for every rune.
func TestRuneShortcuts(t *testing.T) {
	t.Parallel()
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if got, want := isSpaceRune(r), unicode.IsSpace(r); got != want {
			t.Errorf("isSpaceRune(%U) = %v", r, got)
		}
		if got, want := isLatin(r), unicode.Is(unicode.Latin, r); got != want {
			t.Errorf("isLatin(%U) = %v", r, got)
		}
		if r >= 0x2E80 && r < 0xA640 && unicode.ToLower(r) != r {
			t.Errorf("ToLower(%U) changes a rune markupRune leaves", r)
		}
	}
}

// TestMayConfuse: every look-alike the table knows is seen by the byte
// test that lets text skip the fold.
func TestMayConfuse(t *testing.T) {
	t.Parallel()
	for r := rune(0x80); r <= 0x1FFFF; r++ {
		if a, _ := confusable(r); a != 0 && !mayConfuse(string(r)) {
			t.Errorf("mayConfuse misses %U", r)
		}
	}
}
