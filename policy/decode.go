package policy

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden characters and decoding layers.
//
// isHidden widens the classic invisible set (isInvisible, which Signature
// and clip keep using) to every format character (general category Cf) and
// default ignorable code point that renders as nothing: the Arabic letter
// mark (U+061C), the Mongolian vowel separator and free variation
// selectors (U+180B–180F), the deprecated format characters
// (U+206A–206F), invisible operators, interlinear annotation marks,
// musical formatting, shorthand format controls, Hangul fillers, the
// combining grapheme joiner, variation selectors, soft hyphens and the
// unassigned ignorables. appendInvisible spares each where it has an
// ordinary use (see there). The prepended concatenation marks of Arabic,
// Syriac and Kaithi (U+0600–0605, U+06DD, U+070F, U+0890–0891, U+08E2,
// U+110BD, U+110CD) are Cf but visible, so they are left alone.
func isHidden(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case isInvisible(r), isIgnorable(r):
		return true
	case r >= 0x600 && r <= 0x605, r == 0x6DD, r == 0x70F, r == 0x890, r == 0x891, r == 0x8E2, r == 0x110BD, r == 0x110CD:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// hasHidden reports whether text holds any hidden character (isHidden).
// ASCII text costs one comparison per byte.
func hasHidden(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(text[i:])
			if isHidden(r) {
				return true
			}
			i += n - 1
		}
	}
	return false
}

// wordsViewHits reads words separated by emoji, symbols or other marks
// that are not letters ("ignore🔥all🔥previous🔥instructions",
// "ignore/all/previous/instructions", "you 👉 are 👉 now") as words
// separated by single spaces, and
// runs the sentence rules and the cues on that view. It builds the view
// only when such a separator stands between two letters.
func wordsViewHits(pv *view, prio int, hits []hit) []hit {
	s := pv.s
	b := builder{src: s}
	prevLetter := false
	wordEnd := -1 // the end of the last word when only spaces follow it
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !wordSeparator(r) {
			prevLetter = unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case prevLetter:
				wordEnd = i + n
			case r != ' ':
				wordEnd = -1
			}
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			q, m := utf8.DecodeRuneInString(s[j:])
			if !wordSeparator(q) && q != ' ' {
				break
			}
			j += m
		}
		next, _ := utf8.DecodeRuneInString(s[j:])
		if j < len(s) && (unicode.IsLetter(next) || unicode.IsDigit(next)) {
			switch {
			case prevLetter:
				b.replace(i, j, " ")
			case wordEnd >= 0:
				// Spaced as well: "you 👉 are 👉 now".
				b.replace(wordEnd, j, " ")
			}
		}
		prevLetter, wordEnd = false, -1
		i = j
	}
	if !b.changed {
		return hits
	}
	wv := b.finish(pv)
	k := len(hits)
	hits = phraseRules.scan(wv.s, len(markupRules.rules), hits)
	hits = scanCues(wv.s, prio, hits, k)
	mapHits(hits[k:], wv)
	return hits
}

// wordSeparator reports a rune that can stand between words in place of a
// space to hide them from the rules: a symbol (emoji included), or one of
// the punctuation marks that never ends a sentence word ("/", "|", "+",
// "~", "*", "_", "•", "·").
func wordSeparator(r rune) bool {
	switch r {
	case '/', '|', '+', '~', '*', '_', '•', '·', '=', '^', '#':
		return true
	}
	return r >= 0x80 && (unicode.In(r, unicode.So, unicode.Sk, unicode.Sm) || r == 0xFE0F || r == 0x200D)
}

