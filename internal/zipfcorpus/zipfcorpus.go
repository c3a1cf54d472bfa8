// Package zipfcorpus makes bench/speed's end-to-end corpus, which the
// engine's and the index's benchmarks measure too: deterministic memory
// texts of made-up words drawn from a Zipfian vocabulary, as conversation
// turns would be, and queries made of a stored text's first words.
package zipfcorpus

import (
	"math/rand/v2"
	"strings"
)

// Texts returns n texts of 8 to 37 words drawn by a Zipf law (s = 1.1)
// from 5,000 made-up words of 3 to 9 letters; the same n and seed give
// the same texts.
func Texts(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	vocab := make([]string, 5000)
	for i := range vocab {
		var b strings.Builder
		l := 3 + rng.IntN(7)
		for range l {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = b.String()
	}
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	out := make([]string, n)
	for i := range out {
		ws := make([]string, 8+rng.IntN(30))
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		out[i] = strings.Join(ws, " ") + "."
	}
	return out
}

// Queries returns q queries of texts, each the first six words (or all,
// if fewer) of a text drawn at random, the same for the same texts and q:
// a few words of stored texts, so the floor lets results through.
func Queries(texts []string, q int) []string {
	rng := rand.New(rand.NewPCG(9, 9))
	qs := make([]string, q)
	for i := range qs {
		ws := strings.Fields(texts[rng.IntN(len(texts))])
		qs[i] = strings.Join(ws[:min(len(ws), 6)], " ")
	}
	return qs
}
