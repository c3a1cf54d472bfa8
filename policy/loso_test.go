package policy

import (
	"flag"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

// go test ./policy -run TestLeaveOneSetOut -loso -v
// measures how the classifier generalizes to a set it was not trained on:
// for each held-out set of issue 26 (whether since moved into tuning or
// not), it trains on the tuning corpus without that set, and measures the
// set's instruction-like strings held and ordinary memories flagged by the
// whole detector (rules and classifier), for each feature set in
// losoVariants. The rules were fixed against the sets that are now in
// tuning, so the figures overstate the rules; the comparison between
// feature sets is what the evaluation is for.
var loso = flag.Bool("loso", false, "run the leave-one-set-out evaluation of the classifier's feature sets")

// With -loso-strict, each set's model is trained only on the tuning sets
// written before it (corpusOrder): what the classifier could have known
// when the set was written.
// With -loso-variants, only the named feature sets (comma-separated) are
// evaluated.
var losoOnly = flag.String("loso-variants", "", "with -loso, the comma-separated names of the variants to evaluate (default: all)")

var losoStrict = flag.Bool("loso-strict", false, "with -loso, train each set's model only on the tuning sets written before it")

// corpusOrder is the order in which the corpus sets were written, by the
// prefix of their files.
var corpusOrder = []string{"", "tuning26_", "tuning26b_", "heldout26c_", "tuning26d_", "train26e_", "tuning26e_", "train26f_",
	"tuning26f_", "train26g_", "tuning26g_", "train26h_", "tuning26h_", "train26i_", "tuning26i_", "train26j_", "tuning26j_", "tuning26k_", "train26k_", "tuning26l_", "train26l_"}

// losoSets are the held-out sets of issue 26 in the order they were
// written, by the prefix of their files.
var losoSets = []struct{ name, prefix string }{
	{"heldout26", "tuning26_"}, {"heldout26b", "tuning26b_"}, {"heldout26c", "heldout26c_"},
	{"heldout26d", "tuning26d_"}, {"heldout26e", "tuning26e_"}, {"heldout26f", "tuning26f_"},
	{"heldout26g", "tuning26g_"}, {"heldout26h", "tuning26h_"}, {"heldout26i", "tuning26i_"}, {"heldout26j", "tuning26j_"},
	{"heldout26k", "tuning26k_"}, {"heldout26l", "tuning26l_"},
}

// A losoVariant is a feature set: hashed features added to
// classifierFeatures and dense features added to the score.
type losoVariant struct {
	name  string
	extra func(s string, add func(h uint32))
	dense func(s string) []float64
	// hidden is the number of hidden units over the dense features (0:
	// linear terms).
	hidden int
	// fpTarget and noCueMargin, when fpTarget is set, are the thresholds'
	// settings instead of trainFPTarget and trainNoCueMargin.
	fpTarget, noCueMargin float64
}

var losoVariants = []losoVariant{
	{name: "current"},
	{name: "soft cues", extra: softCueFeatures},
	{name: "SIF", dense: sifFeatures},
	{name: "soft+SIF", extra: softCueFeatures, dense: sifFeatures},
	{name: "MLP16", dense: sifCueFeatures, hidden: 16},
	{name: "fp 0.6%", fpTarget: 0.006, noCueMargin: 2},
	{name: "fp 1%", fpTarget: 0.01, noCueMargin: 2},
	{name: "margin 1", fpTarget: 0.003, noCueMargin: 1},
	{name: "fp 0.6% m1", fpTarget: 0.006, noCueMargin: 1},
	{name: "fp 2%", fpTarget: 0.02, noCueMargin: 2},
	{name: "fp 3%", fpTarget: 0.03, noCueMargin: 2},
	{name: "fp 5%", fpTarget: 0.05, noCueMargin: 2},
}

// sifCueFeatures is sifFeatures followed by the cue categories of s, one
// input each: 1 for a lexicon cue, and one input each for a soft cue.
func sifCueFeatures(s string) []float64 {
	d := sifFeatures(s)
	var buf [32]cueMatch
	var hard, soft uint64
	for _, m := range cues.find(s, buf[:0]) {
		hard |= m.cat
	}
	sc := softCues()
	wordTokens(s, func(i int) { soft |= sc[i] })
	for i := range 64 {
		if hard&(1<<i) != 0 {
			d = append(d, 1)
		} else {
			d = append(d, 0)
		}
	}
	for i := range 64 {
		if soft&(1<<i) != 0 {
			d = append(d, 1)
		} else {
			d = append(d, 0)
		}
	}
	return d
}

// wordTokens calls f with the index in the word-vector table of every
// word of s (a phrase view: lower case, accents removed) found there.
func wordTokens(s string, f func(i int)) {
	tb := wordvec.Default()
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if i, ok := tb.Lookup(w); ok {
			f(i)
		}
	}
}

