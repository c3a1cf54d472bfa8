package policy

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The detectors do not read the text as given but views of it, each made
// from the one before and each able to map a span of its own bytes back to
// the original text:
//
//   - base (normalize): NFKC, so fullwidth, mathematical, circled and
//     superscript forms read as the letters and digits they style; default
//     ignorable code points removed (soft hyphens, zero-width characters,
//     bidi controls, variation selectors, Hangul fillers, tag characters …),
//     so "ig\u00adnore" reads "ignore" and a key split by zero-width spaces
//     reads whole; look-alike letters folded into the script of the word
//     that mixes them (foldConfusables). The secret detector reads it
//     beside the original text.
//   - markup (markupView): base in lower case, white space collapsed,
//     look-alike angle brackets as < and >, curly quotes straight. The tag
//     and link rules read it.
//   - phrase (phraseView): markup without Latin accents and combining
//     marks or Arabic vowel signs, with letters and syllables split by
//     separators joined and leetspeak read. The sentence rules read it.
//
// Every view is built in one pass over the one before, and only where
// something changes: ASCII text is its own base (ASCII is NFKC and holds
// no ignorable or look-alike), NFKC text is only searched for ignorables
// (norm's quick check), and text already in lower case with single spaces
// is its own markup view. The work is linear in the text. Views are
// immutable once built, so they are safe to share between goroutines.

// view is one form of the text. Bytes of s map to bytes of parent's s: in
// an edit, the bytes [out, outEnd) were produced from [src, srcEnd) of the
// parent (a deletion has out == outEnd); between edits they map one to one,
// shifted as the last edit before them left the offsets. A view without
// parent is the original text.
type view struct {
	s      string
	parent *view
	edits  []edit
	// joined lists, in a phrase view, the spans of s where phraseView
	// joined split letters or syllables: only there may a rule's lead run
	// into the next word (see tokenRule.glue).
	joined []span
}

type edit struct{ out, outEnd, src, srcEnd int }

// source returns the span of the parent that produced byte p of v.
func (v *view) source(p int) (int, int) {
	k := sort.Search(len(v.edits), func(i int) bool { return v.edits[i].out > p }) - 1
	if k < 0 {
		return p, p + 1
	}
	e := v.edits[k]
	if p < e.outEnd {
		return e.src, e.srcEnd
	}
	q := p - e.outEnd + e.srcEnd
	return q, q + 1
}

// origin maps the non-empty span [s, e) of v.s to the original text: from
// the start of the character that produced byte s to the end of the one
// that produced byte e-1, so characters removed inside the span (a
// zero-width space in a word) are part of it. The result is in bounds and,
// for valid UTF-8, on rune boundaries.
func (v *view) origin(s, e int) (int, int) {
	w := v
	for ; w.parent != nil; w = w.parent {
		s, _ = w.source(s)
		_, e = w.source(e - 1)
	}
	text := w.s
	if len(text) == 0 {
		return 0, 0
	}
	s = max(0, min(s, len(text)-1))
	e = max(s+1, min(e, len(text)))
	for k := 0; k < utf8.UTFMax-1 && s > 0 && !utf8.RuneStart(text[s]); k++ {
		s--
	}
	for k := 0; k < utf8.UTFMax-1 && e < len(text) && !utf8.RuneStart(text[e]); k++ {
		e++
	}
	return s, e
}

// sameLength returns a view whose bytes map exactly as v's do, for a text
// of the same length made by replacing single bytes of v.s.
func (v *view) sameLength(s string) *view {
	if v.parent == nil {
		return &view{s: s, parent: v, joined: v.joined}
	}
	return &view{s: s, parent: v.parent, edits: v.edits, joined: v.joined}
}

// mapHits moves the offsets of hits found in v to the original text.
func mapHits(hits []hit, v *view) {
	if v.parent == nil {
		return
	}
	for i := range hits {
		hits[i].Start, hits[i].End = v.origin(hits[i].Start, hits[i].End)
	}
}

// builder makes a view from src with replacements made left to right. It
// copies nothing until the first change, so a pass that changes nothing
// costs no allocation.
type builder struct {
	src     string
	buf     []byte
	edits   []edit
	done    int // src[:done] is accounted for in buf
	changed bool
}

