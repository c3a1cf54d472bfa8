package builtin_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
)

func embedOne(t *testing.T, text string) memgate.Embedding {
	t.Helper()
	return embedWith(t, builtin.New(), text)
}

func embedWith(t *testing.T, e *builtin.Embedder, text string) memgate.Embedding {
	t.Helper()
	es, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("got %d embeddings for 1 text", len(es))
	}
	return es[0]
}

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestEmbeddingIsValid(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"Caroline: I went to a LGBTQ support group yesterday.",
		"x",
		"the of and to", // stopwords only
		"?!… — ***",     // no word at all
		"東京都に行きました",     // spaceless script
		strings.Repeat("memory ", 2000),
	} {
		for _, m := range []struct {
			name string
			dim  int
		}{{builtin.Model, builtin.Dim}, {builtin.LexicalModel, builtin.LexicalDim}} {
			emb, err := builtin.NewModel(m.name)
			if err != nil {
				t.Fatal(err)
			}
			e := embedWith(t, emb, text)
			if err := e.Check(); err != nil {
				t.Errorf("%s %.20q: %v", m.name, text, err)
			}
			if e.Provider != builtin.Provider || e.Model != m.name || e.Dim != m.dim || len(e.Vector) != m.dim {
				t.Errorf("%.20q: provenance %s/%s/%d, len %d; want %s/%s/%d", text, e.Provider, e.Model, e.Dim, len(e.Vector), builtin.Provider, m.name, m.dim)
			}
			if n := cos(e.Vector, e.Vector); math.Abs(n-1) > 1e-4 {
				t.Errorf("%s %.20q: squared norm %v, want 1", m.name, text, n)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	text := "Melanie: We love painting together lately, especially nature-inspired ones."
	a, b := embedOne(t, text), builtin.Vector(text)
	for i := range a.Vector {
		if a.Vector[i] != b[i] {
			t.Fatalf("vector differs at %d: %v vs %v", i, a.Vector[i], b[i])
		}
	}
	// Batches (parallel or not) give the same vectors as single texts.
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d about topic %d", i, i%7)
	}
	es, err := (&builtin.Embedder{Parallelism: 2}).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		v := builtin.Vector(texts[i])
		for j := range v {
			if v[j] != e.Vector[j] {
				t.Fatalf("text %d: batch vector differs at %d", i, j)
			}
		}
	}
}

func TestNewModel(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", builtin.Model, builtin.LexicalModel} {
		if _, err := builtin.NewModel(name); err != nil {
			t.Errorf("NewModel(%q): %v", name, err)
		}
	}
	if _, err := builtin.NewModel("builtin/lexical-v3"); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Errorf("an unknown model: %v, want invalid_argument", err)
	}
}

// The semantic part relates words that share no form: paraphrases that
// share no content word are closer than unrelated texts, where the lexical
// model sees nothing (the control).
func TestSemanticPartRelatesParaphrases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ memory, paraphrase, unrelated string }{
		{"Alice drinks green tea every morning.", "What beverages does she enjoy?", "When is the quarterly tax deadline?"},
		{"Bob adopted a puppy from the shelter.", "Does he have any pets?", "Which laptop should I buy for programming?"},
		{"Maria plays the violin in an orchestra.", "What instrument does she perform on?", "How long does it take to bake bread?"},
	} {
		m := builtin.Vector(c.memory)
		rel, unrel := cos(m, builtin.Vector(c.paraphrase)), cos(m, builtin.Vector(c.unrelated))
		if !(rel > unrel+0.1) {
			t.Errorf("%q: paraphrase %.3f, unrelated %.3f: want the paraphrase clearly closer", c.memory, rel, unrel)
		}
		lm := builtin.LexicalVector(c.memory)
		if lrel := cos(lm, builtin.LexicalVector(c.paraphrase)); lrel > rel {
			t.Errorf("%q: the lexical model relates the paraphrase more (%.3f) than v2 (%.3f)", c.memory, lrel, rel)
		}
	}
}

func TestSimilarity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, related, unrelated string
	}{
		{"morphology", "I love painting landscapes", "she painted a landscape", "we bought a new car yesterday"},
		{"typo", "pursue an education in counseling", "persue an educaton in counselling", "the weather was rainy all week"},
		{"word order", "adoption agencies research", "researching agencies for adoption", "playing guitar at the concert"},
		{"case and accents", "Café in Zürich", "cafe in zurich", "mountain hiking trip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, vec := range []func(string) []float32{builtin.Vector, builtin.LexicalVector} {
				a := vec(tc.a)
				rel, unrel := cos(a, vec(tc.related)), cos(a, vec(tc.unrelated))
				if !(rel > unrel+0.1) {
					t.Errorf("related %.3f, unrelated %.3f: want related clearly higher", rel, unrel)
				}
			}
		})
	}
}

