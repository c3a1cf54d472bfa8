package analysis

// Stem returns the Porter2 (Snowball English) stem of a normalized token, as
// specified at snowballstem.org/algorithms/english/stemmer.html. Tokens with
// non-ASCII bytes, and tokens of two letters or fewer, are returned unchanged.
func Stem(w string) string {
	if len(w) <= 2 || !isASCII(w) {
		return w
	}
	b := stemBytes([]byte(w))
	if string(b) == w { // no allocation for the comparison
		return w
	}
	return string(b)
}

func isASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			return false
		}
	}
	return true
}

// stemBytes stems w in place (it may grow by one byte) and returns it.
func stemBytes(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c >= 0x80 {
			return w
		}
	}
	if s, ok := porterExceptions[string(w)]; ok {
		return append(w[:0], s...)
	}
	if w[0] == '\'' {
		w = w[1:]
	}
	// Mark consonant y as Y: initial y, and y after a vowel.
	hasY := false
	for i, c := range w {
		if c == 'y' && (i == 0 || isVowel(w[i-1])) {
			w[i] = 'Y'
			hasY = true
		}
	}
	s := stemmer{w: w}
	s.regions()
	s.step0()
	s.step1a()
	if _, ok := porterInvariant1a[string(s.w)]; ok {
		return unY(s.w, hasY)
	}
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return unY(s.w, hasY)
}

func unY(w []byte, hasY bool) []byte {
	if hasY {
		for i, c := range w {
			if c == 'Y' {
				w[i] = 'y'
			}
		}
	}
	return w
}

// porterExceptions are the special forms of the Porter2 definition.
var porterExceptions = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
	"singly": "singl", "sky": "sky", "news": "news", "howe": "howe",
	"atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}

// porterInvariant1a are left as they are after step 1a.
var porterInvariant1a = map[string]struct{}{
	"inning": {}, "outing": {}, "canning": {}, "herring": {}, "earring": {},
	"proceed": {}, "exceed": {}, "succeed": {},
}