// replace replaces src[start:end] (start at or after the end of the last
// replacement) with repl.
func (b *builder) replace(start, end int, repl string) { put(b, start, end, repl) }

// replaceRune replaces src[start:end] with r.
func (b *builder) replaceRune(start, end int, r rune) {
	var enc [utf8.UTFMax]byte
	n := utf8.EncodeRune(enc[:], r)
	put(b, start, end, enc[:n])
}

// replaceByte replaces the byte src[i] with c.
func (b *builder) replaceByte(i int, c byte) {
	enc := [1]byte{c}
	put(b, i, i+1, enc[:])
}

func put[T string | []byte](b *builder, start, end int, repl T) {
	if end-start == len(repl) && b.src[start:end] == string(repl) {
		return
	}
	if !b.changed {
		b.changed = true
		b.buf = make([]byte, 0, len(b.src)+len(b.src)/8+8)
		b.done = 0
	}
	b.buf = append(b.buf, b.src[b.done:start]...)
	out := len(b.buf)
	b.buf = append(b.buf, repl...)
	b.done = end
	if len(repl) == end-start {
		return // same length: bytes map one to one
	}
	if n := len(b.edits); n > 0 && len(repl) == 0 {
		// Consecutive deletions make one edit.
		if last := &b.edits[n-1]; last.out == last.outEnd && last.outEnd == out && last.srcEnd == start {
			last.srcEnd = end
			return
		}
	}
	b.edits = append(b.edits, edit{out, out + len(repl), start, end})
}

// finish returns the view built on parent (whose text is b.src): parent
// itself when nothing changed.
func (b *builder) finish(parent *view) *view {
	if !b.changed {
		return parent
	}
	b.buf = append(b.buf, b.src[b.done:]...)
	s := string(b.buf)
	if len(b.edits) == 0 {
		return parent.sameLength(s)
	}
	return &view{s: s, parent: parent, edits: b.edits}
}

// normalized is the text as given and its base view (see above); base is
// orig when normalization changes nothing, as for all ASCII text.
type normalized struct {
	orig, base *view
}

// normalize builds the base view of text: NFKC, without default ignorable
// code points, with look-alike letters folded.
func normalize(text string) normalized {
	orig := &view{s: text}
	if isASCII(text) {
		// ASCII is NFKC, holds no ignorable code point and no look-alike.
		return normalized{orig, orig}
	}
	return normalized{orig, foldConfusables(compatView(orig))}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// compatView applies NFKC and removes default ignorable code points. Runs
// that are already NFKC (norm's quick check) are only searched for
// ignorables; the rest is normalized segment by segment (a segment is a
// character and the marks that combine with it, normalized independently
// of its neighbours), so each edit covers one character.
func compatView(v *view) *view {
	text := v.s
	b := builder{src: text}
	var seg, out []byte
	for i := 0; i < len(text); {
		q := i + norm.NFKC.QuickSpanString(text[i:])
		for j := i; j < q; {
			if text[j] < utf8.RuneSelf {
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[j:])
			if isIgnorable(r) {
				b.replace(j, j+n, "")
			}
			j += n
		}
		if q >= len(text) {
			break
		}
		// One segment that may change: normalize it alone. Most are one
		// character, followed by one that starts a segment of its own.
		e := q + int(norm.NFKC.PropertiesString(text[q:]).Size())
		if e < len(text) && !norm.NFKC.PropertiesString(text[e:]).BoundaryBefore() {
			e = q + norm.NFKC.NextBoundaryInString(text[q:], true)
		}
		if e <= q { // cannot happen; guarantees progress
			_, n := utf8.DecodeRuneInString(text[q:])
			e = q + n
		}
		out = nfkcSegment(out[:0], text[q:e])
		seg = seg[:0]
		for k := 0; k < len(out); {
			r, n := utf8.DecodeRune(out[k:])
			if !isIgnorable(r) {
				seg = append(seg, out[k:k+n]...)
			}
			k += n
		}
		put(&b, q, e, seg)
		i = e
	}
	return b.finish(v)
}

// nfkcSegment appends the NFKC form of one segment to out. A segment of
// one character whose compatibility decomposition is ASCII or a single
// character (fullwidth, mathematical and circled letters, ligatures,
// superscripts …, the forms an attacker picks) is its own NFKC form: it is
// taken from norm's tables without running the normalizer, which allocates.
func nfkcSegment(out []byte, seg string) []byte {
	p := norm.NFKC.PropertiesString(seg)
	if int(p.Size()) == len(seg) {
		d := p.Decomposition()
		switch {
		case len(d) == 0 && p.CCC() == 0 && p.BoundaryAfter():
			return append(out, seg...) // an emoji, a rare script …: unchanged
		case len(d) > 0 && (isASCII(string(d)) || utf8.RuneCount(d) == 1):
			return append(out, d...)
		}
	}
	return norm.NFKC.AppendString(out, seg)
}

// isIgnorable reports the Unicode Default_Ignorable_Code_Point property
// (DerivedCoreProperties.txt): characters that render as nothing unless a
// font supports them specially. They are removed before matching. Only the
// classic invisible set (isInvisible) is reported as a finding; the others
// (soft hyphens, variation selectors, Hangul fillers, the Mongolian vowel
// separator, the Arabic letter mark …) have ordinary uses.
func isIgnorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0xAD, r == 0x34F, r == 0x61C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r >= 0x180B && r <= 0x180F, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r == 0x3164, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF, r == 0xFFA0,
		r >= 0xFFF0 && r <= 0xFFF8, r >= 0x1BCA0 && r <= 0x1BCA3, r >= 0x1D173 && r <= 0x1D17A,
		r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}

