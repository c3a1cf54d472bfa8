package engine_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate"
)

// strongEmbedder is a synthetic strong embedder, shaped like the neural
// models people plug in: texts that mean the same (a memory and its
// paraphrase: one topic) have cosine ≥ 0.8 before the shift, texts that do
// not 0.1–0.4, and every vector is then pushed into a narrow cone by a
// large shared direction, so that any two texts have a cosine above 0.9.
// Texts it does not know (the probe set, say) each get a topic of their
// own, so they are unrelated to everything.
//
// A vector is the concatenation of a shared direction (weight 0.15 of the
// cosine), a facet part (0.2: each topic holds two of six facets, so two
// topics share none, one or both, which spreads unrelated cosines over
// 0.15–0.35, and random directions add ±0.05), and a topic part (0.65:
// 0.75 of it the topic's random direction, 0.25 the text's own), before
// the cone's shift.
type strongEmbedder struct {
	topics map[string]int // text → topic; others hash to their own
	mu     sync.Mutex
}

const (
	strongTopicDim = 1024
	strongFacets   = 6
	strongShift    = 3.0
)

func (s *strongEmbedder) topic(text string) uint64 {
	if t, ok := s.topics[text]; ok {
		return uint64(t)
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64() | 1<<63 // never a registered topic
}

// gaussUnit returns a random unit vector of n values seeded by seed.
func gaussUnit(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := make([]float64, n)
	var sq float64
	for i := range v {
		v[i] = rng.NormFloat64()
		sq += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(sq)
	}
	return v
}

func (s *strongEmbedder) vector(text string, cone bool) []float32 {
	t := s.topic(text)
	rng := rand.New(rand.NewPCG(t, 7))
	a := rng.IntN(strongFacets)
	b := (a + 1 + rng.IntN(strongFacets-1)) % strongFacets
	th := gaussUnit(t^0xabcdef, strongTopicDim)
	h := fnv.New64a()
	h.Write([]byte(text))
	own := gaussUnit(h.Sum64(), strongTopicDim)
	v := make([]float64, 0, 1+strongFacets+strongTopicDim)
	v = append(v, math.Sqrt(0.15))
	for i := range strongFacets {
		x := 0.0
		if i == a || i == b {
			x = math.Sqrt(0.2 / 2)
		}
		v = append(v, x)
	}
	for i := range strongTopicDim {
		v = append(v, math.Sqrt(0.65)*(math.Sqrt(0.75)*th[i]+math.Sqrt(0.25)*own[i]))
	}
	// Normalize, then push into the cone.
	var sq float64
	for _, x := range v {
		sq += x * x
	}
	out := make([]float32, len(v))
	shift := strongShift / math.Sqrt(float64(len(v)))
	if !cone {
		shift = 0
	}
	for i, x := range v {
		out[i] = float32(x/math.Sqrt(sq) + shift)
	}
	return out
}

func (s *strongEmbedder) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	out := make([]memgate.Embedding, len(texts))
	for i, t := range texts {
		v := s.vector(t, true)
		out[i] = memgate.Embedding{Provider: "openai", Model: "synthetic-strong", Dim: len(v), Vector: v}
	}
	return out, nil
}

// gibberish returns a text of random made-up words seeded by seed, so
// that no two texts share a word: the text channel has nothing to go by
// and whatever is recalled is recalled by meaning.
func gibberish(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 99))
	words := make([]string, 4+rng.IntN(4))
	for i := range words {
		b := make([]byte, 7+rng.IntN(4))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	return strings.ToUpper(words[0][:1]) + strings.Join(words, " ")[1:] + "."
}

// TestAStrongEmbedderCarriesMeaningAlone: with an embedder whose
// paraphrases are clearly closer than unrelated texts (strongEmbedder),
// recall needs no shared word. In partitions of 3, 30, 300 and 3,000
// memories, every paraphrase of a memory finds that memory first at the
// default floor, and every question on a topic the partition does not
// hold recalls nothing, though its cosines with everything exceed 0.9.
func TestAStrongEmbedderCarriesMeaningAlone(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 30, 300, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			emb := &strongEmbedder{topics: map[string]int{}}
			var memories []string
			for i := range n {
				text := gibberish(uint64(i))
				emb.topics[text] = i
				memories = append(memories, text)
			}
			// Paraphrases of up to 20 memories, spread over the partition,
			// and 20 questions on topics it does not hold.
			type question struct {
				text string
				want string // "" for an unrelated question
			}
			var questions []question
			for k := range min(n, 20) {
				i := k * n / min(n, 20)
				q := gibberish(uint64(1_000_000 + i))
				emb.topics[q] = i
				questions = append(questions, question{q, memories[i]})
			}
			for k := range 20 {
				q := gibberish(uint64(2_000_000 + k))
				emb.topics[q] = 10_000_000 + k
				questions = append(questions, question{q, ""})
			}
			// The embedder is what it claims: paraphrases close, unrelated
			// texts apart, everything in a cone.
			for _, q := range questions {
				for _, m := range memories[:min(n, 30)] {
					raw := cosine32(emb.vector(m, false), emb.vector(q.text, false))
					cone := cosine32(emb.vector(m, true), emb.vector(q.text, true))
					switch {
					case cone < 0.9:
						t.Fatalf("cosine %.3f in the cone, want above 0.9", cone)
					case m == q.want && raw < 0.8:
						t.Fatalf("paraphrase cosine %.3f, want at least 0.8", raw)
					case m != q.want && (raw < 0.05 || raw > 0.45):
						t.Fatalf("unrelated cosine %.3f, want in 0.1–0.4", raw)
					}
				}
			}

			eng := engineWith(t, openDB(t), emb)
			for chunk := range slices.Chunk(memories, 500) {
				rememberAll(t, eng, "t", "p", chunk...)
			}
			minPara := 1.0
			for _, q := range questions {
				got, res := recallContents(t, eng, "p", q.text, 10)
				if q.want != "" && len(got) > 0 {
					minPara = min(minPara, res.Results[0].Score)
				}
				switch {
				case q.want != "" && (len(got) == 0 || got[0] != q.want):
					t.Errorf("a paraphrase recalls %d memories, want its memory first (best score %.3f)", len(got), res.Explain.Relatedness)
				case q.want == "" && len(got) != 0:
					t.Errorf("an unrelated question recalls %d memories (best score %.3f, vector excess %.2f)", len(got), res.Results[0].Score, res.Results[0].Explain.VectorExcess)
				}
			}
			t.Logf("%d memories: the weakest paraphrase's score is %.3f", n, minPara)
		})
	}
}