// decodedHits undoes the encodings an injection hides in and scans what
// they decode to with the whole detector: base64 and hex runs of the
// original text, and the phrase view read as rot13 or reversed when that
// reading holds more common words than the text itself. Each finding is
// one encoded_instruction over the encoded span.
func decodedHits(text string, pv *view, depth int, hits []hit) []hit {
	for _, c := range encodedRuns(text) {
		if !hasSpace(c.text) {
			continue
		}
		if fs := detectInstructionsDepth(normalize(c.text), depth+1); len(fs) > 0 {
			hits = append(hits, hit{Finding{Type: InstructionEncoded, Start: c.s, End: c.e}, invisiblePrio - 1})
		}
	}
	s := pv.s
	base := commonWords(s)
	if rot := rot13(s); rot != "" && commonWords(rot) > max(1, base) {
		if found := phraseOrCues(rot); found != nil {
			s0, e0 := pv.origin(found[0], found[1])
			hits = append(hits, hit{Finding{Type: InstructionEncoded, Start: s0, End: e0}, invisiblePrio - 1})
		} else if !isASCII(text) {
			// The phrase view has turned accented letters into ASCII ones
			// (ç into c), which rot13 would then rotate: read the text
			// itself as rot13, where they stay what they were, and fold
			// that. The finding spans the whole text.
			if n := normalize(rot13(text)); true {
				rpv, _ := phraseView(markupView(n.base))
				if phraseOrCues(rpv.s) != nil {
					hits = append(hits, hit{Finding{Type: InstructionEncoded, Start: 0, End: len(text)}, invisiblePrio - 1})
				}
			}
		}
	}
	if rev := reverseRunes(s); commonWords(rev) > max(1, base) {
		if found := phraseOrCues(rev); found != nil {
			s0, e0 := pv.origin(len(s)-found[1], len(s)-found[0])
			hits = append(hits, hit{Finding{Type: InstructionEncoded, Start: s0, End: e0}, invisiblePrio - 1})
		}
	}
	return hits
}

// phraseOrCues runs the sentence rules, the cues and the classifier on a
// decoded phrase view and returns the span they cover, or nil.
func phraseOrCues(s string) []int {
	var buf [4]hit
	hs := phraseRules.scan(s, 0, buf[:0])
	hs = scanCues(s, 0, hs, 0)
	if len(hs) == 0 && useClassifier {
		hs = classifierHits(&view{s: s}, 0, hs, true)
	}
	if len(hs) == 0 {
		return nil
	}
	lo, hi := hs[0].Start, hs[0].End
	for _, h := range hs[1:] {
		lo, hi = min(lo, h.Start), max(hi, h.End)
	}
	return []int{lo, hi}
}

func hasSpace(s string) bool { return strings.IndexByte(s, ' ') >= 0 }

// encodedRun is a span of text that decodes to printable text.
type encodedRun struct {
	s, e int
	text string
}

// maxDecoded bounds the bytes decoded in one text, so a text full of
// base64 costs no more than a few scans of itself.
const maxDecoded = 16 << 10

// encodedRuns finds the base64 and hex runs of text that decode to
// printable UTF-8: base64 (standard or URL alphabet, 16 characters or
// more, padding optional) and hex (16 bytes or more; pairs optionally
// separated by single spaces or colons, or written \x41 or 0x41).
func encodedRuns(text string) []encodedRun {
	var out []encodedRun
	budget := maxDecoded
	for i := 0; i < len(text) && budget > 0; {
		c := text[i]
		if !isBase64Byte(c) && c != '-' && c != '_' && c != '\\' {
			i++
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			i++
			continue
		}
		if e, d, ok := hexRun(text, i); ok {
			budget -= len(d)
			out = append(out, encodedRun{i, e, d})
			i = e
			continue
		}
		j := i
		for j < len(text) && (isBase64Byte(text[j]) || text[j] == '-' || text[j] == '_') {
			j++
		}
		if j-i >= 16 {
			if d, ok := decodeBase64(text[i:j]); ok {
				budget -= len(d)
				out = append(out, encodedRun{i, j, d})
			} else if k := strings.LastIndexByte(strings.TrimRight(text[i:j], "="), '='); k >= 0 && j-(i+k+1) >= 16 {
				// A label glued on with '=' ("msg=V2h…"): the run starts
				// after it.
				i += k + 1
				continue
			}
		}
		i = max(j, i+1)
	}
	return out
}

