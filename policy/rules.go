package policy

import (
	"regexp"
	"sort"
	"unicode"
	"unicode/utf8"
)

// tokenRule finds one kind of token or phrase: a literal trigger, then an
// anchored regular expression run on a bounded window starting at the
// trigger (for a sentence rule, after its lead). Bounding the window keeps
// every rule linear in the text, and the trigger keeps the regular
// expression from running at all on text that cannot match.
type tokenRule struct {
	typ      string
	triggers []string
	// fold makes the triggers (written in lower case) match ASCII
	// case-insensitively; the expression then needs (?i) too.
	fold bool
	// wordStart requires the byte before the trigger not to be [A-Za-z0-9_].
	wordStart bool
	re        *regexp.Regexp
	// window is the most bytes the expression may look at; cut, when set,
	// ends the window early at the first byte it accepts (a token cannot
	// contain white space, a value cannot cross a line).
	window int
	cut    *[256]bool
	// near, when set, lists literals one of which must occur in the
	// window: a cheap test before the expression runs.
	near []string
	// quick, when set, is another cheap test at the trigger offset.
	quick func(text string, i int) bool
	// group selects the reported span: 0 the whole match, n > 0 that
	// submatch, -1 the first submatch that matched.
	group int
	// stop, when set, refuses a match followed by a byte in this class: the
	// token would be longer than its format allows.
	stop func(byte) bool
	// valid, when set, checks the reported span [s, e) of text, or the span
	// of submatch check when check > 0.
	valid func(text string, s, e int) bool
	check int
	// extend, when set, returns the end of the reported span given the end
	// of the match (a PEM block runs to its END line).
	extend func(text string, e int) int
	// leads, when set, are the literals a sentence rule starts with,
	// longest first; re then matches what follows the lead, and firsts
	// (see firstPairs) rejects most places where it cannot.
	leads  []string
	firsts []uint16
	// glue, for a rule with leads, refuses a lead that ends inside a word
	// ("negeer" in "negeerde de vorige instructies"), except where the
	// phrase view joined split letters ("ignoreallprevious").
	glue bool
}

// at runs the rule at offset i, where one of its triggers starts; joined
// are the spans of text where split letters were joined. It returns the
// finding and the end of the whole match.
func (r *tokenRule) at(text string, i int, joined []span) (Finding, int, bool) {
	if r.wordStart && i > 0 && isWordByte(text[i-1]) {
		return Finding{}, 0, false
	}
	if r.quick != nil && !r.quick(text, i) {
		return Finding{}, 0, false
	}
	w := min(len(text), i+r.window)
	if r.cut != nil {
		for j := i + 1; j < w; j++ {
			if r.cut[text[j]] {
				w = j
				break
			}
		}
	}
	for w < len(text) && !utf8.RuneStart(text[w]) {
		w--
	}
	win := text[i:w]
	if r.near != nil {
		found := false
		for _, n := range r.near {
			if containsFold(win, n) {
				found = true
				break
			}
		}
		if !found {
			return Finding{}, 0, false
		}
	}
	if r.leads != nil {
		return r.atLeads(text, i, win, joined)
	}
	loc := r.re.FindStringSubmatchIndex(win)
	if loc == nil {
		return Finding{}, 0, false
	}
	s, e := -1, -1
	if r.group >= 0 {
		s, e = loc[2*r.group], loc[2*r.group+1]
	} else {
		for g := 1; 2*g < len(loc); g++ {
			if loc[2*g] >= 0 {
				s, e = loc[2*g], loc[2*g+1]
				break
			}
		}
	}
	if s < 0 || e <= s {
		return Finding{}, 0, false
	}
	s, e = s+i, e+i
	if r.stop != nil && e < len(text) && r.stop(text[e]) {
		return Finding{}, 0, false
	}
	if r.valid != nil {
		vs, ve := s, e
		if r.check > 0 {
			if loc[2*r.check] < 0 {
				return Finding{}, 0, false
			}
			vs, ve = loc[2*r.check]+i, loc[2*r.check+1]+i
		}
		if !r.valid(text, vs, ve) {
			return Finding{}, 0, false
		}
	}
	if r.extend != nil {
		e = r.extend(text, e)
	}
	// The rule is not tried again inside what it reported or matched.
	return Finding{Type: r.typ, Start: s, End: e}, max(i+loc[1], e), true
}

