// Package analysis turns text into the words and terms that memgate indexes,
// embeds and queries. The BM25 text index and the built-in embedder both call
// it, on memories and on queries alike, so a document and a query always meet
// on the same terms.
//
// The pipeline is:
//
//  1. Normalization (Fold): lowercase, fold compatibility forms the way NFKC
//     would for the common cases (fullwidth ASCII, Latin ligatures), fold Latin
//     diacritics to their base letters ("Café" → "cafe", "Straße" → "strasse"),
//     drop combining diacritical marks, unify typographic apostrophes.
//  2. Tokenization (Tokens): maximal runs of letters and digits. A final
//     English clitic goes with its apostrophe ("Caroline's" → "caroline",
//     "we'd" → "we", "I'm" → "i"); any other apostrophe between letters is
//     removed ("don't" → "dont", "O'Brien" → "obrien"). Scripts written
//     without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) are
//     cut into overlapping character bigrams, as search engines commonly do.
//     Tokens longer than MaxTokenBytes are truncated.
//  3. Terms (Terms): tokens minus stopwords (IsStopword) and single ASCII
//     letters, stemmed with the Porter2 (Snowball English) stemmer (Stem).
//
// Every function is deterministic, safe for concurrent use, and never panics,
// whatever the input, including invalid UTF-8 (an invalid byte separates
// tokens like a space). The package must never depend on a corpus, a model,
// the network or global mutable state: the same text yields the same terms
// on every machine and in every release that keeps TermsVersion. Changing
// what Terms returns for any input requires bumping TermsVersion, because
// term statistics and hashed embeddings built from older terms then no
// longer match.
package analysis

//go:generate sh -c "python3 foldtable_gen.py > foldtable.go && gofmt -w foldtable.go"

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TermsVersion names the behaviour of Terms and Tokens. Indexes and embedders
// that persist anything derived from terms record it and rebuild on change.
const TermsVersion = "analysis-v1"

// MaxTokenBytes bounds a token; longer runs (URLs, base64, hashes) are cut to
// this many bytes at a rune boundary, so one huge word cannot dominate.
const MaxTokenBytes = 64

// Tokens returns the normalized word tokens of text in order, repeats and
// stopwords included, unstemmed.
func Tokens(text string) []string {
	return AppendTokens(nil, text)
}

// AppendTokens appends the tokens of text to dst and returns it. All tokens
// appended by one call share one backing string.
func AppendTokens(dst []string, text string) []string {
	var t tokenizer
	t.run(text)
	if len(t.ends) == 0 {
		return dst
	}
	s := string(t.buf)
	dst = slices.Grow(dst, len(t.ends))
	start := 0
	for _, end := range t.ends {
		dst = append(dst, s[start:end])
		start = end
	}
	return dst
}

// Terms returns the analyzed index terms of text in order, with repeats:
// tokens minus stopwords and single ASCII letters, each stemmed. It is the
// one function the BM25 index uses for documents and queries.
func Terms(text string) []string {
	return AppendTerms(nil, text)
}

// AppendTerms appends the terms of text to dst and returns it. All terms
// appended by one call share one backing string.
func AppendTerms(dst []string, text string) []string {
	var t tokenizer
	t.run(text)
	s, ends := t.stems()
	dst = slices.Grow(dst, len(ends))
	start := 0
	for _, end := range ends {
		dst = append(dst, s[start:end])
		start = end
	}
	return dst
}

// Word is a content word of a text: its normalized token and its term (the
// stemmed token, as Terms returns it).
type Word struct {
	Token string
	Term  string
}

// AppendWords appends the content words of text to dst, in order, with
// repeats: the tokens that Terms keeps, each with its term. The embedder
// uses it to hash terms and the character n-grams of the unstemmed token.
func AppendWords(dst []Word, text string) []Word {
	var t tokenizer
	t.run(text)
	toks := string(t.buf)
	s, ends := t.stems()
	dst = slices.Grow(dst, len(ends))
	start, tstart, k := 0, 0, 0
	for i, end := range t.ends {
		if k < len(ends) && t.kept[k] == i {
			dst = append(dst, Word{Token: toks[tstart:end], Term: s[start:ends[k]]})
			start = ends[k]
			k++
		}
		tstart = end
	}
	return dst
}

