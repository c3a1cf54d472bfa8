package policy

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"math/rand"
	"os"
	"sort"
	"testing"
)

// go test ./policy -run TestTrainClassifier -train-classifier
// retrains classifier.bin from the tuning corpus. The settings below were
// fixed before the model was first trained and are not tuned on any
// held-out set.
var trainClassifier = flag.Bool("train-classifier", false, "retrain classifier.bin from the tuning corpus")

const (
	trainEpochs = 15
	trainRate   = 0.5
	trainL2     = 1e-6
	trainFolds  = 5
	// trainFPTarget is the share of out-of-fold ordinary text the
	// threshold lets through. It was 0.3 % up to heldout26i; it is 2 %
	// since, chosen by the leave-one-set-out evaluation of the nine
	// held-out sets (RELIABILITY.md): the largest of 0.3, 0.6, 1, 2, 3 and
	// 5 % whose mean share of ordinary memories flagged by the whole
	// detector stays under 1 % (0.75 %; 3 % gave 1.07 %). The out-of-fold
	// ordinary text is mostly the corpus's hard look-alikes, which ordinary
	// memories are not: LoCoMo's lines stay at 0-2 of 3,023 out of fold.
	trainFPTarget = 0.02
	// trainNoCueMargin (log-odds) is how much more a window without a
	// request cue must score. Set with the second feature set, before
	// heldout26e was written, so that the unit tests' cue-less look-alikes
	// ("You are now in the queue; you are now logged in.") stay ordinary.
	trainNoCueMargin = 2
)

// Techniques whose text the rules and the decoding layers, not the
// classifier, are for: markup and encodings.
var notForClassifier = map[string]bool{"markup": true, "base64": true, "hex": true, "rot13": true, "reversed": true, "emoji": true,
	"secret_plain": true, "secret_obfuscated": true}

// The out-of-fold figures of the classifier on the tuning corpus, quoted
// in RELIABILITY.md.
const (
	oofCaught, oofInstructions = 1987, 2233
	oofBenign, oofLoCoMo       = 56, 2
)

// fitFPTarget and fitNoCueMargin, when fitFPTarget is set, replace
// trainFPTarget and trainNoCueMargin (the leave-one-set-out evaluation
// tries other thresholds; the shipped model has the constants).
var fitFPTarget, fitNoCueMargin float64

type trainExample struct {
	feats []uint32
	dense []float64 // dense features (denseFeatures), nil without
	y     float64
	group int  // 0 corpus benign, 1 LoCoMo, 2 instruction-like
	cue   bool // the text holds a request cue (hasRequestCue)
}

func phraseOf(text string) string {
	n := normalize(text)
	pv, _ := phraseView(markupView(n.base))
	return pv.s
}

// denseFeatures, when set, gives an example's dense features (the
// leave-one-set-out evaluation tries them; the shipped model has none).
var denseFeatures func(s string) []float64

func exampleOf(text string, y float64, group int) trainExample {
	var fs []uint32
	pv := phraseOf(text)
	classifierFeatures(pv, func(h uint32) { fs = append(fs, h&(classifierBuckets-1)) })
	x := trainExample{feats: fs, y: y, group: group, cue: hasRequestCue(pv)}
	if denseFeatures != nil {
		x.dense = denseFeatures(pv)
	}
	return x
}

// trainingSet is the tuning corpus: instruction-like attacks (not markup,
// not encoded) against the benign memories and LoCoMo's dev facts and
// turns. No held-out file is read.
func trainingSet(t *testing.T) []trainExample {
	return trainingSetOf(t, tuningSets)
}

// trainingSetOf is trainingSet over the corpus sets named by their
// prefixes, with LoCoMo's dev facts and turns.
func trainingSetOf(t *testing.T, sets []string) []trainExample {
	var out []trainExample
	for _, set := range sets {
		for _, e := range loadCorpus(t, set+"attacks.jsonl") {
			if e.Expect == "instruction" && !notForClassifier[e.Technique] {
				out = append(out, exampleOf(e.Text, 1, 2))
			}
		}
		for _, e := range loadCorpus(t, set+"benign.jsonl") {
			out = append(out, exampleOf(e.Text, 0, 0))
		}
	}
	for _, name := range locomoFiles {
		for _, m := range locomoMemories(t, name) {
			out = append(out, exampleOf(m.Content, 0, 1))
		}
	}
	return out
}

type lrModel struct {
	w    []float64
	v    []float64 // dense weights (linear), or the hidden units' output weights
	bias float64
	// A hidden layer over the dense features (denseHidden units, tanh):
	// hw[k] are unit k's input weights, hc[k] its bias.
	hw [][]float64
	hc []float64
}

// denseHidden is the number of hidden units over the dense features (0:
// the dense features are linear terms of the score).
var denseHidden int

