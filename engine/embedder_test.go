package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/ollama"
	"github.com/memgate/memgate/sqlite"
)

// tableEmbedder embeds each text with the vector its table gives, under its
// own provenance: the test decides which vectors would be similar if they
// were ever compared. Other texts (the probe set among them) get a vector
// of dim pseudo-random values derived from the text, so they are unrelated
// to everything.
type tableEmbedder struct {
	provider, model string
	table           map[string][]float32
	dim             int
}

// unit returns the i-th unit vector of dimension dim.
func unit(dim, i int) []float32 {
	v := make([]float32, dim)
	v[i] = 1
	return v
}

// noise returns a pseudo-random vector of dim values derived from s.
func noise(s string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(s))
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func (t *tableEmbedder) Embed(_ context.Context, texts []string) ([]memgate.Embedding, error) {
	out := make([]memgate.Embedding, len(texts))
	for i, s := range texts {
		v, ok := t.table[s]
		if !ok {
			v = noise(s, t.dim)
		}
		out[i] = memgate.Embedding{Provider: t.provider, Model: t.model, Dim: len(v), Vector: append([]float32(nil), v...)}
	}
	return out, nil
}

func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func engineWith(t *testing.T, db *sqlite.DB, emb memgate.Embedder) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.Config{Store: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// hitsByID recalls with the floor off and explanations on.
func hitsByID(t *testing.T, eng *engine.Engine, query string, diversify bool) (map[string]engine.RecallHit, *memgate.RecallResult) {
	t.Helper()
	zero := 0.0
	res, err := eng.Recall(ctx, memgate.RecallRequest{Scope: scope("t", "alice"), Query: query, K: 20, MinScore: &zero, Explain: true, Diversify: diversify})
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	out := map[string]engine.RecallHit{}
	for _, h := range res.Results {
		out[h.Memory.ID] = h
	}
	return out, res
}

// TestCrossModelVectorsAreNeverCompared: memories embedded with model A,
// queries embedded with model B whose vector for the query equals A's
// vector of an unrelated memory. If the two were ever compared, the
// unrelated memory would score a perfect cosine. It must not be returned,
// and the related memory (found by text) must show no vector evidence and
// stale_embedding. The control, the same query embedded by model A, shows
// the cosine does count when the models match.
func TestCrossModelVectorsAreNeverCompared(t *testing.T) {
	t.Parallel()
	const (
		unrelated = "The quarterly tax filing deadline is April 15."
		related   = "Alice walks her dog Biscuit along the river every morning."
		query     = "Where does the dog walk?" // no name: the content query is the query
		fresh     = "Biscuit the dog loves the river path."
	)
	const dim = 64
	e1, e2, e3 := unit(dim, 0), unit(dim, 1), unit(dim, 2)
	modelA := &tableEmbedder{provider: "ollama", model: "model-a", table: map[string][]float32{unrelated: e1, related: e2, query: e1}, dim: dim}
	modelB := &tableEmbedder{provider: "ollama", model: "model-b", table: map[string][]float32{query: e1, fresh: e3}, dim: dim}
	// Same name as A, another dimension: a different model all the same.
	modelA3 := &tableEmbedder{provider: "ollama", model: "model-a", table: map[string][]float32{query: unit(dim-1, 0)}, dim: dim - 1}

	db := openDB(t)
	ms := rememberAll(t, engineWith(t, db, modelA), "t", "alice", unrelated, related)
	u, r := ms[0].ID, ms[1].ID
	if ms[0].Embedding.Model != "model-a" {
		t.Fatalf("stored provenance %+v", ms[0].Embedding)
	}

	// Control: the query embedded by model A. The unrelated memory is
	// returned on its vector alone, which counts.
	for _, div := range []bool{false, true} {
		hits, _ := hitsByID(t, engineWith(t, db, modelA), query, div)
		h, ok := hits[u]
		if !ok || h.Explain.Vector <= 0 || h.Explain.StaleEmbedding {
			t.Fatalf("control (diversify %v): unrelated memory %v (vector %v), want it returned on its cosine", div, ok, h.Explain)
		}
		if h := hits[r]; h.Explain == nil || h.Explain.StaleEmbedding {
			t.Fatalf("control: related memory not returned or flagged stale")
		}
	}

	for name, emb := range map[string]*tableEmbedder{"OtherModel": modelB, "OtherDimension": modelA3} {
		for _, div := range []bool{false, true} {
			hits, res := hitsByID(t, engineWith(t, db, emb), query, div)
			if _, ok := hits[u]; ok {
				t.Fatalf("%s (diversify %v): the unrelated memory was returned: a vector of model A was compared with a query of %s/%d",
					name, div, emb.model, len(emb.table[query]))
			}
			h, ok := hits[r]
			if !ok {
				t.Fatalf("%s: the related memory is not recalled by text", name)
			}
			if h.Explain.Vector != 0 || !h.Explain.StaleEmbedding || h.Explain.Text <= 0 {
				t.Fatalf("%s: related memory explain %+v, want vector 0, text > 0, stale_embedding", name, h.Explain)
			}
			if p := res.Explain.Embedder; p == nil || p.Model != emb.model || p.Dim != len(emb.table[query]) {
				t.Fatalf("%s: recall names embedder %+v", name, p)
			}
		}
	}

	// A mixed partition: a memory written by model B has a vector B's
	// queries use, beside the stale ones.
	engB := engineWith(t, db, modelB)
	n := rememberAll(t, engB, "t", "alice", fresh)[0].ID
	modelB.table[query] = e3 // now the query is close to the fresh memory
	hits, _ := hitsByID(t, engB, query, false)
	if h, ok := hits[n]; !ok || h.Explain.Vector <= 0 || h.Explain.StaleEmbedding {
		t.Fatalf("fresh memory of the active model: %v %+v, want vector evidence", ok, h.Explain)
	}
	if h := hits[r]; !h.Explain.StaleEmbedding || h.Explain.Vector != 0 {
		t.Fatalf("old memory in the mixed partition: %+v", h.Explain)
	}
	if _, ok := hits[u]; ok {
		t.Fatal("unrelated memory returned in the mixed partition")
	}
}

// fakeOllama is an httptest server speaking Ollama's /api/embed. By
// default it embeds with the built-in embedder's vectors under its own
// model name (so similarities mean something); vec, when set, replaces the
// vectors; fail, when set, answers instead.
type fakeOllama struct {
	*httptest.Server
	model string
	mu    sync.Mutex
	reqs  int
	texts int
	vec   func(text string) []float64
	fail  func(req int) (status int, body string) // status 0: answer normally
}

func newFakeOllama(t *testing.T, model string) *fakeOllama {
	t.Helper()
	f := &fakeOllama{model: model}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&body) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if body.Model != f.model {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", body.Model)})
			return
		}
		f.mu.Lock()
		f.reqs++
		n := f.reqs
		fail, vec := f.fail, f.vec
		f.mu.Unlock()
		if fail != nil {
			if status, msg := fail(n); status != 0 {
				w.WriteHeader(status)
				io.WriteString(w, msg)
				return
			}
		}
		f.mu.Lock()
		f.texts += len(body.Input)
		f.mu.Unlock()
		out := make([][]float64, len(body.Input))
		for i, s := range body.Input {
			if vec != nil {
				out[i] = vec(s)
				continue
			}
			for _, x := range builtin.Vector(s) {
				out[i] = append(out[i], float64(x))
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"model": f.model, "embeddings": out})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOllama) set(fn func(*fakeOllama)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeOllama) embedder(t *testing.T, mod func(*ollama.EmbedderConfig)) *ollama.Embedder {
	t.Helper()
	cfg := ollama.EmbedderConfig{Model: f.model, URL: f.URL, HTTP: provider.HTTP{MaxRetries: -1}}
	if mod != nil {
		mod(&cfg)
	}
	e, err := ollama.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestUnusableVectorsAreRefusedAtWrite: an embedder server answering NaN
// (beyond float32), zeros, a short vector or too few vectors makes the
// remember fail with a clear error, and nothing is written. The control,
// the same server answering well, stores the memory with its provenance.
func TestUnusableVectorsAreRefusedAtWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		body string
		dim  int
		code string
		want string
	}{
		{"NonFinite", `{"model":"m","embeddings":[[1e39,0.5,0.5]]}`, 0, memgate.EUNAVAILABLE, "non-finite"},
		{"Zero", `{"model":"m","embeddings":[[0,0,0]]}`, 0, memgate.EUNAVAILABLE, "zero vector"},
		{"Empty", `{"model":"m","embeddings":[[]]}`, 0, memgate.EUNAVAILABLE, "empty vector"},
		{"Short", `{"model":"m","embeddings":[[0.5,0.5]]}`, 3, memgate.EINVALID, "2 dimensions for input 0, expected 3"},
		{"NoVector", `{"model":"m","embeddings":[]}`, 0, memgate.EUNAVAILABLE, "0 vectors for 1 texts"},
		{"NotJSON", `<html>oops</html>`, 0, memgate.EUNAVAILABLE, "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOllama(t, "m")
			f.set(func(f *fakeOllama) {
				f.fail = func(int) (int, string) { return 200, c.body }
			})
			eng := engineWith(t, openDB(t), f.embedder(t, func(cfg *ollama.EmbedderConfig) { cfg.Dim = c.dim }))
			_, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "t", Principal: "alice", Kind: "fact", Source: "user", Content: "Alice's favourite number is 4711"}})
			if memgate.ErrorCode(err) != c.code || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `ollama (model "m")`) {
				t.Fatalf("remember: %v, want %s saying %q", err, c.code, c.want)
			}
			if strings.Contains(err.Error(), "4711") {
				t.Fatal("the error quotes the content")
			}
			p, err := eng.List(ctx, scope("t", "alice"), memgate.ListRequest{})
			if err != nil || len(p.Memories) != 0 {
				t.Fatalf("%d memories written after a refused vector (%v)", len(p.Memories), err)
			}
			// Control: the same server answering well.
			f.set(func(f *fakeOllama) {
				f.fail = nil
				f.vec = func(string) []float64 { return []float64{0.5, 0.5, 0.5} }
			})
			m, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "t", Principal: "alice", Kind: "fact", Source: "user", Content: "Alice's favourite number is 4711"}})
			if err != nil {
				t.Fatalf("control: %v", err)
			}
			if e := m.Embedding; e == nil || e.Provider != "ollama" || e.Model != "m" || e.Dim != 3 {
				t.Fatalf("control provenance %+v", m.Embedding)
			}
		})
	}
}