// stems returns the stems of the kept tokens, back to back in one string,
// with their end offsets; t.kept records which tokens were kept.
func (t *tokenizer) stems() (string, []int) {
	if len(t.ends) == 0 {
		return "", nil
	}
	out := make([]byte, 0, len(t.buf))
	ends := make([]int, 0, len(t.ends))
	t.kept = make([]int, 0, len(t.ends))
	var work [MaxTokenBytes + 1]byte
	start := 0
	for i, end := range t.ends {
		tok := t.buf[start:end]
		start = end
		if !keepTerm(tok) {
			continue
		}
		out = append(out, stemBytes(append(work[:0], tok...))...)
		ends = append(ends, len(out))
		t.kept = append(t.kept, i)
	}
	return string(out), ends
}

// keepTerm reports whether a token becomes a term.
func keepTerm(tok []byte) bool {
	if len(tok) == 1 && tok[0] >= 'a' && tok[0] <= 'z' {
		return false
	}
	return !isStopwordBytes(tok)
}

// Fold returns text normalized as the tokenizer sees it: lowercased and folded
// (see the package comment), with every run of non-word characters (and every
// invalid byte) replaced by one space and the ends trimmed. It is Tokens
// joined by spaces, and useful to callers that want character n-grams of the
// normalized text.
func Fold(text string) string {
	var t tokenizer
	t.run(text)
	if len(t.ends) == 0 {
		return ""
	}
	out := make([]byte, 0, len(t.buf)+len(t.ends))
	start := 0
	for i, end := range t.ends {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, t.buf[start:end]...)
		start = end
	}
	return string(out)
}

// FoldWithout returns Fold(text) without the content words whose term drop
// reports (stopwords stay: they have no term). The engine uses it to embed
// a query without the words that identify its partition (see package rank,
// "Names are not evidence"), so it must leave every other token as Fold
// does: Terms(FoldWithout(t, drop)) is Terms(t) minus the dropped terms.
func FoldWithout(text string, drop func(term string) bool) string {
	var t tokenizer
	t.run(text)
	if len(t.ends) == 0 {
		return ""
	}
	s, ends := t.stems()
	out := make([]byte, 0, len(t.buf)+len(t.ends))
	start, k, sstart := 0, 0, 0
	for i, end := range t.ends {
		tok := t.buf[start:end]
		start = end
		if k < len(ends) && t.kept[k] == i {
			term := s[sstart:ends[k]]
			sstart = ends[k]
			k++
			if drop(term) {
				continue
			}
		}
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = append(out, tok...)
	}
	return string(out)
}

// tokenizer accumulates normalized tokens back to back in buf; ends[i] is the
// end offset of token i.
type tokenizer struct {
	buf  []byte
	ends []int
	kept []int // indexes of the tokens that stems kept

	cur  int  // start of the word token being built in buf
	full bool // the current word token reached MaxTokenBytes
	apos bool // an apostrophe follows the current word's letters

	run1 rune // previous rune of the current spaceless-script run
	runN int  // runes in the current spaceless-script run
}

const (
	classSep = iota
	classWord
	classSpaceless
	classApos
	classMark
)

func (t *tokenizer) run(text string) {
	t.buf = make([]byte, 0, len(text)+8)
	t.ends = make([]int, 0, len(text)/5+1)
	var fold [4]rune
	for i := 0; i < len(text); {
		r, w := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(text[i:])
		}
		i += w
		if r == utf8.RuneError && w == 1 {
			t.flush()
			continue
		}
		switch classify(r) {
		case classWord:
			t.endRun()
			// An apostrophe between letters that does not start a clitic
			// is removed: "don't" → "dont", "O'Brien" → "obrien".
			t.apos = false
			n := foldRune(r, fold[:])
			for _, fr := range fold[:n] {
				t.appendRune(fr)
			}
		case classSpaceless:
			t.flushWord()
			t.addSpaceless(r)
		case classApos:
			if len(t.buf) > t.cur && !t.apos && t.runN == 0 {
				if n := cliticLen(text, i); n > 0 {
					// "she'll", "we'd", "I'm", "Caroline's": the clitic
					// goes, the word stays.
					i += n
					t.flush()
					continue
				}
				t.apos = true
			} else {
				t.flush()
			}
		case classMark:
			// Combining diacritical marks are dropped inside a word, so
			// decomposed text folds like composed text; elsewhere they
			// separate.
			if len(t.buf) == t.cur {
				t.flush()
			}
		default:
			t.flush()
		}
	}
	t.flush()
}