// isInvisible reports the characters that render as nothing and are used to
// hide text from a human reader: Unicode tag characters, zero-width
// characters, the byte order mark, and bidirectional embeddings, overrides
// and isolates. DetectInstructions reports them (see appendInvisible);
// Signature and clip drop or mask them.
func isInvisible(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F: // tag characters
	case r >= 0x200B && r <= 0x200F: // zero width space, non-joiner, joiner; LRM, RLM
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
	case r == 0xFEFF: // zero width no-break space (byte order mark)
	case r >= 0x202A && r <= 0x202E: // bidi embeddings and overrides
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
	default:
		return false
	}
	return true
}

// hasInvisible reports whether text holds any invisible character. Every
// one of them is encoded with a lead byte E2, EF or F3, so ASCII text costs
// one comparison per byte.
func hasInvisible(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == 0xE2 || c == 0xEF || c == 0xF3 {
			if r, _ := utf8.DecodeRuneInString(text[i:]); isInvisible(r) {
				return true
			}
		}
	}
	return false
}

// markupView lowers the case of v, collapses each run of white space to
// one space (or one newline when the run holds a line break) and drops it
// at both ends, and writes look-alike angle brackets and curly quotes as
// their ASCII forms.
func markupView(v *view) *view {
	src := v.s
	b := builder{src: src}
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' && i > 0 && i+1 < len(src) && src[i+1] > ' ' && src[i+1] < utf8.RuneSelf:
				// One space between words: the common case, unchanged.
			case c == ' ' || c >= '\t' && c <= '\r':
				i = collapseSpace(&b, src, i)
				continue
			case c >= 'A' && c <= 'Z':
				b.replaceByte(i, c+'a'-'A')
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if isSpaceRune(r) {
			i = collapseSpace(&b, src, i)
			continue
		}
		if m := markupRune(r); m != r {
			b.replaceRune(i, i+n, m)
		}
		i += n
	}
	return b.finish(v)
}

// collapseSpace handles the run of white space starting at i and returns
// its end.
func collapseSpace(b *builder, src string, i int) int {
	j, nl := i, false
	for j < len(src) {
		c := src[j]
		if c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				break
			}
			nl = nl || c != ' ' && c != '\t'
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[j:])
		if !isSpaceRune(r) {
			break
		}
		nl = nl || r == 0x85 || r == 0x2028 || r == 0x2029
		j += n
	}
	switch {
	case i == 0 || j == len(src):
		b.replace(i, j, "")
	case nl:
		b.replace(i, j, "\n")
	default:
		b.replace(i, j, " ")
	}
	return j
}