type stemmer struct {
	w      []byte
	r1, r2 int
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// regions computes R1 and R2.
func (s *stemmer) regions() {
	w := s.w
	s.r1 = len(w)
	switch {
	case hasPrefix(w, "gener"), hasPrefix(w, "arsen"):
		s.r1 = 5
	case hasPrefix(w, "commun"):
		s.r1 = 6
	default:
		s.r1 = regionAfter(w, 0)
	}
	s.r2 = regionAfter(w, s.r1)
}

// regionAfter returns the index after the first non-vowel following a vowel
// in w[from:], or len(w).
func regionAfter(w []byte, from int) int {
	for i := from + 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

func hasPrefix(w []byte, p string) bool {
	return len(w) >= len(p) && string(w[:len(p)]) == p
}

func hasSuffix(w []byte, x string) bool {
	if len(w) < len(x) {
		return false
	}
	w = w[len(w)-len(x):]
	for i := len(x) - 1; i >= 0; i-- {
		if w[i] != x[i] {
			return false
		}
	}
	return true
}

// longest returns the longest of the suffixes that w ends with, or "".
func longest(w []byte, suffixes []string) string {
	best := ""
	for _, x := range suffixes {
		if len(x) > len(best) && hasSuffix(w, x) {
			best = x
		}
	}
	return best
}

func (s *stemmer) replace(suffix, with string) {
	s.w = append(s.w[:len(s.w)-len(suffix)], with...)
}

func (s *stemmer) inR1(suffix string) bool { return len(s.w)-len(suffix) >= s.r1 }
func (s *stemmer) inR2(suffix string) bool { return len(s.w)-len(suffix) >= s.r2 }

// shortSyllableAt reports whether the word ending at w[:end] ends in a short
// syllable.
func shortSyllableAt(w []byte, end int) bool {
	if end == 2 {
		return isVowel(w[0]) && !isVowel(w[1])
	}
	if end < 3 {
		return false
	}
	c := w[end-1]
	return !isVowel(w[end-3]) && isVowel(w[end-2]) && !isVowel(c) && c != 'w' && c != 'x' && c != 'Y'
}

func (s *stemmer) isShort() bool {
	return s.r1 >= len(s.w) && shortSyllableAt(s.w, len(s.w))
}

func containsVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

var step0Suffixes = []string{"'s'", "'s", "'"}

func (s *stemmer) step0() {
	if x := longest(s.w, step0Suffixes); x != "" {
		s.replace(x, "")
	}
}

var step1aSuffixes = []string{"sses", "ied", "ies", "us", "ss", "s"}

func (s *stemmer) step1a() {
	switch x := longest(s.w, step1aSuffixes); x {
	case "sses":
		s.replace(x, "ss")
	case "ied", "ies":
		if len(s.w) > 4 {
			s.replace(x, "i")
		} else {
			s.replace(x, "ie")
		}
	case "s":
		// Delete if the preceding part has a vowel not right before the s.
		if len(s.w) >= 3 && containsVowel(s.w[:len(s.w)-2]) {
			s.replace(x, "")
		}
	}
}

var step1bSuffixes = []string{"eed", "eedly", "ed", "edly", "ing", "ingly"}

func (s *stemmer) step1b() {
	x := longest(s.w, step1bSuffixes)
	switch x {
	case "":
		return
	case "eed", "eedly":
		if s.inR1(x) {
			s.replace(x, "ee")
		}
		return
	}
	if !containsVowel(s.w[:len(s.w)-len(x)]) {
		return
	}
	s.replace(x, "")
	w := s.w
	switch {
	case hasSuffix(w, "at"), hasSuffix(w, "bl"), hasSuffix(w, "iz"):
		s.w = append(s.w, 'e')
	case len(w) >= 2 && w[len(w)-1] == w[len(w)-2] && isDouble(w[len(w)-1]):
		s.w = w[:len(w)-1]
	case s.isShort():
		s.w = append(s.w, 'e')
	}
}

func isDouble(c byte) bool {
	switch c {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func (s *stemmer) step1c() {
	n := len(s.w)
	if n > 2 && (s.w[n-1] == 'y' || s.w[n-1] == 'Y') && !isVowel(s.w[n-2]) {
		s.w[n-1] = 'i'
	}
}

var step2Suffixes = []string{
	"tional", "enci", "anci", "abli", "entli", "izer", "ization", "ational", "ation", "ator",
	"alism", "aliti", "alli", "fulness", "ousli", "ousness", "iveness", "iviti", "biliti",
	"bli", "ogi", "fulli", "lessli", "li",
}

var step2Map = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous",
	"ousness": "ous", "iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble",
	"fulli": "ful", "lessli": "less",
}

func (s *stemmer) step2() {
	x := longest(s.w, step2Suffixes)
	if x == "" || !s.inR1(x) {
		return
	}
	switch x {
	case "ogi":
		if n := len(s.w) - 3; n > 0 && s.w[n-1] == 'l' {
			s.replace(x, "og")
		}
	case "li":
		if n := len(s.w) - 2; n > 0 && isLiEnding(s.w[n-1]) {
			s.replace(x, "")
		}
	default:
		s.replace(x, step2Map[x])
	}
}

func isLiEnding(c byte) bool {
	switch c {
	case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
		return true
	}
	return false
}

var step3Suffixes = []string{"tional", "ational", "alize", "icate", "iciti", "ical", "ful", "ness", "ative"}

var step3Map = map[string]string{
	"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic",
	"ical": "ic", "ful": "", "ness": "",
}

func (s *stemmer) step3() {
	x := longest(s.w, step3Suffixes)
	if x == "" || !s.inR1(x) {
		return
	}
	if x == "ative" {
		if s.inR2(x) {
			s.replace(x, "")
		}
		return
	}
	s.replace(x, step3Map[x])
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ism", "ate", "iti", "ous", "ive", "ize", "ion",
}

func (s *stemmer) step4() {
	x := longest(s.w, step4Suffixes)
	if x == "" || !s.inR2(x) {
		return
	}
	if x == "ion" {
		if n := len(s.w) - 3; n > 0 && (s.w[n-1] == 's' || s.w[n-1] == 't') {
			s.replace(x, "")
		}
		return
	}
	s.replace(x, "")
}

func (s *stemmer) step5() {
	n := len(s.w)
	switch s.w[n-1] {
	case 'e':
		if s.inR2("e") || (s.inR1("e") && !shortSyllableAt(s.w, n-1)) {
			s.w = s.w[:n-1]
		}
	case 'l':
		if s.inR2("l") && n >= 2 && s.w[n-2] == 'l' {
			s.w = s.w[:n-1]
		}
	}
}
