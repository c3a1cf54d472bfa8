package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/glovewire"
	"github.com/memgate/memgate/provider/openai"
)

// testEmbedder is one of the embedders the precision tests hold to the
// same floor: the built-in default, the built-in lexical model, and a
// semantic model reached through the OpenAI-compatible client over the
// real wire format.
type testEmbedder struct {
	name     string
	emb      memgate.Embedder
	semantic bool // relates words by meaning
}

func testEmbedders(t *testing.T) []testEmbedder {
	t.Helper()
	lex, err := builtin.NewModel(builtin.LexicalModel)
	if err != nil {
		t.Fatal(err)
	}
	srv := glovewire.Start()
	t.Cleanup(srv.Close)
	wire, err := openai.NewEmbedder(openai.EmbedderConfig{Model: glovewire.Model, URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return []testEmbedder{
		{builtin.Model, builtin.New(), true},
		{builtin.LexicalModel, lex, false},
		{"openai:" + glovewire.Model, wire, true},
	}
}

// recallContents recalls query for principal at the default floor and
// returns the contents of the results, best first.
func recallContents(t *testing.T, eng *engine.Engine, principal, query string, k int) ([]string, *memgate.RecallResult) {
	t.Helper()
	res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", principal), Query: query, K: k, Explain: true})
	if err != nil {
		t.Fatalf("recall %q: %v", query, err)
	}
	var out []string
	for _, h := range res.Results {
		out = append(out, h.Memory.Content)
	}
	return out, res
}

// TestANameIsNotEvidence: a question that names the person a partition is
// about, on a topic none of its memories holds, recalls nothing, with
// every embedder; the same person's questions on topics it holds are the
// control.
func TestANameIsNotEvidence(t *testing.T) {
	t.Parallel()
	memories := []string{"Alice lives in Rome.", "Alice works as a nurse.", "Alice is allergic to peanuts."}
	for _, te := range testEmbedders(t) {
		t.Run(te.name, func(t *testing.T) {
			eng := engineWith(t, openDB(t), te.emb)
			rememberAll(t, eng, "t", "alice", memories...)
			for _, q := range []string{"What car does Alice drive?", "Which football team does Alice support?", "Alice?"} {
				if got, res := recallContents(t, eng, "alice", q, 10); len(got) != 0 {
					t.Errorf("%q injected %q (relatedness %.3f): a known name lifted unrelated memories", q, got, res.Explain.Relatedness)
				}
			}
			for q, want := range map[string]string{
				"Where does Alice live?":           memories[0],
				"What is Alice's job as a nurse?":  memories[1],
				"Which nuts is Alice allergic to?": memories[2],
			} {
				got, res := recallContents(t, eng, "alice", q, 10)
				if len(got) == 0 || got[0] != want {
					t.Errorf("control %q: got %q (relatedness %.3f), want %q first", q, got, res.Explain.Relatedness, want)
				}
				if res.Explain.IdentifyingTerms != 1 {
					t.Errorf("control %q: %d identifying terms, want 1 (alice)", q, res.Explain.IdentifyingTerms)
				}
			}
		})
	}
}

type paraphraseSet struct {
	People []struct {
		Principal string `json:"principal"`
		Facts     []struct {
			Content     string   `json:"content"`
			Paraphrases []string `json:"paraphrases"`
		} `json:"facts"`
		Unrelated []string `json:"unrelated"`
	} `json:"people"`
}

func loadParaphrases(t *testing.T) paraphraseSet {
	t.Helper()
	b, err := os.ReadFile("testdata/paraphrase.json")
	if err != nil {
		t.Fatal(err)
	}
	var ps paraphraseSet
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// The paraphrase set is what it says: a question shares no content word
// with its fact but the person's name.
func TestParaphraseSetSharesNoContentWord(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range loadParaphrases(t).People {
		name := analysis.Terms(p.Principal)[0]
		for _, f := range p.Facts {
			facts := analysis.Terms(f.Content)
			for _, q := range f.Paraphrases {
				n++
				for _, term := range analysis.Terms(q) {
					if term != name && slices.Contains(facts, term) {
						t.Errorf("%q and %q share %q", q, f.Content, term)
					}
				}
			}
		}
	}
	if n < 8 {
		t.Fatalf("%d paraphrases, want at least 8", n)
	}
}

// TestParaphrasesAreRecalled: a question that shares no content word with
// a fact finds it: the fact is the best of the person's memories for it,
// with every embedder, because recall relates the question's words to the
// memories' (package relate: other forms, synonyms, derived forms, kinds,
// definitions, word-vector neighbours). The control: the lexical model
// without those relations, which has no meaning to go by, finds fewer.
// Every embedder finds the facts by their own words, and questions naming
// the same people on topics their facts do not hold recall nothing at the
// default floor.
func TestParaphrasesAreRecalled(t *testing.T) {
	t.Parallel()
	ps := loadParaphrases(t)
	zero := 0.0
	found := func(t *testing.T, eng *engine.Engine, check bool) (int, int, []string) {
		total, n := 0, 0
		var missed []string
		for _, p := range ps.People {
			var contents []string
			for _, f := range p.Facts {
				contents = append(contents, f.Content)
			}
			rememberAll(t, eng, "t", p.Principal, contents...)
			for _, f := range p.Facts {
				for _, q := range f.Paraphrases {
					total++
					res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", p.Principal), Query: q, K: 1, MinScore: &zero})
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Results) == 1 && res.Results[0].Memory.Content == f.Content {
						n++
					} else {
						missed = append(missed, q)
					}
				}
				if !check {
					continue
				}
				// Control: the fact's own words find it.
				if got, _ := recallContents(t, eng, p.Principal, f.Content, 3); len(got) == 0 || got[0] != f.Content {
					t.Errorf("the fact's own words %q recall %q", f.Content, got)
				}
			}
			if !check {
				continue
			}
			for _, q := range p.Unrelated {
				if got, res := recallContents(t, eng, p.Principal, q, 10); len(got) != 0 {
					t.Errorf("unrelated %q injected %q (best %.3f)", q, got, res.Explain.Relatedness)
				}
			}
		}
		return n, total, missed
	}
	lexical := 0
	for _, te := range testEmbedders(t) {
		t.Run(te.name, func(t *testing.T) {
			n, total, missed := found(t, engineWith(t, openDB(t), te.emb), true)
			t.Logf("%s: %d of %d paraphrases found first (missed: %s)", te.name, n, total, strings.Join(missed, " | "))
			if 3*n < 2*total {
				t.Errorf("%d of %d paraphrases found first, want at least two thirds; missed %q", n, total, missed)
			}
			if !te.semantic {
				lexical = n
			}
		})
	}
	lex, err := builtin.NewModel(builtin.LexicalModel)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: openDB(t), Embedder: lex, NoRelate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if n, total, _ := found(t, eng, false); n >= lexical || n >= total/2 {
		t.Errorf("without relations the lexical model finds %d of %d paraphrases, with them %d: the set does not need meaning", n, total, lexical)
	}
}

// shiftedEmbedder is a fake semantic model whose cosines are all shifted
// up and compressed: each vector is the inner model's plus a large
// constant direction, so any two texts have a cosine above 0.8. A floor on
// raw cosines calibrated for another model would pass everything.
type shiftedEmbedder struct {
	inner memgate.Embedder
	shift float32
}

func (s shiftedEmbedder) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	embs, err := s.inner.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range embs {
		v := make([]float32, len(embs[i].Vector))
		for j, x := range embs[i].Vector {
			v[j] = x + s.shift/float32(math.Sqrt(float64(len(v))))
		}
		embs[i] = memgate.Embedding{Provider: "ollama", Model: "shifted-" + embs[i].Model, Dim: len(v), Vector: v}
	}
	return embs, nil
}

func cosine32(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestFloorHoldsForAShiftedEmbedder: an embedder whose cosines are all
// shifted and compressed (shiftedEmbedder) keeps the floor's behaviour:
// the same questions recall the same memories (the same best one first),
// and the unrelated ones nothing, as with the model it shifts, because the
// calibration measures every model on its own probe set.
func TestFloorHoldsForAShiftedEmbedder(t *testing.T) {
	t.Parallel()
	memories := []string{
		"Alice drinks green tea every morning.",
		"Alice adopted a puppy from the shelter last spring.",
		"Alice plays the violin in a community orchestra.",
		"Alice works night shifts as a nurse at the hospital.",
		"Alice flew to Tokyo for her vacation in April.",
	}
	queries := []string{
		"Does Alice drink green tea?", "What beverages does Alice enjoy?", "Which musical instrument does Alice perform on?",
		"Where did Alice fly in April?", "What car does Alice drive?", "How do I file quarterly taxes?",
		"Kubernetes ingress controller configuration",
	}
	for _, te := range testEmbedders(t) {
		if !te.semantic {
			continue
		}
		t.Run(te.name, func(t *testing.T) {
			shifted := shiftedEmbedder{inner: te.emb, shift: 3}
			// The fake really compresses: unrelated texts are close.
			es, err := shifted.Embed(ctx, []string{memories[0], "Kubernetes ingress controller configuration"})
			if err != nil {
				t.Fatal(err)
			}
			if c := cosine32(es[0].Vector, es[1].Vector); c < 0.8 {
				t.Fatalf("the shifted model's unrelated cosine is %.3f, want above 0.8", c)
			}
			plain, moved := engineWith(t, openDB(t), te.emb), engineWith(t, openDB(t), shifted)
			rememberAll(t, plain, "t", "alice", memories...)
			rememberAll(t, moved, "t", "alice", memories...)
			returned := 0
			for _, q := range queries {
				want, wres := recallContents(t, plain, "alice", q, 10)
				got, gres := recallContents(t, moved, "alice", q, 10)
				returned += len(want)
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) || (len(want) > 0 && got[0] != want[0]) {
					t.Errorf("%q: the shifted model recalls %q (relatedness %.3f), the plain one %q (%.3f)", q, got, gres.Explain.Relatedness, want, wres.Explain.Relatedness)
				}
				if math.Abs(gres.Explain.Relatedness-wres.Explain.Relatedness) > 0.05 {
					t.Errorf("%q: relatedness %.3f shifted, %.3f plain", q, gres.Explain.Relatedness, wres.Explain.Relatedness)
				}
				if c := gres.Explain.Calibration; c == nil || c.Probes < 100 || !(c.Background.SD > 0) {
					t.Errorf("%q: explain shows no calibration: %+v", q, c)
				}
			}
			if returned == 0 {
				t.Fatal("nothing was recalled at all: the comparison shows nothing")
			}
		})
	}
}