// isSpaceRune is unicode.IsSpace for a non-ASCII rune, without a table
// search.
func isSpaceRune(r rune) bool {
	switch r {
	case 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// markupRune maps one non-ASCII, non-space rune for the markup view.
func markupRune(r rune) rune {
	switch r {
	case 0x2039, 0x3008, 0x276E, 0x27E8, 0x02C2, 0x2329:
		return '<'
	case 0x203A, 0x3009, 0x276F, 0x27E9, 0x02C3, 0x232A:
		return '>'
	case 0x2018, 0x2019, 0x201B, 0x2032, 0x02BC, 0x02BB, 0x2035:
		return '\''
	case 0x201C, 0x201D, 0x201F, 0x2033, 0x2036:
		return '"'
	}
	if r >= 0x2E80 && r < 0xA640 {
		return r // CJK, kana, Hangul …: no case
	}
	return unicode.ToLower(r)
}

// phraseView makes the views the sentence rules read from the markup view
// m: Latin letters without their accents ("instrucciones", "précédentes",
// "vorherigen" read "instrucciones", "precedentes", "vorherigen"), combining
// marks after Latin letters and Arabic vowel signs and tatweel removed
// ("المشغّلة" reads "المشغلة"), letters split by separators joined
// ("i-g-n-o-r-e", "i.g.n.o.r.e", "i g n o r e a l l", "s_y_s_t_e_m"), and
// leetspeak read inside words that mix letters with digits or symbols
// ("1gn0r3 4ll pr3v10u5" reads "ignore all previous"; "2024" and "5 apples"
// stay). A 1, ! or | can stand for i or l: when the text has one, alt is a
// second view reading it as l (both map like pv).
func phraseView(m *view) (pv, alt *view) {
	src := m.s
	b := builder{src: src}
	var joined []span  // in src offsets until the view is built
	prevLatin := false // whether a combining mark here follows a Latin letter
	// A run that does not qualify is measured once: no run starting inside
	// it, before these offsets, can qualify either (keeps the pass linear).
	noSplit, noSyllable := 0, 0
	leet := false // whether readLeet may have something to read
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if isRunElem(c) {
				w := i + 1 // the end of the ASCII word
				letters, digits := isAlpha(c), leetLetter[c] != 0
				for w < len(src) && isRunElem(src[w]) {
					letters = letters || isAlpha(src[w])
					digits = digits || leetLetter[src[w]] != 0
					w++
				}
				leet = leet || letters && digits
				if !wordBefore(src, i) {
					j := i
					switch {
					case w == i+1 && i >= noSplit:
						j, noSplit = splitRun(&b, src, i)
					case w-i <= 5 && w < len(src) && (src[w] == '-' || src[w] == '_' || src[w] == '*') && i >= noSyllable:
						j, noSyllable = syllableRun(&b, src, i)
					}
					if j > i {
						joined = append(joined, span{i, j})
						i, prevLatin, leet = j, true, true
						continue
					}
				}
				// Otherwise the ASCII word stays as it is.
				i, prevLatin = w, isAlnum(src[w-1])
				continue
			}
			prevLatin = false
			leet = leet || c == '!' || c == '|'
			if c == ' ' && i+2 < len(src) && src[i+1] == 0xCC && src[i+2] == 0x81 {
				// NFKC writes an acute accent (U+00B4, "don´t") as a space
				// and a combining acute: read an apostrophe.
				b.replace(i, i+3, "'")
				i += 3
				continue
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if prevLatin && (unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)) || isArabicMark(r) {
			b.replace(i, i+n, "")
			i += n
			continue
		}
		// A split run of non-ASCII letters starts after a space or ASCII
		// punctuation (a mark after a non-Latin letter stays where it is).
		if i >= noSplit && (i == 0 || src[i-1] < utf8.RuneSelf && !isRunElem(src[i-1])) && unicode.IsLetter(r) {
			var j int
			if j, noSplit = splitRun(&b, src, i); j > i {
				joined = append(joined, span{i, j})
				i, prevLatin, leet = j, true, true
				continue
			}
		}
		prevLatin = foldLatin(&b, src, i, r, n)
		i += n
	}
	pv = b.finish(m)
	if len(joined) > 0 {
		// Move the spans to pv's offsets: the builder's edits are in order.
		for k := range joined {
			joined[k] = span{outOffset(b.edits, joined[k].s, false), outOffset(b.edits, joined[k].e, true)}
		}
		if pv == m {
			pv = m.sameLength(m.s)
		}
		pv.joined = joined
	}
	if !leet {
		return pv, nil
	}
	s, ones := readLeet(pv.s)
	if s == pv.s {
		return pv, nil
	}
	pv = pv.sameLength(s)
	if len(ones) > 0 {
		l := []byte(s)
		for _, p := range ones {
			l[p] = 'l'
		}
		alt = pv.sameLength(string(l))
	}
	return pv, alt
}

// isArabicMark reports the vowel signs and other marks written above and
// below Arabic letters (harakat, tanwin, shadda, sukun, the dagger alif,
// Quranic annotation signs) and the tatweel that stretches a word: the
// phrase view reads vocalized or stretched Arabic as its bare letters, as
// it reads Latin letters without their accents.
func isArabicMark(r rune) bool {
	return r >= 0x610 && r <= 0x61A || r == 0x640 || r >= 0x64B && r <= 0x65F || r == 0x670 ||
		r >= 0x6D6 && r <= 0x6DC || r >= 0x6DF && r <= 0x6E4 || r == 0x6E7 || r == 0x6E8 || r >= 0x6EA && r <= 0x6ED
}

// stripArabicMarks removes what isArabicMark reports from s.
func stripArabicMarks(s string) string {
	if strings.IndexFunc(s, isArabicMark) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isArabicMark(r) {
			return -1
		}
		return r
	}, s)
}