func decodeBase64(s string) (string, bool) {
	raw := strings.TrimRight(s, "=")
	var b []byte
	var err error
	if strings.ContainsAny(raw, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(raw)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(raw)
	}
	if err != nil || len(b) < 12 {
		return "", false
	}
	d := string(b)
	return d, printable(d)
}

// hexRun reads a hex run at i: it returns its end and what it decodes to.
func hexRun(text string, i int) (int, string, bool) {
	var digits []byte
	j := i
	for j < len(text) {
		k := j
		if strings.HasPrefix(text[k:], `\x`) || strings.HasPrefix(text[k:], "0x") {
			k += 2
		}
		if k+1 < len(text) && isHexByte(text[k]) && isHexByte(text[k+1]) {
			digits = append(digits, text[k], text[k+1])
			j = k + 2
			if j < len(text) && (text[j] == ' ' || text[j] == ':') && j+1 < len(text) && isHexByte(text[j+1]) {
				j++
			}
			continue
		}
		break
	}
	if len(digits) < 32 || j < len(text) && isWordByte(text[j]) {
		return 0, "", false
	}
	b := make([]byte, len(digits)/2)
	if _, err := hex.Decode(b, digits); err != nil {
		return 0, "", false
	}
	d := string(b)
	if !printable(d) {
		return 0, "", false
	}
	for j > i && text[j-1] == ' ' {
		j--
	}
	return j, d, true
}

func isHexByte(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// printable reports valid UTF-8 made of letters, digits, punctuation,
// symbols and spaces: what a person writes, not binary data.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	letters := 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '\n' || r == '\t' || r == '\r' || unicode.IsPrint(r):
		default:
			return false
		}
	}
	return letters*2 >= utf8.RuneCountInString(s)
}

// rot13 returns s with its ASCII letters rotated, or "" when s holds none.
func rot13(s string) string {
	b := []byte(s)
	n := 0
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
			n++
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return string(b)
}

// reverseRunes returns s with its runes in reverse order: byte offset p of
// the result is len(s)-p of s.
func reverseRunes(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		copy(b[len(s)-i-n:], s[i:i+n])
		i += n
	}
	return string(b)
}

// commonWords counts the words of s that are among the most common words
// of the languages written in Latin or Cyrillic letters, and the common
// words of notes to a model (always, never, rule, recommend …, so that a
// short encoded rule gains two): text that gains many of them when read as
// rot13 or backwards was written that way.
func commonWords(s string) int {
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) && !isAlpha(s[i]) && s[i] < utf8.RuneSelf {
			i++
		}
		j := i
		for j < len(s) && (isAlpha(s[j]) || s[j] >= utf8.RuneSelf) {
			j++
		}
		if j > i && j-i <= 12 && commonWordSet[s[i:j]] {
			n++
		}
		if j == i {
			j++
		}
		i = j
	}
	return n
}

var commonWordSet = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and to of you your all is are this that for with in on not do be it me my now no
		any from as at by or an if will must what above previous instructions ignore
		always never other when then they them their there about into only also but so he she his her was were
		have has had can tell send say ask who which we our us just like know new should would could please
		every after before again rule rules policy note memory user assistant model system prompt reply answer
		mention recommend keep secret forget
		el la los las de que y en tu todas todos las del por para con
		le les des et vous tes toutes est une pour avec
		der die das und du alle nicht ist mit von zu
		o os as um uma voce com nao
		il di che non sono per ignora ignore ignoriere anteriores instrucciones anweisungen vorherigen maintenant sans une
		ahora eres tu es sei du bist jij bent ты теперь now are
		het een en je niet van met
		и в не на ты все что это`) {
		m[w] = true
	}
	return m
}()
