package lexicon_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memgate/memgate/lexicon"
)

// Tokens of the kind recall looks up: frequent words, inflected forms,
// multiword lemmas and misses.
var benchTokens = []string{"dog", "allergies", "children", "cello", "portuguese", "ate", "glasses", "ice cream",
	"musical instrument", "xyzzyq", "yesterday", "running", "better", "husband", "marathons", "qwertyuiop"}

func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w, _ := lexicon.Lookup(benchTokens[i%len(benchTokens)])
		sink += int(w)
	}
}

func BenchmarkBaseForms(b *testing.B) {
	dst := make([]lexicon.Word, 0, 16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tok := benchTokens[i%len(benchTokens)]
		for pos := lexicon.Noun; pos <= lexicon.Adv; pos++ {
			dst = lexicon.BaseForms(dst[:0], tok, pos)
			sink += len(dst)
		}
	}
}

// Iterating a synset's hypernyms: from every noun sense of a word to the
// root, the hypernyms and instance hypernyms of each synset on the way
// (the first of each).
func BenchmarkHypernymChain(b *testing.B) {
	var starts []lexicon.Synset
	for _, l := range []string{"cello", "collie", "penicillin", "portuguese", "car", "husband"} {
		for _, s := range lexicon.Senses(word(b, l), lexicon.Noun) {
			starts = append(starts, s)
		}
	}
	b.ReportAllocs()
	steps := 0
	for i := 0; b.Loop(); i++ {
		s := starts[i%len(starts)]
		for s != 0 {
			next := lexicon.Synset(0)
			for _, r := range []lexicon.Relation{lexicon.Hypernym, lexicon.InstanceHypernym} {
				for h := range s.Pointers(r) {
					if next == 0 {
						next = h
					}
				}
			}
			s = next
			steps++
		}
	}
	b.ReportMetric(float64(steps)/float64(b.N), "hops/op")
}

func BenchmarkHyponyms(b *testing.B) {
	s := synset(b, "musical_instrument.n.01")
	b.ReportAllocs()
	for b.Loop() {
		for h := range s.Pointers(lexicon.Hyponym) {
			sink += int(h)
		}
	}
}

// The hyponym and instance hyponym closure of musical_instrument.n.01 to
// depth 4, breadth first, with the caller's reused buffers.
func BenchmarkClosure(b *testing.B) {
	root := synset(b, "musical_instrument.n.01")
	seen := make([]uint32, lexicon.NumSynsets()+1) // stamp per synset
	level, next := make([]lexicon.Synset, 0, 256), make([]lexicon.Synset, 0, 256)
	stamp := uint32(0)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		stamp++
		seen[root] = stamp
		level = append(level[:0], root)
		n = 0
		for depth := 0; depth < 4 && len(level) > 0; depth++ {
			next = next[:0]
			for _, s := range level {
				for _, r := range []lexicon.Relation{lexicon.Hyponym, lexicon.InstanceHyponym} {
					for c := range s.Pointers(r) {
						if seen[c] != stamp {
							seen[c] = stamp
							next = append(next, c)
						}
					}
				}
			}
			n += len(next)
			level, next = next, level
		}
	}
	b.ReportMetric(float64(n), "synsets")
}

// Every lemma, in a shuffled order: lookups that miss the CPU caches.
func BenchmarkLookupAll(b *testing.B) {
	all := make([]string, 0, lexicon.NumWords())
	for w := lexicon.Word(1); int(w) <= lexicon.NumWords(); w++ {
		all = append(all, strings.ReplaceAll(w.String(), "_", " "))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w, _ := lexicon.Lookup(all[i%len(all)])
		sink += int(w)
	}
}

// The definitions of every sense of the benchmark tokens that are lemmas.
func BenchmarkDefinition(b *testing.B) {
	var syns []lexicon.Synset
	for _, tok := range benchTokens {
		if w, ok := lexicon.Lookup(tok); ok {
			for pos := lexicon.Noun; pos <= lexicon.Adv; pos++ {
				for _, s := range lexicon.Senses(w, pos) {
					syns = append(syns, s)
				}
			}
		}
	}
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		for w := range syns[i%len(syns)].Definition() {
			sink += int(w)
			n++
		}
	}
	b.ReportMetric(float64(n)/float64(b.N), "words/op")
}

// The synsets a word is in the definition of: a specific word and the
// most general ones.
func BenchmarkDefinedBy(b *testing.B) {
	for _, lemma := range []string{"meat", "person", "use"} {
		w := word(b, lemma)
		b.Run(lemma, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for s := range lexicon.DefinedBy(w) {
					sink += int(s)
				}
			}
			b.ReportMetric(float64(lexicon.DefinedByCount(w)), "synsets")
		})
	}
}

func BenchmarkInflections(b *testing.B) {
	var ws []lexicon.Word
	for _, l := range []string{"eat", "go", "child", "mouse", "dog", "be", "good", "run"} {
		ws = append(ws, word(b, l))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for pos := lexicon.Noun; pos <= lexicon.Adv; pos++ {
			for f := range lexicon.Inflections(ws[i%len(ws)], pos) {
				sink += len(f)
			}
		}
	}
}