// atLeads runs a sentence rule at offset i with window win: the first
// lead found there, whole, and followed by what the expression wants.
func (r *tokenRule) atLeads(text string, i int, win string, joined []span) (Finding, int, bool) {
	for _, l := range r.leads {
		if !hasPrefixAt(win, 0, l) {
			continue
		}
		le := i + len(l)
		if r.glue && inWord(text, le) && !inSpans(joined, le) || !mayStart(r.firsts, win, len(l)) {
			continue
		}
		if loc := r.re.FindStringIndex(win[len(l):]); loc != nil {
			e := le + loc[1]
			return Finding{Type: r.typ, Start: i, End: e}, e, true
		}
	}
	return Finding{}, 0, false
}

// ruleSet dispatches on the first two bytes of every trigger, so the text
// is read once however many rules and triggers there are.
type ruleSet struct {
	rules []tokenRule
	// single holds the one-byte triggers by their byte. sub[c], when not
	// zero, is one more than the index in pairTab of the table for first
	// byte c, whose entry for the second byte is one more than the index
	// in buckets of the triggers starting with those two bytes (every
	// case variant for folded triggers). Two table reads reject almost
	// every position of ordinary text, and a position that passes
	// compares only the few triggers of its bucket.
	single  [256][]trigger
	sub     [256]uint8
	pairTab [][256]uint16
	buckets []bucket
}

// bucket is the triggers that start with one pair of bytes.
type bucket struct {
	trigs []trigger
	// wordStart is set when every rule of the bucket must start a word, so
	// a position inside a word is skipped at once.
	wordStart bool
	// third has a bit set for the third byte of every trigger (all case
	// variants when folded); short is set when a trigger has two bytes.
	third [4]uint64
	short bool
}

type trigger struct {
	rule int
	lit  string
	fold bool
}

func newRuleSet(rules []tokenRule) *ruleSet {
	rs := &ruleSet{rules: rules}
	for ri, r := range rules {
		for _, lit := range r.triggers {
			t := trigger{ri, lit, r.fold}
			for _, a := range caseVariants(lit[0], r.fold) {
				if len(lit) == 1 {
					rs.single[a] = append(rs.single[a], t)
					continue
				}
				for _, b := range caseVariants(lit[1], r.fold) {
					rs.add(a, b, t)
				}
			}
		}
	}
	return rs
}

func caseVariants(c byte, fold bool) []byte {
	if fold && isAlpha(c) {
		return []byte{c | 0x20, c &^ 0x20}
	}
	return []byte{c}
}

func (rs *ruleSet) add(a, b byte, t trigger) {
	if rs.sub[a] == 0 {
		rs.pairTab = append(rs.pairTab, [256]uint16{})
		rs.sub[a] = uint8(len(rs.pairTab))
	}
	tab := &rs.pairTab[rs.sub[a]-1]
	if tab[b] == 0 {
		rs.buckets = append(rs.buckets, bucket{wordStart: true})
		tab[b] = uint16(len(rs.buckets))
	}
	bk := &rs.buckets[tab[b]-1]
	bk.trigs = append(bk.trigs, t)
	bk.wordStart = bk.wordStart && rs.rules[t.rule].wordStart
	if len(t.lit) == 2 {
		bk.short = true
		return
	}
	for _, c := range caseVariants(t.lit[2], t.fold) {
		bk.third[c/64] |= 1 << (c % 64)
	}
}

// scan runs every rule at every trigger in text. A rule that matched is not
// tried again inside its own match. prio is added to each rule's index to
// rank overlapping hits.
func (rs *ruleSet) scan(text string, prio int, hits []hit) []hit {
	return rs.scanJoined(text, nil, prio, hits)
}