// Soft cues: a word whose vector is near an English single-word lexicon
// entry of a cue category (cosine at least softCueMin, from the embedded
// neighbour table) counts as a soft cue of that category, so that
// "guidance" lends the weight of "instructions" to a sentence the lexicon
// does not know.
const softCueMin = 0.6

var (
	softCueOnce sync.Once
	softCue     map[int]uint64
)

func softCues() map[int]uint64 {
	softCueOnce.Do(func() {
		tb := wordvec.Default()
		softCue = map[int]uint64{}
		for bit := uint64(1); bit != 0; bit <<= 1 {
			for _, w := range cueLexicon[bit] {
				w = strings.TrimSuffix(w, "*")
				if strings.ContainsAny(w, " *'") {
					continue
				}
				i, ok := tb.Lookup(w)
				if !ok {
					continue
				}
				softCue[i] |= bit
				for _, n := range tb.Neighbors(i, wordvec.NeighborsK, softCueMin) {
					softCue[n.Word] |= bit
				}
			}
		}
	})
	return softCue
}

func softCueFeatures(s string, add func(h uint32)) {
	sc := softCues()
	var cats uint64
	wordTokens(s, func(i int) { cats |= sc[i] })
	var buf [32]cueMatch
	var hard uint64
	for _, m := range cues.find(s, buf[:0]) {
		hard |= m.cat
	}
	cats |= hard
	for a := cats; a != 0; a &= a - 1 {
		i := uint32(bits.TrailingZeros64(a))
		for range cueFeatureWeight {
			add(((i + 1) * 0x85ebca77) ^ 0x27d4eb2f)
		}
		for b := a & (a - 1); b != 0; b &= b - 1 {
			j := uint32(bits.TrailingZeros64(b))
			for range cueFeatureWeight {
				add((((i+1)<<8 | (j + 1)) * 0x85ebca77) ^ 0x9e3779b9)
			}
		}
	}
}

// sifFeatures is the smooth-inverse-frequency weighted mean of the word
// vectors of s (Arora, Liang and Ma, 2017: weight a/(a+p(w)), p from the
// word's frequency rank by Zipf's law), scaled to unit length; zero when
// no word of s is in the table.
func sifFeatures(s string) []float64 {
	const a = 1e-3
	h := math.Log(float64(wordvec.DefaultWords)) + 0.5772
	tb := wordvec.Default()
	acc := make([]float64, wordvec.Dim)
	wordTokens(s, func(i int) {
		p := 1 / ((float64(i) + 10) * h)
		tb.AddTo(acc, i, a/(a+p))
	})
	var n float64
	for _, x := range acc {
		n += x * x
	}
	if n > 0 {
		n = math.Sqrt(n)
		for j := range acc {
			acc[j] /= n
		}
	}
	return acc
}

type losoResult struct {
	instr, benign tally
	// alone: what the classifier by itself flags (learnedFlags), the
	// instruction-like strings and the ordinary memories; enMiss: English
	// instruction-like strings the whole detector misses, of all it misses.
	aloneInstr, aloneBenign tally
	enMiss, miss            int
	// locomo: LoCoMo's dev facts and turns the gate flags (Decide, as
	// TestLoCoMoOrdinary runs it) with this model.
	locomo tally
}

// loadLoCoMo reads LoCoMo's dev facts and turns as TestLoCoMoOrdinary
// imports them.
func loadLoCoMo(t *testing.T) []*memgate.Memory {
	t.Helper()
	var out []*memgate.Memory
	for _, name := range locomoFiles {
		out = append(out, locomoMemories(t, name)...)
	}
	return out
}

// learnedFlags reports whether the classifier alone flags text (its
// phrase view, as DetectInstructions reads it).
func learnedFlags(text string) bool {
	return len(classifierHits(&view{s: phraseOf(text)}, 0, nil, false)) > 0
}