// outOffset maps the source offset p of a builder with the given edits
// (sorted, none empty in the source) to the offset of the built text: the
// start of what source byte p produced or, with end, the end of what the
// byte before p produced.
func outOffset(edits []edit, p int, end bool) int {
	q := p
	if end {
		q = p - 1
	}
	k := sort.Search(len(edits), func(i int) bool { return edits[i].src > q }) - 1
	delta := 0
	if k >= 0 {
		e := edits[k]
		if q < e.srcEnd {
			if end {
				return e.outEnd
			}
			return e.out
		}
		delta = e.outEnd - e.srcEnd
	}
	if end {
		return q + delta + 1
	}
	return q + delta
}

// foldLatin writes the rune r at src[i:i+n] without its accent when it is
// a Latin letter, and reports whether it is one, that is whether combining
// marks after it are removed.
func foldLatin(b *builder, src string, i int, r rune, n int) bool {
	if !isLatin(r) {
		return false
	}
	if a, ok := latinBase[r]; ok {
		b.replace(i, i+n, a)
	}
	return true
}

// isLatin is unicode.Is(unicode.Latin, r) for a non-ASCII rune, searching
// the table only in the blocks that hold Latin letters.
func isLatin(r rune) bool {
	switch {
	case r < 0x2B9:
		return r >= 0xC0 && r != 0xD7 && r != 0xF7 || r == 0xAA || r == 0xBA
	case r < 0x1D00:
		return r >= 0x2E0 && r <= 0x2E4
	case r > 0x1EFF && r < 0x2071, r > 0x2188 && r < 0x2C60, r > 0x2C7F && r < 0xA722,
		r > 0xAB69 && r < 0xFB00, r > 0xFB06 && r < 0xFF21, r > 0xFF5A && r < 0x10780:
		return false
	}
	return unicode.Is(unicode.Latin, r)
}

// latinBase maps the lower-case Latin letters with diacritics, and a few
// letters that have no decomposition, to the ASCII letters phrase rules
// are written with.
var latinBase = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'ø': "o", 'ł': "l", 'đ': "d", 'ħ': "h", 'ŧ': "t", 'æ': "ae", 'œ': "oe", 'ı': "i", 'ȷ': "j"}
	for _, rg := range [][2]rune{{0xC0, 0x24F}, {0x1E00, 0x1EFF}} {
		for r := rg[0]; r <= rg[1]; r++ {
			if !unicode.IsLower(r) {
				continue
			}
			d := norm.NFD.String(string(r))
			if c := d[0]; len(d) > 1 && c >= 'a' && c <= 'z' {
				m[r] = d[:1]
			}
		}
	}
	return m
}()

// Split letters: a run of single letters (or digits), each separated from
// the next by the same separator of one to three characters, is written
// as one word. With a separator that is only spaces the run needs four
// letters ("i g n o r e"), with any other two ("t-o", "s.e.n.d").

// isRunElem reports an ASCII byte that can be a letter of a split run.
func isRunElem(c byte) bool { return isAlnum(c) || c == '@' || c == '$' }

