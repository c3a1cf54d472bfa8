package policy

import (
	_ "embed"
	"encoding/binary"
	"math"
	"unicode"
	"unicode/utf8"
)

// The learned detector: a logistic regression over hashed character
// n-grams and word pairs of the phrase view, trained on the labelled
// corpus (instruction-like entries against ordinary memories and the
// LoCoMo dev conversations; see classifier_train_test.go, which writes
// classifier.bin). It reports learned_instruction for a sentence the
// rules did not catch whose score passes the threshold chosen in
// training, so that a new phrasing of a known kind of request is caught
// without a lexicon entry for it. The rules run first; the classifier
// only adds.

//go:embed classifier.bin
var classifierBlob []byte

const (
	classifierBits    = 18
	classifierBuckets = 1 << classifierBits
	// classifierWindow bounds the text one score reads: longer text is
	// scored by sentences grouped up to this many bytes.
	classifierWindow = 400
)

type classifierModel struct {
	bias, scale, threshold float32
	w                      []int8
}

var classifier = loadClassifier(classifierBlob)

// useClassifier turns the learned detector on (tests may turn it off).
var useClassifier = true

func loadClassifier(b []byte) *classifierModel {
	if len(b) != 12+classifierBuckets {
		return nil
	}
	f := func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[i:])) }
	m := &classifierModel{bias: f(0), scale: f(4), threshold: f(8), w: make([]int8, classifierBuckets)}
	for i := range m.w {
		m.w[i] = int8(b[12+i])
	}
	return m
}

// classifierFeatures calls add with the hash of every feature of s (a
// phrase view): character 3-, 4- and 5-grams of its letters and digits
// (other runes read as one space), and pairs of adjacent words.
func classifierFeatures(s string, add func(h uint32)) {
	var rs [classifierWindow + 2]rune
	n := 0
	rs[n] = ' '
	n++
	for _, r := range s {
		if n >= len(rs)-1 {
			break
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			r = ' '
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
	// Word pairs: hash of the previous word and this one.
	var prev, cur uint32 = 0, 2166136261
	inWord := false
	for _, r := range rs[:n] {
		if r == ' ' {
			if inWord {
				if prev != 0 {
					add((prev*31 ^ cur) * prime)
				}
				prev, cur, inWord = cur, 2166136261, false
			}
			continue
		}
		cur = (cur ^ uint32(r)) * prime
		inWord = true
	}
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
	return float64(m.bias) + float64(m.scale)*sum/math.Sqrt(float64(count))
}

// requestCues are the cue categories of which a sentence must hold one for
// the classifier's score to count: words about the model, its
// instructions, what it may do, or hiding and sending. "You are now a
// member!" scores like a persona switch but holds none of them.
const requestCues = cueIgnore | cueGuidance | cueVoid | cueAI | cueReader | cueAddress | cueAddressWeak | cuePersona |
	cueCharacter | cueAuthority | cueGrant | cueRisky | cueNoAsk | cueConceal | cueMemRef | cueOverride | cueSafety |
	cueStanding | cueOperator | cueSend | cueUser

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
// that no earlier hit overlaps.
func classifierHits(pv *view, prio int, hits []hit) []hit {
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
		if m.score(s[a:b]) < float64(m.threshold) || !hasRequestCue(s[a:b]) {
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