// cliticLen returns the length of the English clitic ('s, 'm, 're, 've,
// 'd, 'll, in any case) that starts at text[i:], right after an apostrophe,
// and ends a word; 0 if there is none. "n't" is not a clitic here: "don't"
// stays one token ("dont"), which the stopword list knows.
func cliticLen(text string, i int) int {
	n := 0
	for n < 3 && i+n < len(text) && isASCIILetter(text[i+n]) {
		n++
	}
	if n == 0 || (i+n < len(text) && isWordAt(text, i+n)) {
		return 0
	}
	for _, c := range clitics {
		if strings.EqualFold(text[i:i+n], c) {
			return n
		}
	}
	return 0
}

var clitics = [...]string{"s", "m", "d", "re", "ve", "ll"}

func isASCIILetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isWordAt reports whether the rune at text[i:] continues a word (so an "'s"
// followed by it is not a final "'s").
func isWordAt(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	c := classify(r)
	return c == classWord || c == classMark
}

func (t *tokenizer) appendRune(r rune) {
	if t.full {
		return
	}
	n := 1
	if r >= utf8.RuneSelf {
		n = utf8.RuneLen(r)
	}
	if len(t.buf)-t.cur+n > MaxTokenBytes {
		t.full = true
		return
	}
	if n == 1 {
		t.buf = append(t.buf, byte(r))
	} else {
		t.buf = utf8.AppendRune(t.buf, r)
	}
}

// addSpaceless extends a spaceless-script run with r, emitting the bigram of
// the previous rune and r.
func (t *tokenizer) addSpaceless(r rune) {
	r = unicode.ToLower(r)
	if t.runN > 0 {
		t.buf = utf8.AppendRune(t.buf, t.run1)
		t.buf = utf8.AppendRune(t.buf, r)
		t.ends = append(t.ends, len(t.buf))
		t.cur = len(t.buf)
	}
	t.run1 = r
	t.runN++
}

// endRun ends a spaceless-script run; a run of one rune is a token of its own.
func (t *tokenizer) endRun() {
	if t.runN == 1 {
		t.buf = utf8.AppendRune(t.buf, t.run1)
		t.ends = append(t.ends, len(t.buf))
		t.cur = len(t.buf)
	}
	t.runN = 0
}

// flushWord ends the current word token, if any.
func (t *tokenizer) flushWord() {
	t.apos = false
	t.full = false
	if len(t.buf) > t.cur {
		t.ends = append(t.ends, len(t.buf))
		t.cur = len(t.buf)
	}
}

// flush ends whatever token is being built.
func (t *tokenizer) flush() {
	t.flushWord()
	t.endRun()
}

func classify(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			return classWord
		case r == '\'':
			return classApos
		}
		return classSep
	case r == '\u2019' || r == '\u02BC' || r == '\uFF07':
		return classApos
	case 0x0300 <= r && r <= 0x036F:
		return classMark
	case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r),
		unicode.Is(unicode.Thai, r), unicode.Is(unicode.Lao, r), unicode.Is(unicode.Khmer, r),
		unicode.Is(unicode.Myanmar, r):
		return classSpaceless
	case unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Mc, r):
		return classWord
	}
	return classSep
}

// foldRune writes the normalized form of the word rune r into out and
// returns how many runes it wrote (at most 3).
func foldRune(r rune, out []rune) int {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		out[0] = r
		return 1
	case 0xC0 <= r && r < 0x250:
		if f := latinFold[r-0xC0]; f != "" {
			return copyASCII(out, f)
		}
	case 0x1E00 <= r && r < 0x1F00:
		if f := latinExtFold[r-0x1E00]; f != "" {
			return copyASCII(out, f)
		}
	case 0xFF10 <= r && r <= 0xFF5A:
		// Fullwidth digits and letters fold to ASCII, as NFKC does.
		return foldRune(r-0xFEE0, out)
	case 0xFB00 <= r && r <= 0xFB06:
		return copyASCII(out, ligatures[r-0xFB00])
	case r == 'ς':
		out[0] = 'σ'
		return 1
	}
	out[0] = unicode.ToLower(r)
	return 1
}

var ligatures = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}

func copyASCII(out []rune, s string) int {
	for i := 0; i < len(s); i++ {
		out[i] = rune(s[i])
	}
	return len(s)
}
