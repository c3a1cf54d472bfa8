// Package builtin is memgate's offline embedder: it turns text into a
// fixed-dimension vector with no network, no model download and no API
// key, so memgate recalls well out of the box. It has two models.
//
// builtin/hybrid-v2 (Model, the default) relates words by meaning as well
// as by form. Its vector is the concatenation of two unit parts, weighted
// so that its cosine is (1 − SemanticShare)·lexical + SemanticShare·semantic:
//
//   - the lexical part, builtin/lexical-v1's vector (below);
//   - the semantic part: the smooth-inverse-frequency (SIF) weighted sum
//     of the GloVe vectors of the text's content words (package wordvec:
//     40,000 words, 100 dimensions, post-processed and quantized), each
//     taken as its difference from the typical word (the table's mean word,
//     weighted by frequency and SIF weight), so that texts share no
//     direction merely for being English. A word's weight is a/(a + p(w)),
//     with p(w) its frequency estimated from its rank r in the table (Zipf:
//     p ∝ 1/(r + RankOffset)) and a = SIFA, so frequent words count less.
//     Words outside the table add nothing; a text with none has a zero
//     semantic part and its vector is its lexical part alone.
//
// builtin/lexical-v1 (LexicalModel) hashes lexical features only. The
// features of a text, all taken from package analysis so that the embedder
// and the BM25 index see the same words, are:
//
//   - every content word's Porter2 stem (stopwords are left out);
//   - every pair of adjacent content stems (word bigrams, for phrases);
//   - the character 3-, 4- and 5-grams of every content word, with word
//     boundary marks ("<pa", "pai", ..., "ng>"), so that morphology the
//     stemmer misses and typos ("educaton", "persue") still overlap.
//
// Each feature's count is weighted sublinearly (1 + ln tf) and by its
// family's weight, and added with a hash-derived sign into one of
// LexicalDim buckets (signed feature hashing: collisions cancel on average
// instead of inflating similarity). The vector is then L2-normalized, so
// cosine similarity is the dot product. A text without any feature (only
// punctuation or stopwords) embeds as a fixed "empty" feature: the vector
// is never zero.
//
// Embedding a 200-byte text takes about 20 µs with Model and 15 µs with
// LexicalModel on one core of the 2-core development machine
// (BenchmarkVector200B, BenchmarkLexicalVector200B), so one core embeds
// well over 5,000 memories a second; Embed spreads batches of 32 texts or
// more over GOMAXPROCS goroutines.
//
// Each model is fixed and versioned by its name: any change to the
// features, their weights, the hash, the table or a dimension (or to
// analysis.TermsVersion) must bump it, because vectors from two versions
// are not comparable (TestModelGolden pins them). The embedder never reads
// the network or the file system, never logs, and never includes input
// text in an error.
package builtin

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

// Provenance of the embeddings this package returns.
const (
	Provider = "builtin"
	// Model is the default model and Dim its dimension.
	Model = "builtin/hybrid-v2"
	Dim   = LexicalDim + wordvec.Dim
	// LexicalModel is the lexical-only model of memgate before v2, and
	// LexicalDim its dimension (also the size of v2's lexical part).
	LexicalModel = "builtin/lexical-v1"
	LexicalDim   = 384
)

// Models lists the models New accepts, the default first.
var Models = []string{Model, LexicalModel}

// Embedder is the built-in embedder. The zero value embeds with Model; it
// is safe for concurrent use.
type Embedder struct {
	// Parallelism caps the goroutines one Embed call uses for a large batch;
	// 0 means runtime.GOMAXPROCS(0).
	Parallelism int
	// lexical selects LexicalModel.
	lexical bool
}

var _ memgate.Embedder = (*Embedder)(nil)

// New returns an Embedder of the default model.
func New() *Embedder { return &Embedder{} }

// NewModel returns an Embedder of the named model (one of Models; "" is
// the default).
func NewModel(name string) (*Embedder, error) {
	switch name {
	case "", Model:
		return &Embedder{}, nil
	case LexicalModel:
		return &Embedder{lexical: true}, nil
	}
	return nil, memgate.FieldError("embedder", "the built-in embedder has the models %s and %s, not %q", Model, LexicalModel, name)
}

// Model returns the name of e's model.
func (e *Embedder) Model() string {
	if e.lexical {
		return LexicalModel
	}
	return Model
}

// String names the embedder (for logs).
func (e *Embedder) String() string { return fmt.Sprintf("%s/%s", Provider, e.Model()) }

// parallelMin is the batch size from which Embed spreads work over several
// goroutines; below it the goroutine overhead outweighs the gain.
const parallelMin = 32