func TestEmptyFeatureIsStable(t *testing.T) {
	t.Parallel()
	// Texts without features share the fixed empty vector; it is not zero
	// and is dissimilar to real text.
	for _, vec := range []func(string) []float32{builtin.Vector, builtin.LexicalVector} {
		a, b := vec("?!"), vec("the and of")
		if c := cos(a, b); math.Abs(c-1) > 1e-6 {
			t.Errorf("featureless texts have cosine %v, want 1", c)
		}
		if c := cos(a, vec("painting")); math.Abs(c) > 0.5 {
			t.Errorf("empty vector too similar to a word: %v", c)
		}
	}
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{1, 1000} {
		texts := make([]string, n)
		for i := range texts {
			texts[i] = "some text"
		}
		es, err := builtin.New().Embed(ctx, texts)
		if !errors.Is(err, context.Canceled) || es != nil {
			t.Errorf("%d texts: got %d embeddings, err %v; want nil, context.Canceled", n, len(es), err)
		}
	}
}

func TestContextCancelledMidBatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	texts := make([]string, 20000)
	for i := range texts {
		texts[i] = strings.Repeat("a fairly long memory text about many things ", 5)
	}
	done := make(chan error, 1)
	go func() {
		_, err := builtin.New().Embed(ctx, texts)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestEmptyBatch(t *testing.T) {
	t.Parallel()
	es, err := builtin.New().Embed(context.Background(), nil)
	if err != nil || len(es) != 0 {
		t.Errorf("got %d, %v", len(es), err)
	}
}

func FuzzEmbed(f *testing.F) {
	for _, s := range []string{"", "a", "Caroline's café", "ab\xffcd", "東京", "?!", strings.Repeat("x", 300), "e\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, vec := range []func(string) []float32{builtin.Vector, builtin.LexicalVector} {
			v := vec(s)
			e := memgate.Embedding{Provider: builtin.Provider, Model: builtin.Model, Dim: len(v), Vector: v}
			if err := e.Check(); err != nil {
				t.Fatalf("invalid embedding: %v", err)
			}
			if n := cos(v, v); math.Abs(n-1) > 1e-4 {
				t.Fatalf("squared norm %v", n)
			}
			w := vec(s)
			for i := range v {
				if v[i] != w[i] {
					t.Fatal("not deterministic")
				}
			}
		}
	})
}

const text200 = "Caroline: Thanks, Melanie. It really mattered. My own journey and the support I got made a huge difference. Now I want to help people go through it too, counseling feels right!"

func BenchmarkVector200B(b *testing.B) {
	b.SetBytes(int64(len(text200)))
	b.ReportAllocs()
	for b.Loop() {
		_ = builtin.Vector(text200)
	}
}

func BenchmarkLexicalVector200B(b *testing.B) {
	b.SetBytes(int64(len(text200)))
	b.ReportAllocs()
	for b.Loop() {
		_ = builtin.LexicalVector(text200)
	}
}

func BenchmarkEmbedBatch1000(b *testing.B) {
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s (%d)", text200, i)
	}
	e := builtin.New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

// TestModelGolden pins the vectors of each Model: if it fails, the features
// changed and vectors stored under the old name are no longer comparable, so
// bump builtin.Model (and analysis.TermsVersion if the analysis changed) and
// add the new digest. Values are rounded to 1e-4 first, so last-bit float
// differences between architectures do not matter.
func TestModelGolden(t *testing.T) {
	t.Parallel()
	digests := map[string]string{
		"builtin/lexical-v1": "8052fda90b9aebbed17826a2487d5e9a080e5639d95708fce374d8bee4c899b7",
		"builtin/hybrid-v2":  "ac69f60e0ae6be4761f6b344df3c290b30e497c8250d7a0f3d7deba51a909110",
	}
	for _, m := range []struct {
		name string
		vec  func(string) []float32
	}{{builtin.LexicalModel, builtin.LexicalVector}, {builtin.Model, builtin.Vector}} {
		h := sha256.New()
		for _, text := range []string{"Caroline: I went to a LGBTQ support group yesterday.", "東京 café, don't!", ""} {
			for _, x := range m.vec(text) {
				binary.Write(h, binary.LittleEndian, int32(math.Round(float64(x)*1e4)))
			}
		}
		got := hex.EncodeToString(h.Sum(nil))
		want, ok := digests[m.name]
		switch {
		case !ok || want == "":
			t.Errorf("no golden digest for model %q: add %q", m.name, got)
		case got != want:
			t.Errorf("vectors changed (digest %s) but the model is still %q: bump its name", got, m.name)
		}
	}
}