// scanJoined is scan for a phrase view whose joined spans are given.
func (rs *ruleSet) scanJoined(text string, joined []span, prio int, hits []hit) []hit {
	// The offset before which a rule that matched is not tried again. Few
	// rules match in one text, so a short list beats a table to clear.
	var buf [16]ruleEnd
	next := buf[:0]
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s := rs.sub[c]; s != 0 && i+1 < len(text) {
			if k := rs.pairTab[s-1][text[i+1]]; k != 0 {
				bk := &rs.buckets[k-1]
				switch {
				case bk.wordStart && i > 0 && isWordByte(text[i-1]):
				case !bk.short && (i+2 >= len(text) || bk.third[text[i+2]/64]&(1<<(text[i+2]%64)) == 0):
				default:
					hits, next = rs.try(text, i, bk.trigs, next, joined, prio, hits)
				}
			}
		}
		if one := rs.single[c]; one != nil {
			hits, next = rs.try(text, i, one, next, joined, prio, hits)
		}
	}
	return hits
}

// ruleEnd records that a rule is not tried before offset end.
type ruleEnd struct{ rule, end int }

// blocked reports whether rule may not run at offset i.
func blocked(next []ruleEnd, rule, i int) bool {
	for _, n := range next {
		if n.rule == rule {
			return n.end > i
		}
	}
	return false
}

// try runs the rules of the triggers ts that start at offset i.
func (rs *ruleSet) try(text string, i int, ts []trigger, next []ruleEnd, joined []span, prio int, hits []hit) ([]hit, []ruleEnd) {
	for k := range ts {
		t := &ts[k]
		if len(text)-i < len(t.lit) || blocked(next, t.rule, i) {
			continue
		}
		if t.fold {
			if !equalFold(text[i:i+len(t.lit)], t.lit) {
				continue
			}
		} else if text[i:i+len(t.lit)] != t.lit {
			continue
		}
		if f, end, ok := rs.rules[t.rule].at(text, i, joined); ok {
			hits = append(hits, hit{f, prio + t.rule})
			next = setEnd(next, t.rule, end)
		}
	}
	return hits, next
}

func setEnd(next []ruleEnd, rule, end int) []ruleEnd {
	for k := range next {
		if next[k].rule == rule {
			next[k].end = end
			return next
		}
	}
	return append(next, ruleEnd{rule, end})
}

// inWord reports whether offset p is inside a word of an alphabetic
// script: a letter before it and a letter after it. Scripts written
// without spaces (Han, kana) have no such words.
func inWord(text string, p int) bool {
	if p <= 0 || p >= len(text) {
		return false
	}
	a, _ := utf8.DecodeLastRuneInString(text[:p])
	b, _ := utf8.DecodeRuneInString(text[p:])
	return unicode.IsLetter(a) && unicode.IsLetter(b) && !unspaced(a) && !unspaced(b)
}

func unspaced(r rune) bool {
	return r >= 0x2E80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai))
}

// inSpans reports whether p is strictly inside one of the sorted spans.
func inSpans(spans []span, p int) bool {
	k := sort.Search(len(spans), func(i int) bool { return spans[i].e > p })
	return k < len(spans) && spans[k].s < p
}

// equalFold compares s with lower, a lower-case ASCII literal, ignoring
// ASCII case.
func equalFold(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains lower, ignoring ASCII case.
func containsFold(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		if equalFold(s[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

// endOfToken ends the window of a token that cannot contain white space,
// control characters, quotes or angle brackets.
var endOfToken = byteSet(func(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == 0x7f
})

// endOfLine ends the window of a value that cannot cross a line.
var endOfLine = byteSet(func(c byte) bool { return c == '\n' || c == '\r' })

func byteSet(in func(byte) bool) *[256]bool {
	var t [256]bool
	for c := range 256 {
		t[c] = in(byte(c))
	}
	return &t
}