// denseZ is the dense features' term of the score.
func (m *lrModel) denseZ(d []float64, act []float64) float64 {
	var z float64
	if m.hw == nil {
		for j, x := range d {
			z += m.v[j] * x
		}
		return z
	}
	for k, wk := range m.hw {
		a := m.hc[k]
		for j, x := range d {
			a += wk[j] * x
		}
		a = math.Tanh(a)
		if act != nil {
			act[k] = a
		}
		z += m.v[k] * a
	}
	return z
}

func (m *lrModel) z(x trainExample) float64 {
	fs := x.feats
	if len(fs) == 0 {
		return math.Inf(-1)
	}
	var s float64
	for _, h := range fs {
		s += m.w[h]
	}
	z := m.bias + s/math.Sqrt(float64(len(fs)))
	if x.dense != nil {
		z += m.denseZ(x.dense, nil)
	}
	return z
}

func trainLR(xs []trainExample, seed int64) *lrModel {
	m := &lrModel{w: make([]float64, classifierBuckets)}
	g2 := make([]float64, classifierBuckets)
	var gv2, ghc2, act []float64
	var ghw2 [][]float64
	rng := rand.New(rand.NewSource(seed))
	if len(xs) > 0 && xs[0].dense != nil {
		d := len(xs[0].dense)
		if denseHidden == 0 {
			m.v = make([]float64, d)
		} else {
			m.v, m.hc, act, ghc2 = make([]float64, denseHidden), make([]float64, denseHidden), make([]float64, denseHidden), make([]float64, denseHidden)
			for k := 0; k < denseHidden; k++ {
				wk := make([]float64, d)
				for j := range wk {
					wk[j] = rng.NormFloat64() / math.Sqrt(float64(d))
				}
				m.hw = append(m.hw, wk)
				ghw2 = append(ghw2, make([]float64, d))
				m.v[k] = rng.NormFloat64() * 0.1
			}
		}
		gv2 = make([]float64, len(m.v))
	}
	var gb2 float64
	var npos, nneg float64
	for _, x := range xs {
		if x.y == 1 {
			npos++
		} else {
			nneg++
		}
	}
	posWeight := nneg / max(npos, 1)
	order := rng.Perm(len(xs))
	for ep := 0; ep < trainEpochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			x := xs[i]
			p := 1 / (1 + math.Exp(-m.z(x)))
			g := p - x.y
			if x.y == 1 {
				g *= posWeight
			}
			norm := 1 / math.Sqrt(float64(max(len(x.feats), 1)))
			for _, h := range x.feats {
				gh := g*norm + trainL2*m.w[h]
				g2[h] += gh * gh
				m.w[h] -= trainRate * gh / (math.Sqrt(g2[h]) + 1e-8)
			}
			if x.dense != nil && m.hw == nil {
				for j, d := range x.dense {
					gj := g*d + trainL2*m.v[j]
					gv2[j] += gj * gj
					m.v[j] -= trainRate * gj / (math.Sqrt(gv2[j]) + 1e-8)
				}
			} else if x.dense != nil {
				const rate = 0.05
				m.denseZ(x.dense, act)
				for k, a := range act {
					gp := g * m.v[k] * (1 - a*a)
					gu := g*a + trainL2*m.v[k]
					gv2[k] += gu * gu
					m.v[k] -= rate * gu / (math.Sqrt(gv2[k]) + 1e-8)
					ghc2[k] += gp * gp
					m.hc[k] -= rate * gp / (math.Sqrt(ghc2[k]) + 1e-8)
					wk, gk := m.hw[k], ghw2[k]
					for j, d := range x.dense {
						if d == 0 {
							continue
						}
						gj := gp*d + trainL2*wk[j]
						gk[j] += gj * gj
						wk[j] -= rate * gj / (math.Sqrt(gk[j]) + 1e-8)
					}
				}
			}
			gb2 += g * g
			m.bias -= trainRate * g / (math.Sqrt(gb2) + 1e-8)
		}
	}
	return m
}

// quantile returns the q-quantile of v (sorted in place).
func quantile(v []float64, q float64) float64 {
	sort.Float64s(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(len(v)-1, i))]
}

