package policy

import (
	"regexp"
	"unicode/utf8"
)

// tokenRule finds one kind of token or phrase: a literal trigger, then an
// anchored regular expression run on a bounded window starting at the
// trigger. Bounding the window keeps every rule linear in the text, and the
// trigger keeps the regular expression from running at all on text that
// cannot match.
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
}

// at runs the rule at offset i, where one of its triggers starts. It
// returns the finding and the end of the whole match.
func (r *tokenRule) at(text string, i int) (Finding, int, bool) {
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

// ruleSet dispatches on the first byte of every trigger, so the text is
// read once however many rules and triggers there are.
type ruleSet struct {
	rules []tokenRule
	first [256][]trigger
	// pairs has a bit set for every two-byte prefix some trigger can start
	// with (all case variants for folded triggers): one test rejects almost
	// every position of ordinary text.
	pairs [1 << 16 / 64]uint64
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
			c := lit[0]
			rs.first[c] = append(rs.first[c], t)
			if r.fold && isAlpha(c) {
				rs.first[c^0x20] = append(rs.first[c^0x20], t)
			}
			if len(lit) == 1 {
				for d := range 256 {
					rs.setPair(c, byte(d), r.fold)
				}
				continue
			}
			rs.setPair(c, lit[1], r.fold)
		}
	}
	return rs
}

func (rs *ruleSet) setPair(a, b byte, fold bool) {
	for _, x := range []byte{a, a ^ 0x20} {
		for _, y := range []byte{b, b ^ 0x20} {
			if (x == a || fold && isAlpha(a)) && (y == b || fold && isAlpha(b)) {
				k := uint16(x)<<8 | uint16(y)
				rs.pairs[k/64] |= 1 << (k % 64)
			}
		}
	}
}

// scan runs every rule at every trigger in text. A rule that matched is not
// tried again inside its own match. prio is added to each rule's index to
// rank overlapping hits.
func (rs *ruleSet) scan(text string, prio int, hits []hit) []hit {
	var buf [64]int
	next := buf[:0]
	if len(rs.rules) > len(buf) {
		next = make([]int, len(rs.rules))
	} else {
		next = buf[:len(rs.rules)]
	}
	for i := 0; i < len(text); i++ {
		k := uint16(text[i]) << 8
		if i+1 < len(text) {
			k |= uint16(text[i+1])
		}
		if rs.pairs[k/64]&(1<<(k%64)) == 0 && i+1 < len(text) {
			continue
		}
		ts := rs.first[text[i]]
		for k := range ts {
			t := &ts[k]
			if next[t.rule] > i || len(text)-i < len(t.lit) {
				continue
			}
			if t.fold {
				if !equalFold(text[i:i+len(t.lit)], t.lit) {
					continue
				}
			} else if text[i:i+len(t.lit)] != t.lit {
				continue
			}
			if f, end, ok := rs.rules[t.rule].at(text, i); ok {
				hits = append(hits, hit{f, prio + t.rule})
				next[t.rule] = end
			}
		}
	}
	return hits
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
