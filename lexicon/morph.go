package lexicon

// WordNet's detachment rules (morph.c's sufx and addr tables), per POS: a
// suffix and what replaces it, tried in this order.
var rules = [...][]struct{ suffix, ending string }{
	Noun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	Adv:  nil, // adverbs have only their exception list
}

// BaseForms appends to dst the lemmas of pos that token may be an inflected
// form of, as WordNet's morphy finds them, and returns the extended slice:
//
//   - first the token itself, when it is a lemma of pos ("glasses");
//   - then, when the token is in pos's exception list (adj.exc, adv.exc,
//     noun.exc, verb.exc: "children", "ate", "went", "better"), the bases
//     the list gives that are lemmas of pos, and nothing more: an exception
//     keeps the rules off the form, even one none of whose bases is a
//     lemma (adj.exc lists "archer archer" so that archer is no form of
//     arch);
//   - otherwise the lemmas of pos that WordNet's detachment rules make of
//     it, each rule once, in morph.c's order ("allergies" → allergy,
//     "glasses" → glass, "kids" → kid): nouns ending in "ss" or of two
//     letters or fewer have none, a noun ending in "ful" has the rules
//     applied before the "ful" ("boxesful" → boxful), adverbs have only
//     their exception list.
//
// Unlike WordNet's morphy it returns every base form found rather than the
// first (as NLTK's does), and it does not take a multiword token apart: a
// rule applies to the end of the whole token ("ice creams" → ice_cream),
// and the exception lists hold the rest ("attorneys general"). The token is
// normalized as Lookup does. No Word appears twice among those appended;
// dst is not searched. A token that is nothing of pos appends nothing. It
// allocates nothing when dst has room.
func BaseForms(dst []Word, token string, pos POS) []Word {
	if pos < Noun || pos > Adv {
		return dst
	}
	var buf, cand [maxLemma + 8]byte
	k, ok := normalize(buf[:0], token)
	if !ok {
		return dst
	}
	start := len(dst)
	if w := find(k); w != 0 && HasPOS(w, pos) {
		dst = append(dst, w)
	}
	if lo, hi, ok := exception(k, pos); ok {
		for p := lo; p < hi; p += 3 {
			dst = appendNew(dst, start, Word(u24(p)))
		}
		return dst
	}
	stem, end := k, ""
	if pos == Noun {
		if hasSuffix(k, "ful") {
			stem, end = k[:len(k)-3], "ful"
		} else if hasSuffix(k, "ss") || len(k) <= 2 {
			return dst
		}
	}
	for _, r := range rules[pos] {
		if !hasSuffix(stem, r.suffix) {
			continue
		}
		c := append(append(append(cand[:0], stem[:len(stem)-len(r.suffix)]...), r.ending...), end...)
		if len(c) == 0 || string(c) == string(k) {
			continue
		}
		if w := find(c); w != 0 && HasPOS(w, pos) {
			dst = appendNew(dst, start, w)
		}
	}
	return dst
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// appendNew appends w to dst unless dst[start:] has it.
func appendNew(dst []Word, start int, w Word) []Word {
	for _, x := range dst[start:] {
		if x == w {
			return dst
		}
	}
	return append(dst, w)
}

// exception returns the byte range of the base words of k in pos's
// exception list, and whether the list has k.
func exception(k []byte, pos POS) (lo, hi int, ok bool) {
	i, j := exc[pos-1], exc[pos]
	for i < j {
		h := int(uint(i+j) >> 1)
		if excForm(h) < string(k) {
			i = h + 1
		} else {
			j = h
		}
	}
	if i == exc[pos] || excForm(i) != string(k) {
		return 0, 0, false
	}
	p := secExcOff + 3*i
	lo, hi = secExcRec+u24(p), secExcRec+u24(p+3)
	return lo + 1 + int(data[lo]), hi, true
}

// excForm returns the form of exception i.
func excForm(i int) string {
	lo := secExcRec + u24(secExcOff+3*i)
	return data[lo+1 : lo+1+int(data[lo])]
}
