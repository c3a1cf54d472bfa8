package policy

import (
	_ "embed"
	"encoding/binary"
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// The learned detector: a logistic regression over hashed features of the
// phrase view (character n-grams, words, word pairs, the first word, the
// cue categories of the rules' lexicon, mixed scripts; see
// classifierFeatures), trained on the labelled corpus (instruction-like
// entries against ordinary memories and the LoCoMo dev conversations; see
// classifier_train_test.go, which writes classifier.bin). It reports
// learned_instruction for a sentence window the rules did not catch whose
// score passes the thresholds chosen in training, so that a new phrasing
// of a known kind of request is caught without a lexicon entry for it. The
// rules run first; the classifier only adds. It is deterministic, does not
// allocate, and reads each byte of a window a bounded number of times.

//go:embed classifier.bin
var classifierBlob []byte

const (
	classifierBits    = 18
	classifierBuckets = 1 << classifierBits
	// classifierWindow bounds the text one score reads: longer text is
	// scored by sentences grouped up to this many bytes.
	classifierWindow = 400
)

// classifierModel is the trained model: weights quantized to int8 with a
// scale, and two thresholds chosen in training on out-of-fold scores, each
// letting through at most the same small share of ordinary text: one for a
// window that holds a request cue (hasRequestCue) and a higher one for a
// window without.
type classifierModel struct {
	bias, scale, threshold, thresholdNoCue float32
	w                                      []int8
	// dense, when set, adds a term to the score (the leave-one-set-out
	// evaluation tries dense features with it; the shipped model has none).
	dense func(s string) float64
}

// classifierExtraFeatures, when set, adds features to classifierFeatures
// (the leave-one-set-out evaluation tries feature sets with it; nil in the
// shipped detector).
var classifierExtraFeatures func(s string, add func(h uint32))

// classifierHeader is the size of the blob's header: bias, scale and the
// two thresholds as little-endian float32.
const classifierHeader = 16

var classifier = loadClassifier(classifierBlob)

// useClassifier turns the learned detector on (tests may turn it off).
var useClassifier = true

func loadClassifier(b []byte) *classifierModel {
	if len(b) != classifierHeader+classifierBuckets {
		return nil
	}
	f := func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[i:])) }
	m := &classifierModel{bias: f(0), scale: f(4), threshold: f(8), thresholdNoCue: f(12), w: make([]int8, classifierBuckets)}
	for i := range m.w {
		m.w[i] = int8(b[classifierHeader+i])
	}
	return m
}

// classifierFeatures calls add with the hash of every feature of s (a
// phrase view):
//   - character 3-, 4- and 5-grams of its letters and digits (other runes
//     read as one space), which carry a phrasing across inflections and
//     scripts written without spaces;
//   - words, and pairs of adjacent words;
//   - the first word, which is the verb of an imperative sentence;
//   - the cue categories of the rules' lexicon (cues.go) found in s, alone
//     and in pairs: "a word for the model" with "a word for a later
//     session", whatever the language, so that what the lexicon knows in
//     one language lends its weight to a sentence in another;
//   - the scripts s mixes (Latin letters inside another script).
func classifierFeatures(s string, add func(h uint32)) {
	var rs [classifierWindow + 2]rune
	n := 0
	rs[n] = ' '
	n++
	scripts := 0
	for _, r := range s {
		if n >= len(rs)-1 {
			break
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			r = ' '
		} else if unicode.IsLetter(r) {
			scripts |= scriptClass(r)
		}
		if r == ' ' && rs[n-1] == ' ' {
			continue
		}
		rs[n] = unicode.ToLower(r)
		n++
	}
	if rs[n-1] != ' ' {
		rs[n] = ' '
		n++
	}
	const prime = 16777619
	for k := 3; k <= 5; k++ {
		for i := 0; i+k <= n; i++ {
			h := uint32(2166136261) ^ uint32(k)
			for _, r := range rs[i : i+k] {
				h = (h ^ uint32(r)) * prime
			}
			add(h)
		}
	}
	// Words, word pairs (the previous word's hash and this one's) and the
	// first word.
	var prev, cur uint32 = 0, 2166136261
	inWord, words := false, 0
	for _, r := range rs[:n] {
		if r == ' ' {
			if inWord {
				for range wordFeatureWeight {
					add((cur ^ 0x5bd1e995) * prime)
				}
				if prev != 0 {
					add((prev*31 ^ cur) * prime)
				} else {
					add((cur ^ 0x27d4eb2f) * prime)
				}
				words++
				prev, cur, inWord = cur, 2166136261, false
			}
			continue
		}
		cur = (cur ^ uint32(r)) * prime
		inWord = true
	}
	if scripts&(scripts-1) != 0 {
		add((uint32(scripts) ^ 0x85ebca6b) * prime)
	}
	var buf [32]cueMatch
	var cats uint64
	for _, m := range cues.find(s, buf[:0]) {
		cats |= m.cat
	}
	for a := cats; a != 0; a &= a - 1 {
		i := uint32(bits.TrailingZeros64(a))
		for range cueFeatureWeight {
			add(((i + 1) * 0x9e3779b1) ^ 0xc2b2ae35)
		}
		for b := a & (a - 1); b != 0; b &= b - 1 {
			j := uint32(bits.TrailingZeros64(b))
			for range cueFeatureWeight {
				add((((i+1)<<8 | (j + 1)) * 0x9e3779b1) ^ 0x165667b1)
			}
		}
	}
	if classifierExtraFeatures != nil {
		classifierExtraFeatures(s, add)
	}
}