// wordBefore reports whether a letter, digit or mark ends src[:i].
func wordBefore(src string, i int) bool {
	if i == 0 {
		return false
	}
	if c := src[i-1]; c < utf8.RuneSelf {
		return isRunElem(c)
	}
	r, _ := utf8.DecodeLastRuneInString(src[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isSeparator(r rune) bool {
	switch r {
	case ' ', '-', '.', '_', '*', '/', '\\', '+', '~', '=', ',', '·', '•', '‧', '–', '—', '∙', '⋅':
		return true
	}
	return false
}

// runElem returns the end of the split-run element at i (one letter or
// element byte, standing alone), or i when there is none.
func runElem(src string, i int) (end int, letter bool) {
	if i >= len(src) {
		return i, false
	}
	c := src[i]
	var r rune
	n := 1
	if c < utf8.RuneSelf {
		if !isRunElem(c) {
			return i, false
		}
		r = rune(c)
	} else {
		r, n = utf8.DecodeRuneInString(src[i:])
		if !unicode.IsLetter(r) {
			return i, false
		}
	}
	j := i + n
	if j < len(src) {
		// Alone: not followed by another letter, digit or combining mark.
		d := src[j]
		if d < utf8.RuneSelf {
			if isRunElem(d) {
				return i, false
			}
		} else if q, _ := utf8.DecodeRuneInString(src[j:]); unicode.IsLetter(q) || unicode.IsDigit(q) || unicode.IsMark(q) {
			return i, false
		}
	}
	return j, unicode.IsLetter(r)
}

// separatorAt returns the end of a separator of one to three characters at
// i, or i.
func separatorAt(src string, i int) int {
	j := i
	for k := 0; k < 3 && j < len(src); k++ {
		r, n := utf8.DecodeRuneInString(src[j:])
		if !isSeparator(r) {
			break
		}
		j += n
	}
	return j
}

// splitRun joins the split run starting at i, if there is one, and
// returns its end; otherwise it returns i, writes nothing, and returns as
// skip the start of the run's last element: no run starting before it
// can qualify.
func splitRun(b *builder, src string, i int) (end, skip int) {
	e, letter := runElem(src, i)
	if e == i {
		return i, i
	}
	// First pass: measure the run.
	n, letters := 1, 0
	if letter {
		letters++
	}
	sepEnd := separatorAt(src, e)
	if sepEnd == e {
		return i, i
	}
	sep := src[e:sepEnd]
	end, last := e, i
	for p := e; ; {
		if !hasPrefixAt(src, p, sep) {
			break
		}
		q, l := runElem(src, p+len(sep))
		if q == p+len(sep) {
			break
		}
		// The separator must end where the element begins.
		if separatorAt(src, p) != p+len(sep) {
			break
		}
		n++
		if l {
			letters++
		}
		last = p + len(sep)
		end, p = q, q
	}
	spaces := true
	for k := 0; k < len(sep); k++ {
		if sep[k] != ' ' {
			spaces = false
		}
	}
	if letters < 2 || n < 2 || spaces && n < 4 {
		return i, last
	}
	// Second pass: write the elements, drop the separators.
	for p := i; p < end; {
		q, _ := runElem(src, p)
		if r, w := utf8.DecodeRuneInString(src[p:q]); w > 1 {
			foldLatin(b, src, p, r, w)
		}
		if q < end {
			b.replace(q, q+len(sep), "")
		}
		p = q + len(sep)
	}
	return end, end
}

// syllableRun joins a word split into syllables by hyphens, underscores
// or asterisks ("ig-no-re", "in-struc-tions"): three fragments or more of
// one to five ASCII letters each, with one kind of separator, standing
// alone. It returns the end of the word, or i, writes nothing and
// returns as skip the start of the last fragment it read (see splitRun).
// Dots do not count: "www.bbc.co.uk" must stay a host name.
func syllableRun(b *builder, src string, i int) (end, skip int) {
	var sep byte
	n := 0
	end = i
	for p := i; ; {
		skip = p
		q := p
		for q < len(src) && src[q] >= 'a' && src[q] <= 'z' {
			q++
		}
		if q == p || q-p > 5 {
			return i, skip
		}
		n++
		end = q
		if q+1 < len(src) && (src[q] == '-' || src[q] == '_' || src[q] == '*') && (sep == 0 || sep == src[q]) && src[q+1] >= 'a' && src[q+1] <= 'z' {
			sep, p = src[q], q+1
			continue
		}
		break
	}
	if n < 3 || end < len(src) && (isRunByte(src[end]) || src[end] == sep) {
		return i, skip
	}
	for p := i; p < end; p++ {
		if src[p] == sep {
			b.replace(p, p+1, "")
		}
	}
	return end, end
}

// isRunByte reports a byte that continues a word.
func isRunByte(c byte) bool { return isRunElem(c) || c >= utf8.RuneSelf }

func hasPrefixAt(s string, i int, p string) bool {
	return len(s)-i >= len(p) && s[i:i+len(p)] == p
}

// leetLetter is the letter a digit or symbol stands for in leetspeak.
var leetLetter = [256]byte{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '6': 'g', '7': 't', '8': 'b', '9': 'g',
	'@': 'a', '$': 's', '!': 'i', '|': 'i'}

func isLeetWordByte(c byte) bool { return isAlnum(c) || leetLetter[c] != 0 }

// readLeet replaces, in every word that mixes ASCII letters with leetspeak
// digits or symbols, each of them with its letter. It returns s itself when
// nothing changed. A 1, ! or | is read as l where that makes a word the
// sentence rules know ("ru1es", "a11"), else as i; the offsets of those
// read as i are returned, for a second view that reads them as l. The @ of
// an e-mail address stays.
func readLeet(s string) (string, []int) {
	var b []byte
	var ones []int
	for i := 0; i < len(s); {
		if !isLeetWordByte(s[i]) {
			i++
			continue
		}
		j, letters, leet := i, false, false
		for j < len(s) && isLeetWordByte(s[j]) {
			c := s[j]
			letters = letters || c >= 'a' && c <= 'z'
			leet = leet || leetLetter[c] != 0
			j++
		}
		if letters && leet {
			if b == nil {
				b = []byte(s)
			}
			ones = readLeetWord(s, b, i, j, ones)
		}
		i = j
	}
	if b == nil {
		return s, nil
	}
	return string(b), ones
}

// readLeetWord converts the word s[i:j] into b[i:j].
func readLeetWord(s string, b []byte, i, j int, ones []int) []int {
	var amb [4]int
	na := 0
	for k := i; k < j; k++ {
		c := s[k]
		if leetLetter[c] == 0 {
			continue
		}
		switch {
		case c == '@' && isEmailDomain(s, k+1):
			continue
		case (c == '!' || c == '|') && k == j-1:
			// A trailing ! or | ends a sentence or a table cell ("wow!").
			continue
		}
		b[k] = leetLetter[c]
		if c == '1' || c == '!' || c == '|' {
			if na < len(amb) {
				amb[na] = k
			}
			na++
		}
	}
	if na == 0 {
		return ones
	}
	if na <= len(amb) {
		// Try every reading of the ambiguous letters against the words
		// the rules know.
		for mask := 0; mask < 1<<na; mask++ {
			for x := range na {
				if mask&(1<<x) != 0 {
					b[amb[x]] = 'l'
				} else {
					b[amb[x]] = 'i'
				}
			}
			if phraseLexicon[string(b[i:j])] {
				return ones
			}
		}
	}
	for k := i; k < j; k++ {
		if c := s[k]; (c == '1' || c == '!' || c == '|') && b[k] != c {
			b[k] = 'i'
			ones = append(ones, k)
		}
	}
	return ones
}

// isEmailDomain reports whether a domain (letters, digits, hyphens, then a
// dot and a letter) starts at i.
func isEmailDomain(s string, i int) bool {
	j := i
	for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
		j++
	}
	return j > i && j+1 < len(s) && s[j] == '.' && isAlpha(s[j+1])
}

// phraseLexicon holds the words the sentence rules are written with
// (every run of three or more lower-case ASCII letters in their
// expressions), to read an ambiguous leetspeak digit.
var phraseLexicon = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range phraseRules.rules {
		src := r.re.String() + " " + strings.Join(r.leads, " ")
		for i := 0; i < len(src); {
			j := i
			for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
				j++
			}
			// Skip escapes such as \s and \pL.
			if j-i >= 3 && (i == 0 || src[i-1] != '\\') {
				m[src[i:j]] = true
			}
			i = max(j, i+1)
		}
	}
	return m
}()