// badEmbedder returns what it is given, bypassing any embedder-side check,
// so the engine's own check is what refuses.
type badEmbedder struct{ e memgate.Embedding }

func (b badEmbedder) Embed(_ context.Context, texts []string) ([]memgate.Embedding, error) {
	out := make([]memgate.Embedding, len(texts))
	for i := range out {
		out[i] = b.e
	}
	return out, nil
}

func TestEngineChecksEveryVector(t *testing.T) {
	t.Parallel()
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	for name, e := range map[string]memgate.Embedding{
		"NaN":          {Provider: "p", Model: "m", Dim: 2, Vector: []float32{nan, 1}},
		"Inf":          {Provider: "p", Model: "m", Dim: 2, Vector: []float32{inf, 1}},
		"Zero":         {Provider: "p", Model: "m", Dim: 2, Vector: []float32{0, 0}},
		"Empty":        {Provider: "p", Model: "m"},
		"DimMismatch":  {Provider: "p", Model: "m", Dim: 3, Vector: []float32{1, 1}},
		"NoProvenance": {Dim: 2, Vector: []float32{1, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eng := engineWith(t, openDB(t), badEmbedder{e})
			_, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "t", Principal: "alice", Kind: "fact", Source: "user", Content: "x"}})
			if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(err.Error(), "unusable vector") {
				t.Fatalf("remember: %v", err)
			}
			if p, _ := eng.List(ctx, scope("t", "alice"), memgate.ListRequest{}); len(p.Memories) != 0 {
				t.Fatal("memory written with an unusable vector")
			}
		})
	}
}