// TestLeaveOneSetOut is the evaluation with -loso. Without it, it runs
// the current features on one set only (heldout26g, a held-out set since
// moved into tuning) and fails if leaving the set out did not: the model
// trained without it must hold fewer of its plain instruction-like strings
// than the shipped model, trained with it, does; and what it flags of
// ordinary text must stay within the gate's 1 %.
func TestLeaveOneSetOut(t *testing.T) {
	variants, sets := losoVariants, losoSets
	if *losoOnly != "" {
		names := strings.Split(*losoOnly, ",")
		variants = slices.DeleteFunc(slices.Clone(variants), func(v losoVariant) bool { return !slices.Contains(names, v.name) })
	}
	if !*loso {
		i := slices.IndexFunc(losoSets, func(x struct{ name, prefix string }) bool { return x.name == "heldout26g" })
		variants, sets = losoVariants[:1], losoSets[i:i+1]
	}
	res := runLOSO(t, variants, sets)
	if !*loso {
		r := res[0][0]
		var in tally
		for _, e := range loadCorpus(t, sets[0].prefix+"attacks.jsonl") {
			if e.Expect == "instruction" && !notForClassifier[e.Technique] {
				in.total++
				if learnedFlags(e.Text) {
					in.hit++
				}
			}
		}
		t.Logf("%s: classifier trained without it %d/%d, trained with it %d/%d", sets[0].name, r.aloneInstr.hit, r.aloneInstr.total, in.hit, in.total)
		if r.aloneInstr.total < 50 || r.aloneInstr.hit >= in.hit {
			t.Errorf("%s: the model trained without it holds %d/%d, the one trained with it %d/%d: the set was not left out",
				sets[0].name, r.aloneInstr.hit, r.aloneInstr.total, in.hit, in.total)
		}
		if r.benign.rate() > maxFalsePositiveRatio || r.locomo.rate() > maxLoCoMoFalsePositives || r.locomo.total < 1800 {
			t.Errorf("%s left out: %d/%d ordinary memories, %d/%d LoCoMo lines flagged", sets[0].name, r.benign.hit, r.benign.total, r.locomo.hit, r.locomo.total)
		}
	}
}