// Embed returns one embedding per text, in order. It fails only when ctx is
// done (with ctx's error), checking between texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]memgate.Embedding, len(texts))
	workers := e.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(texts)/parallelMin+1)
	if workers <= 1 {
		st := states.Get().(*state)
		defer states.Put(st)
		for i, t := range texts {
			if i%16 == 15 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			out[i] = st.embedding(t, e.lexical)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
	// Workers take chunks of texts in turn; each checks ctx between chunks.
	const chunk = 16
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := states.Get().(*state)
			defer states.Put(st)
			for ctx.Err() == nil {
				hi := int(next.Add(chunk))
				lo := hi - chunk
				if lo >= len(texts) {
					return
				}
				for i := lo; i < min(hi, len(texts)); i++ {
					out[i] = st.embedding(texts[i], e.lexical)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Vector returns the embedding vector of one text by Model (unit norm,
// length Dim). It is safe for concurrent use.
func Vector(text string) []float32 {
	st := states.Get().(*state)
	defer states.Put(st)
	return st.hybrid(text)
}

// LexicalVector returns the embedding vector of one text by LexicalModel
// (unit norm, length LexicalDim). It is safe for concurrent use.
func LexicalVector(text string) []float32 {
	st := states.Get().(*state)
	defer states.Put(st)
	return st.vector(text)
}

var states = sync.Pool{New: func() any { return new(state) }}

// Feature family weights. Word stems carry the topic; character n-grams
// recover morphology and typos; bigrams reward phrases. On the LoCoMo
// development split (package rank's evaluation) recall varied by less than
// 0.01 across bigram weights 0–0.5, character weights 0.2–0.7 and n-gram
// ranges 3–4, 3–5, 4–5, and across Dim 256–1024; these values keep every
// family meaningful and Dim = 384 keeps the index small.
const (
	wordWeight   = 1.0
	bigramWeight = 0.5
	charWeight   = 0.35
	charMin      = 3
	charMax      = 5
)

// state holds scratch buffers reused across texts by one goroutine.
type state struct {
	words  []analysis.Word
	hashes []uint64
	acc    []float64
	sem    []float64
}

func (st *state) embedding(text string, lexical bool) memgate.Embedding {
	if lexical {
		v := st.vector(text)
		return memgate.Embedding{Provider: Provider, Model: LexicalModel, Dim: len(v), Vector: v}
	}
	v := st.hybrid(text)
	return memgate.Embedding{Provider: Provider, Model: Model, Dim: len(v), Vector: v}
}

// The semantic part's constants. SIFA is the value of the SIF paper (Arora,
// Liang and Ma, ICLR 2017); SemanticShare 0.5 gives both parts an equal say
// and was not tuned.
const (
	// SemanticShare is the semantic part's share of v2's cosine.
	SemanticShare = 0.5
	// SIFA is SIF's a; RankOffset turns a word's rank in the table into a
	// frequency rank (the table leaves out stopwords and punctuation, which
	// rank above most of its words).
	SIFA       = 1e-3
	RankOffset = 150
	// zipfNorm is the harmonic normalizer of GloVe's 400,000-word
	// vocabulary: p(r) ≈ 1/(r·H), H = ln(400,000) + γ.
	zipfNorm = 13.48
)

// sifWeight is the SIF weight of the table's word of rank i.
func sifWeight(i int) float64 {
	p := 1 / (float64(i+RankOffset) * zipfNorm)
	return SIFA / (SIFA + p)
}

// typicalWord is the mean word vector of the table, each word weighted by
// its estimated frequency (Zipf) and its SIF weight: the direction a text's
// semantic part has before it says anything in particular.
var typicalWord = sync.OnceValue(func() []float64 {
	tb := wordvec.Default()
	m := make([]float64, wordvec.Dim)
	var sum float64
	for i := range tb.Len() {
		w := sifWeight(i) / float64(i+RankOffset)
		tb.AddTo(m, i, w)
		sum += w
	}
	for j := range m {
		m[j] /= sum
	}
	return m
})

// hybrid returns v2's vector: the lexical part (the v1 vector) and the
// semantic part, each unit, scaled by √(1−SemanticShare) and
// √SemanticShare.
func (st *state) hybrid(text string) []float32 {
	lex := st.vector(text) // fills st.words
	out := make([]float32, Dim)
	if st.sem == nil {
		st.sem = make([]float64, wordvec.Dim)
	} else {
		clear(st.sem)
	}
	tb := wordvec.Default()
	found := false
	total := 0.0
	for _, w := range st.words {
		i, ok := tb.Lookup(w.Token)
		if !ok {
			continue
		}
		wt := sifWeight(i)
		tb.AddTo(st.sem, i, wt)
		total += wt
		found = true
	}
	// Each word counts as its difference from the typical word (the
	// frequency-weighted mean of the table), so texts do not share a
	// direction merely for being English.
	if found {
		m := typicalWord()
		for j := range st.sem {
			st.sem[j] -= total * m[j]
		}
	}
	var norm float64
	for _, x := range st.sem {
		norm += x * x
	}
	if !found || norm == 0 {
		copy(out, lex) // the lexical part alone, unit already
		return out
	}
	lw, sw := math.Sqrt(1-SemanticShare), math.Sqrt(SemanticShare)/math.Sqrt(norm)
	for i, x := range lex {
		out[i] = float32(lw * float64(x))
	}
	for i, x := range st.sem {
		out[LexicalDim+i] = float32(sw * x)
	}
	return out
}

// Hash seeds per feature family, so that the stem "pain" and the character
// gram "pain" do not share a bucket by construction.
const (
	seedWord   = 0x9e3779b97f4a7c15
	seedBigram = 0xc2b2ae3d27d4eb4f
	seedChar   = 0x165667b19e3779f9
	seedEmpty  = 0x27d4eb2f165667c5
)

func (st *state) vector(text string) []float32 {
	if st.acc == nil {
		st.acc = make([]float64, LexicalDim)
	} else {
		clear(st.acc)
	}
	st.words = analysis.AppendWords(st.words[:0], text)

	// Words.
	st.hashes = st.hashes[:0]
	for _, w := range st.words {
		st.hashes = append(st.hashes, hashString(seedWord, w.Term))
	}
	n := st.addCounted(wordWeight)

	// Bigrams of adjacent terms.
	st.hashes = st.hashes[:0]
	for i := 1; i < len(st.words); i++ {
		h := hashStringFrom(fnvOffset^seedBigram, st.words[i-1].Term)
		h = hashStringFrom(h^' ', st.words[i].Term)
		st.hashes = append(st.hashes, mix(h))
	}
	n += st.addCounted(bigramWeight)

	// Character n-grams of each content word's token (unstemmed, so typos
	// and inflections still share grams), with boundary marks. Grams are
	// over bytes: a multi-byte letter spans several, which is harmless.
	st.hashes = st.hashes[:0]
	var buf [analysis.MaxTokenBytes + 2]byte
	for _, wd := range st.words {
		w := append(append(append(buf[:0], '<'), wd.Token...), '>')
		// One FNV pass per start position yields its 3-, 4- and 5-gram.
		for i := 0; i+charMin <= len(w); i++ {
			h := uint64(fnvOffset ^ seedChar)
			for j := i; j < min(i+charMax, len(w)); j++ {
				h ^= uint64(w[j])
				h *= fnvPrime
				if j+1-i >= charMin {
					st.hashes = append(st.hashes, mix(h))
				}
			}
		}
	}
	n += st.addCounted(charWeight)

	if n == 0 {
		st.add(mix(seedEmpty), 1)
	}
	var norm float64
	for _, x := range st.acc {
		norm += x * x
	}
	out := make([]float32, LexicalDim)
	if norm == 0 {
		// Every feature cancelled out (vanishingly rare): fall back to the
		// empty feature so the vector is never zero.
		st.add(mix(seedEmpty), 1)
		norm = 1
	}
	inv := 1 / math.Sqrt(norm)
	for i, x := range st.acc {
		out[i] = float32(x * inv)
	}
	return out
}

// addCounted adds every distinct hash in st.hashes with weight
// w·(1 + ln tf) and returns how many distinct features it added.
func (st *state) addCounted(w float64) int {
	h := st.hashes
	if len(h) == 0 {
		return 0
	}
	slices.Sort(h)
	n := 0
	for i := 0; i < len(h); {
		j := i + 1
		for j < len(h) && h[j] == h[i] {
			j++
		}
		if tf := j - i; tf == 1 {
			st.add(h[i], w)
		} else {
			st.add(h[i], w*(1+math.Log(float64(tf))))
		}
		n++
		i = j
	}
	return n
}

// add puts weight w on the bucket of feature hash h, with the hash's sign.
func (st *state) add(h uint64, w float64) {
	i := (h >> 1) % LexicalDim
	if h&1 == 1 {
		w = -w
	}
	st.acc[i] += w
}

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

func hashString(seed uint64, s string) uint64 {
	return mix(hashStringFrom(fnvOffset^seed, s))
}

func hashStringFrom(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix is the splitmix64 finalizer: it spreads FNV's weak low bits.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