// cueFeatureWeight and wordFeatureWeight are how many times a cue
// feature and a word count: the few language-independent features and
// the words weigh against hundreds of n-grams. Chosen on out-of-fold
// figures of the tuning corpus (go test ./policy -run TestTrainClassifier
// -v: 74.2 % of instruction-like text with 1 and 1, 81.1 % with 3 and 1,
// 82.0 % with 3 and 2, at the same share of ordinary text).
const (
	cueFeatureWeight  = 3
	wordFeatureWeight = 2
)

// scriptClass sorts a letter into a coarse script for the mixed-script
// feature.
func scriptClass(r rune) int {
	switch {
	case r < 0x250:
		return 1
	case r >= 0x370 && r < 0x530:
		return 2 // Greek, Cyrillic, Armenian
	case r >= 0x590 && r < 0x900:
		return 4 // Hebrew, Arabic
	case r >= 0x900 && r < 0xE00:
		return 8 // Indic
	case r >= 0x2E80:
		return 16 // Han, kana, Hangul, fullwidth
	}
	return 32
}

// score returns the model's log-odds that s is instruction-like.
func (m *classifierModel) score(s string) float64 {
	var sum float64
	var count int
	classifierFeatures(s, func(h uint32) {
		sum += float64(m.w[h&(classifierBuckets-1)])
		count++
	})
	if count == 0 {
		return math.Inf(-1)
	}
	z := float64(m.bias) + float64(m.scale)*sum/math.Sqrt(float64(count))
	if m.dense != nil {
		z += m.dense(s)
	}
	return z
}

// requestCues are the cue categories of which a sentence must hold one for
// the classifier's lower threshold to apply: words about the model, its
// instructions, what it may do, or hiding and sending. "You are now a
// member!" scores like a persona switch but holds none of them; a window
// without one must pass the higher thresholdNoCue, since the lexicon
// cannot know every word of every language.
const requestCues = cueIgnore | cueGuidance | cueVoid | cueAI | cueReader | cueAddress | cueAddressWeak | cuePersona |
	cueCharacter | cueAuthority | cueGrant | cueRisky | cueNoAsk | cueConceal | cueMemRef | cueOverride | cueSafety |
	cueStanding | cueOperator | cueSend | cueUser | cueRuleGiver | cueStored

func hasRequestCue(s string) bool {
	var buf [32]cueMatch
	for _, m := range cues.find(s, buf[:0]) {
		if m.cat&requestCues != 0 {
			return true
		}
	}
	return false
}

// prose reports text long enough to be read as a sentence: five words, or
// ten letters of a script written without spaces. Identifiers, metadata
// keys and labels are left to the rules.
func prose(s string) bool {
	words, inWord, unspaced := 0, false, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				words++
			}
			inWord = true
			if r >= 0x2E80 && !(r >= 0xAC00 && r <= 0xD7AF) {
				unspaced++
			}
		default:
			inWord = false
		}
	}
	return words >= 5 || unspaced >= 10
}

// classifierHits scores the phrase view pv.s in windows of sentences and
// appends a learned_instruction hit for each window over the threshold
// that no earlier hit overlaps. Text that was decoded from base64, hex,
// rot13 or reversed (decoded) was hidden from whoever reads the memory:
// the lower threshold applies to it without a request cue, which only
// spares ordinary text ("You are now a member!") that nobody encodes.
func classifierHits(pv *view, prio int, hits []hit, decoded bool) []hit {
	m := classifier
	if m == nil {
		return hits
	}
	s := pv.s
	if !prose(s) {
		return hits
	}
	start := 0
	flush := func(a, b int) {
		if b <= a {
			return
		}
		if z := m.score(s[a:b]); z < float64(m.threshold) || z < float64(m.thresholdNoCue) && !decoded && !hasRequestCue(s[a:b]) {
			return
		}
		s0, e0 := pv.origin(a, b)
		for _, h := range hits {
			if h.Start < e0 && s0 < h.End {
				return
			}
		}
		hits = append(hits, hit{Finding{Type: InstructionLearned, Start: s0, End: e0}, prio})
	}
	last := 0 // end of the last sentence in the window
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if !sentenceEnd(s, i-n, r, n) && i < len(s) {
			continue
		}
		if i-start > classifierWindow && last > start {
			flush(start, last)
			start = last
		}
		last = i
	}
	for start < len(s) {
		end := min(len(s), start+classifierWindow)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		flush(start, end)
		start = end
	}
	return hits
}
