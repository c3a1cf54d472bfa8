package analysis

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation only", " ...!? — ", nil},
		{"lowercase and split", "Hello, World! foo_bar 3.5", []string{"hello", "world", "foo", "bar", "3", "5"}},
		{"diacritics", "Café NAÏVE Straße Ångström łódź", []string{"cafe", "naive", "strasse", "angstrom", "lodz"}},
		{"decomposed diacritics", "Cafe\u0301 e\u0300", []string{"cafe", "e"}},
		{"fullwidth and ligatures", "ＦＵＬＬ ｗｉｄｔｈ ﬁne ﬂow", []string{"full", "width", "fine", "flow"}},
		{"possessive", "Caroline's Jon’s cats'", []string{"caroline", "jon", "cats"}},
		{"clitics", "I'm we'd she'll you're I've", []string{"i", "we", "she", "you", "i"}},
		{"other apostrophes", "don't O'Brien rock'n'roll 'quoted'", []string{"dont", "obrien", "rocknroll", "quoted"}},
		{"not a clitic", "it'sy ma'am", []string{"itsy", "maam"}},
		{"greek and cyrillic", "ΣΟΦΙΑ Москва", []string{"σοφια", "москва"}},
		{"han bigrams", "東京都に行きました", []string{"東京", "京都", "都に", "に行", "行き", "きま", "まし", "した"}},
		{"single han", "猫 and 犬", []string{"猫", "and", "犬"}},
		{"han next to latin", "abc東京def", []string{"abc", "東京", "def"}},
		{"invalid utf-8 separates", "ab\xffcd\xc3", []string{"ab", "cd"}},
		{"digits and letters", "3pm 2023-05-08", []string{"3pm", "2023", "05", "08"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Tokens(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTokenLengthBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 200) + " " + strings.Repeat("é", 100) + " " + strings.Repeat("ж", 100)
	toks := Tokens(long)
	if len(toks) != 3 {
		t.Fatalf("got %d tokens, want 3", len(toks))
	}
	for _, tok := range toks {
		if len(tok) > MaxTokenBytes || !utf8.ValidString(tok) {
			t.Errorf("token of %d bytes (valid %v), limit %d", len(tok), utf8.ValidString(tok), MaxTokenBytes)
		}
	}
	if toks[0] != strings.Repeat("a", MaxTokenBytes) {
		t.Errorf("long ASCII token not cut at %d bytes: %q", MaxTokenBytes, toks[0])
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	got := Terms("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.")
	want := []string{"carolin", "went", "lgbtq", "support", "group", "yesterday", "power"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	// Morphology meets on one term; stopwords and single letters vanish.
	if a, b := Terms("painting paintings painted"), []string{"paint", "paint", "paint"}; !reflect.DeepEqual(a, b) {
		t.Errorf("Terms(painting...) = %q", a)
	}
	if got := Terms("what did you do, I wonder? a b c"); !reflect.DeepEqual(got, []string{"wonder"}) {
		t.Errorf("Terms = %q, want [wonder]", got)
	}
	if got := Terms("the of and"); got != nil {
		t.Errorf("stopwords only: got %q, want nil", got)
	}
}

func TestAppendWordsMatchesTerms(t *testing.T) {
	t.Parallel()
	text := "The adoption agencies I researched — Caroline's favourite: 東京 cafés!"
	words := AppendWords(nil, text)
	terms := Terms(text)
	if len(words) != len(terms) {
		t.Fatalf("%d words, %d terms", len(words), len(terms))
	}
	for i, w := range words {
		if w.Term != terms[i] || w.Term != Stem(w.Token) {
			t.Errorf("word %d = %+v, term %q, Stem(token) %q", i, w, terms[i], Stem(w.Token))
		}
	}
	if words[0].Token != "adoption" || words[0].Term != "adopt" {
		t.Errorf("first word = %+v", words[0])
	}
}

func TestFold(t *testing.T) {
	t.Parallel()
	if got := Fold("  Héllo,   WORLD!! it's "); got != "hello world it" {
		t.Errorf("Fold = %q", got)
	}
	if got := Fold("?!"); got != "" {
		t.Errorf("Fold of punctuation = %q", got)
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	// Expected values are the Porter2 reference outputs.
	cases := map[string]string{
		"consign": "consign", "consigned": "consign", "consigning": "consign", "consignment": "consign",
		"generously": "generous", "generate": "generat", "generation": "generat", "communication": "communic",
		"caresses": "caress", "ponies": "poni", "ties": "tie", "cats": "cat", "gas": "gas", "gaps": "gap",
		"kiwis": "kiwi", "hopping": "hop", "hoping": "hope", "luxuriating": "luxuri", "agreed": "agre",
		"feed": "feed", "running": "run", "cried": "cri", "cries": "cri", "dying": "die", "skies": "sky",
		"news": "news", "adoption": "adopt", "relational": "relat", "conditional": "condit",
		"rational": "ration", "valency": "valenc", "digitizer": "digit", "conformably": "conform",
		"electricity": "electr", "hopeful": "hope", "goodness": "good", "activate": "activ",
		"adjustable": "adjust", "controlling": "control", "rolling": "roll", "accidentally": "accident",
		"abilities": "abil", "saying": "say", "enjoyed": "enjoy", "psychology": "psycholog",
		"inning": "inning", "succeed": "succeed", "by": "by", "say": "say", "cry": "cri",
		"café": "café", "x2": "x2",
	}
	for in, want := range cases {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsStopword(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"the", "what", "dont", "didnt", "i"} {
		if !IsStopword(w) {
			t.Errorf("%q should be a stopword", w)
		}
	}
	for _, w := range []string{"paint", "caroline", "support", ""} {
		if IsStopword(w) {
			t.Errorf("%q should not be a stopword", w)
		}
	}
}

func BenchmarkTerms(b *testing.B) {
	text := "Caroline: Thanks, Melanie. It really mattered. My own journey and the support I got made a huge difference. Now I want to help people go through it too."
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Terms(text)
	}
}

func TestFoldWithout(t *testing.T) {
	drop := func(names ...string) func(string) bool {
		return func(term string) bool {
			for _, n := range names {
				if term == n {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct{ in, want string }{
		{"What car does Alice drive?", "what car does drive"},
		{"Alice's sister, ALICE and alice", "sister and"},
		{"Nothing to drop here", "nothing to drop here"},
		{"Alice", ""},
	} {
		if got := FoldWithout(c.in, drop("alic")); got != c.want {
			t.Errorf("FoldWithout(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