// TestSwitchEmbedderThenReembed: memories remembered with the built-in
// embedder; the engine restarts with an HTTP embedder. Recall keeps
// working on text (every hit flagged stale), Reembed completes, and then
// recall uses the new vectors. A second run has nothing left to do.
func TestSwitchEmbedderThenReembed(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	facts := append(append([]string(nil), dogFacts...),
		"Alice's sister Maria lives in Lisbon and works as an architect.",
		"Alice is allergic to penicillin.",
	)
	ms := rememberAll(t, engineWith(t, db, builtin.New()), "t", "alice", facts...)
	// Revoked memories are not re-embedded: never recalled, never sent.
	revoked := rememberAll(t, engineWith(t, db, builtin.New()), "t", "alice", "Alice's old address was 12 Elm Street.")[0]
	if _, err := engineWith(t, db, builtin.New()).Revoke(ctx, scope("t", "alice"), revoked.ID, "moved"); err != nil {
		t.Fatal(err)
	}

	f := newFakeOllama(t, "fake-minilm")
	eng := engineWith(t, db, f.embedder(t, func(c *ollama.EmbedderConfig) { c.MaxBatch = 2 }))
	const q = "Where does Alice walk Biscuit?"
	hits, _ := hitsByID(t, eng, q, false)
	h, ok := hits[ms[2].ID]
	if !ok || !h.Explain.StaleEmbedding || h.Explain.Vector != 0 || h.Explain.Text <= 0 {
		t.Fatalf("before reembed: walk memory %v %+v, want it recalled by text, stale", ok, h.Explain)
	}

	var progress []engine.ReembedProgress
	res, err := eng.Reembed(ctx, scope("t", "alice"), engine.ReembedOptions{Batch: 2, Progress: func(p engine.ReembedProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != len(facts) || res.Examined != len(facts) || res.Reembedded != len(facts) || res.Current != 0 || res.Changed != 0 {
		t.Fatalf("reembed %+v, want all %d re-embedded", res.ReembedProgress, len(facts))
	}
	if res.Model != (engine.Provenance{Provider: "ollama", Model: "fake-minilm", Dim: builtin.Dim}) {
		t.Fatalf("reembed model %+v", res.Model)
	}
	if len(progress) != 3 || progress[2].Examined != len(facts) || progress[0].Examined != 2 {
		t.Fatalf("progress %+v, want one report per batch of 2", progress)
	}
	for _, m := range ms {
		got, _ := eng.Get(ctx, scope("t", "alice"), m.ID)
		if got.Embedding.Provider != "ollama" || got.Embedding.Model != "fake-minilm" || got.Version != m.Version || !got.UpdatedAt.Equal(m.UpdatedAt) {
			t.Fatalf("%s after reembed: %+v, version %d", m.ID, got.Embedding, got.Version)
		}
	}
	if got, _ := eng.Get(ctx, scope("t", "alice"), revoked.ID); got.Embedding.Provider != builtin.Provider {
		t.Fatalf("revoked memory re-embedded: %+v", got.Embedding)
	}

	hits, _ = hitsByID(t, eng, q, false)
	h, ok = hits[ms[2].ID]
	if !ok || h.Explain.StaleEmbedding || h.Explain.Vector <= 0 {
		t.Fatalf("after reembed: walk memory %v %+v, want vector evidence", ok, h.Explain)
	}
	for id, h := range hits {
		if h.Explain.StaleEmbedding {
			t.Fatalf("%s still stale after reembed", id)
		}
	}
	// The same query through a fresh engine (a restarted server) too.
	hits, _ = hitsByID(t, engineWith(t, db, f.embedder(t, nil)), q, false)
	if h := hits[ms[2].ID]; h.Explain == nil || h.Explain.StaleEmbedding || h.Explain.Vector <= 0 {
		t.Fatalf("restarted engine: %+v", h.Explain)
	}

	// Nothing left: a second run re-embeds nothing.
	sent := f.texts
	res, err = eng.Reembed(ctx, scope("t", "alice"), engine.ReembedOptions{})
	if err != nil || res.Reembedded != 0 || res.Current != len(facts) {
		t.Fatalf("second run %+v, %v", res, err)
	}
	if f.texts != sent+1 { // the probe only
		t.Fatalf("second run sent %d texts", f.texts-sent)
	}
}

// TestReembedResumes: a run that fails part-way (the embedder goes down)
// keeps what it stored; the next run re-embeds only the rest.
func TestReembedResumes(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	contents := make([]string, 7)
	for i := range contents {
		contents[i] = fmt.Sprintf("Alice fact number %d about her garden.", i)
	}
	rememberAll(t, engineWith(t, db, builtin.New()), "t", "alice", contents...)
	f := newFakeOllama(t, "fake-minilm")
	// Request 1 is the probe, 2 and 3 the first two batches; then down.
	f.set(func(f *fakeOllama) {
		f.fail = func(n int) (int, string) {
			if n > 3 {
				return http.StatusServiceUnavailable, `{"error":"server busy"}`
			}
			return 0, ""
		}
	})
	eng := engineWith(t, db, f.embedder(t, nil))
	res, err := eng.Reembed(ctx, scope("t", "alice"), engine.ReembedOptions{Batch: 3})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("interrupted run: %v", err)
	}
	if res.Reembedded != 6 {
		t.Fatalf("interrupted run re-embedded %d, want 6 (two batches)", res.Reembedded)
	}
	f.set(func(f *fakeOllama) { f.fail = nil })
	res, err = eng.Reembed(ctx, scope("t", "alice"), engine.ReembedOptions{Batch: 3})
	if err != nil || res.Reembedded != 1 || res.Current != 6 || res.Total != 7 {
		t.Fatalf("resumed run %+v, %v; want 1 re-embedded, 6 current", res, err)
	}
}

// TestReembedAllPrincipals re-embeds a whole tenant and nothing of another.
func TestReembedAllPrincipals(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	old := engineWith(t, db, builtin.New())
	rememberAll(t, old, "t", "alice", "Alice likes tea.")
	rememberAll(t, old, "t", "bob", "Bob likes coffee.")
	other := rememberAll(t, old, "u", "carol", "Carol likes juice.")[0]
	f := newFakeOllama(t, "fake-minilm")
	eng := engineWith(t, db, f.embedder(t, nil))
	res, err := eng.Reembed(ctx, memgate.Scope{Tenant: "t", AllPrincipals: true}, engine.ReembedOptions{})
	if err != nil || res.Reembedded != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if got, _ := eng.Get(ctx, scope("u", "carol"), other.ID); got.Embedding.Provider != builtin.Provider {
		t.Fatal("another tenant was re-embedded")
	}
	// Unknown model: the probe fails before anything is read.
	bad, _ := ollama.NewEmbedder(ollama.EmbedderConfig{Model: "missing", URL: f.URL, HTTP: provider.HTTP{Sleep: func(context.Context, time.Duration) error { return nil }}})
	_, err = engineWith(t, db, bad).Reembed(ctx, scope("t", "alice"), engine.ReembedOptions{})
	if memgate.ErrorCode(err) != memgate.EINVALID || !strings.Contains(err.Error(), "does not know the model") {
		t.Fatalf("unknown model: %v", err)
	}
}