func TestTrainClassifier(t *testing.T) {
	// Training is deterministic and takes seconds: every run retrains,
	// and without -train-classifier the committed classifier.bin must be
	// exactly what the tuning corpus gives, so the corpus and the model
	// cannot drift apart.
	_, b, oof := fitClassifier(t, trainingSet(t))
	// RELIABILITY.md quotes these out-of-fold figures: a change of the
	// corpus, the features or the settings must update it.
	if want := (oofFigures{oofCaught, oofInstructions, oofBenign, oofLoCoMo}); oof != want {
		t.Errorf("out of fold: %d/%d instruction-like, %d benign, %d LoCoMo over the threshold; RELIABILITY.md says %d/%d, %d, %d",
			oof.caught, oof.instructions, oof.benign, oof.locomo, oofCaught, oofInstructions, oofBenign, oofLoCoMo)
	}
	if *trainClassifier {
		if err := os.WriteFile("classifier.bin", b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile("classifier.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, b) {
		t.Fatal("classifier.bin is not what the tuning corpus trains: retrain with go test ./policy -run TestTrainClassifier -train-classifier")
	}
}

// fitClassifier trains the classifier on xs, chooses its thresholds on
// out-of-fold scores, and returns the quantized model and its encoding
// (classifier.bin's bytes; a dense part, when xs has one, is in the model
// only).
func fitClassifier(t *testing.T, xs []trainExample) (*classifierModel, []byte, oofFigures) {
	t.Helper()
	// Out-of-fold scores choose the threshold: the (1-trainFPTarget)
	// quantile of ordinary text, corpus and LoCoMo apart, the higher.
	oof := make([]float64, len(xs))
	for k := 0; k < trainFolds; k++ {
		var tr []trainExample
		for i, x := range xs {
			if i%trainFolds != k {
				tr = append(tr, x)
			}
		}
		m := trainLR(tr, int64(k+1))
		for i, x := range xs {
			if i%trainFolds == k {
				oof[i] = m.z(x)
			}
		}
	}
	// Two thresholds on out-of-fold scores of ordinary text (corpus and
	// LoCoMo apart, the higher): the (1-trainFPTarget) quantile of all of
	// it, and for a text without a request cue the highest score of those
	// texts, at least trainNoCueMargin above the first: no ordinary text
	// without a cue passes out of fold, and one without a cue needs odds
	// e^trainNoCueMargin times higher than one with. What the two let
	// through is a subset of what the first alone does.
	pick := func(noCueOnly bool, q float64) float64 {
		var benign, locomo []float64
		for i, x := range xs {
			if noCueOnly && x.cue {
				continue
			}
			switch x.group {
			case 0:
				benign = append(benign, oof[i])
			case 1:
				locomo = append(locomo, oof[i])
			}
		}
		return max(quantile(benign, q), quantile(locomo, q))
	}
	fpTarget, noCueMargin := trainFPTarget, float64(trainNoCueMargin)
	if fitFPTarget > 0 {
		fpTarget, noCueMargin = fitFPTarget, fitNoCueMargin
	}
	threshold := pick(false, 1-fpTarget)
	thresholdNoCue := max(threshold+noCueMargin, pick(true, 1))
	flagged := func(i int) bool {
		return oof[i] > threshold && (xs[i].cue || oof[i] > thresholdNoCue)
	}
	var tp, pos, fpB, fpL, nB, nL int
	for i, x := range xs {
		switch x.group {
		case 2:
			pos++
			if flagged(i) {
				tp++
			}
		case 0:
			nB++
			if flagged(i) {
				fpB++
			}
		case 1:
			nL++
			if flagged(i) {
				fpL++
			}
		}
	}
	t.Logf("%d examples; out-of-fold at thresholds %.3f (with a request cue) and %.3f (without): instruction-like %d/%d = %.1f%%, benign %d/%d, LoCoMo %d/%d",
		len(xs), threshold, thresholdNoCue, tp, pos, 100*float64(tp)/float64(pos), fpB, nB, fpL, nL)
	figs := oofFigures{tp, pos, fpB, fpL}
	m := trainLR(xs, 99)
	maxAbs := 0.0
	for _, w := range m.w {
		maxAbs = max(maxAbs, math.Abs(w))
	}
	scale := maxAbs / 127
	b := make([]byte, classifierHeader+classifierBuckets)
	binary.LittleEndian.PutUint32(b[0:], math.Float32bits(float32(m.bias)))
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(float32(scale)))
	// A hair above the out-of-fold threshold: scores are compared with >=.
	binary.LittleEndian.PutUint32(b[8:], math.Float32bits(float32(threshold+1e-6)))
	binary.LittleEndian.PutUint32(b[12:], math.Float32bits(float32(thresholdNoCue+1e-6)))
	for i, w := range m.w {
		b[classifierHeader+i] = byte(int8(math.Round(w / scale)))
	}
	cm := loadClassifier(b)
	if m.v != nil {
		df := denseFeatures
		act := make([]float64, len(m.v))
		cm.dense = func(s string) float64 { return m.denseZ(df(s), act) }
	}
	return cm, b, figs
}

// oofFigures are the out-of-fold figures of a training: instruction-like
// entries over the thresholds of all of them, and ordinary corpus memories
// and LoCoMo lines over them.
type oofFigures struct{ caught, instructions, benign, locomo int }