// runLOSO trains, for each variant and each set, the classifier on the
// tuning corpus without that set, and measures the set with it; it
// restores the shipped classifier and features, and logs the tables.
func runLOSO(t *testing.T, variants []losoVariant, sets []struct{ name, prefix string }) [][]losoResult {
	t.Helper()
	defer func(c *classifierModel) { classifier = c }(classifier)
	defer func() { classifierExtraFeatures, denseFeatures, denseHidden = nil, nil, 0 }()
	defer func() { fitFPTarget, fitNoCueMargin = 0, 0 }()
	res := make([][]losoResult, len(variants))
	locomo := loadLoCoMo(t)
	cfg := Default()
	for vi, v := range variants {
		classifierExtraFeatures, denseFeatures, denseHidden = v.extra, v.dense, v.hidden
		fitFPTarget, fitNoCueMargin = v.fpTarget, v.noCueMargin
		for _, x := range sets {
			var train []string
			for _, s := range tuningSets {
				if s != x.prefix && (!*losoStrict || slices.Index(corpusOrder, s) < slices.Index(corpusOrder, x.prefix)) {
					train = append(train, s)
				}
			}
			m, _, _ := fitClassifier(t, trainingSetOf(t, train))
			classifier = m
			var r losoResult
			for _, e := range loadCorpus(t, x.prefix+"attacks.jsonl") {
				if e.Expect != "instruction" {
					continue
				}
				r.instr.total++
				if len(DetectInstructions(e.Text)) > 0 {
					r.instr.hit++
				} else {
					r.miss++
					if e.Lang == "en" {
						r.enMiss++
					}
				}
				if !notForClassifier[e.Technique] {
					r.aloneInstr.total++
					if learnedFlags(e.Text) {
						r.aloneInstr.hit++
					}
				}
			}
			for _, e := range loadCorpus(t, x.prefix+"benign.jsonl") {
				r.benign.total++
				if len(DetectInstructions(e.Text))+len(DetectSecrets(e.Text)) > 0 {
					r.benign.hit++
				}
				r.aloneBenign.total++
				if learnedFlags(e.Text) {
					r.aloneBenign.hit++
				}
			}
			for _, m := range locomo {
				r.locomo.total++
				if len(cfg.Decide(m).Findings) > 0 {
					r.locomo.hit++
				}
			}
			res[vi] = append(res[vi], r)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s", "set")
	for _, v := range variants {
		fmt.Fprintf(&b, " | %-24s", v.name+" held / flagged")
	}
	b.WriteString("\n")
	means := make([][2]float64, len(variants))
	for si, x := range sets {
		fmt.Fprintf(&b, "%-12s", x.name)
		for vi := range variants {
			r := res[vi][si]
			fmt.Fprintf(&b, " | %3d/%-3d %5.1f%% %5.2f%%  ", r.instr.hit, r.instr.total, 100*r.instr.rate(), 100*r.benign.rate())
			means[vi][0] += r.instr.rate() / float64(len(sets))
			means[vi][1] += r.benign.rate() / float64(len(sets))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-12s", "mean")
	for vi := range variants {
		fmt.Fprintf(&b, " | %13.1f%% %5.2f%%  ", 100*means[vi][0], 100*means[vi][1])
	}
	t.Log("leave-one-set-out, whole detector: instruction-like held / ordinary flagged:\n" + b.String())
	b.Reset()
	fmt.Fprintf(&b, "%-12s", "set")
	for _, v := range variants {
		fmt.Fprintf(&b, " | %-24s", v.name)
	}
	b.WriteString("\n")
	means = make([][2]float64, len(variants))
	for si, x := range sets {
		fmt.Fprintf(&b, "%-12s", x.name)
		for vi := range variants {
			r := res[vi][si]
			fmt.Fprintf(&b, " | %3d/%-3d %5.1f%% %5.2f%%  ", r.aloneInstr.hit, r.aloneInstr.total, 100*r.aloneInstr.rate(), 100*r.aloneBenign.rate())
			means[vi][0] += r.aloneInstr.rate() / float64(len(sets))
			means[vi][1] += r.aloneBenign.rate() / float64(len(sets))
		}
		fmt.Fprintf(&b, " | misses %d, English %d\n", res[0][si].miss, res[0][si].enMiss)
	}
	fmt.Fprintf(&b, "%-12s", "mean")
	for vi := range variants {
		fmt.Fprintf(&b, " | %13.1f%% %5.2f%%  ", 100*means[vi][0], 100*means[vi][1])
	}
	t.Log("leave-one-set-out, classifier alone (plain instruction-like text held / ordinary flagged):\n" + b.String())
	b.Reset()
	for vi, v := range variants {
		worst := 0
		for _, r := range res[vi] {
			worst = max(worst, r.locomo.hit)
		}
		fmt.Fprintf(&b, "  %-10s at most %d of %d flagged (of the %d models)\n", v.name, worst, res[vi][0].locomo.total, len(sets))
	}
	t.Log("LoCoMo dev facts and turns (training text of every model):\n" + b.String())
	return res
}

// BenchmarkClassifierVariants measures what each feature set of
// variants costs the gate on a 200-byte ordinary memory (Decide, as
// BenchmarkDecide/200B): the features are computed and scored with zero
// dense weights, which cost what trained ones do.
func BenchmarkClassifierVariants(b *testing.B) {
	defer func(c *classifierModel) { classifier = c }(classifier)
	defer func() { classifierExtraFeatures = nil }()
	cfg := Default()
	typical := mem(memgate.SourceAssistant, memgate.KindFact, "Caroline went to the LGBTQ support group on 7 May 2023 "+
		"and told Melanie it gave her the courage to apply for the counselling course; she starts in September and wants "+
		"to volunteer.")
	base := *classifier
	for _, v := range losoVariants {
		m := base
		if v.dense != nil {
			lm := &lrModel{}
			n := len(v.dense("a"))
			if v.hidden == 0 {
				lm.v = make([]float64, n)
			} else {
				lm.v, lm.hc = make([]float64, v.hidden), make([]float64, v.hidden)
				for range v.hidden {
					lm.hw = append(lm.hw, make([]float64, n))
				}
			}
			df, act := v.dense, make([]float64, len(lm.v))
			m.dense = func(s string) float64 { return lm.denseZ(df(s), act) }
		}
		classifier, classifierExtraFeatures = &m, v.extra
		cfg.Decide(typical) // the word vectors are decoded on first use
		b.Run(strings.ReplaceAll(v.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(typical.Content)))
			b.ReportAllocs()
			for b.Loop() {
				cfg.Decide(typical)
			}
		})
	}
}
