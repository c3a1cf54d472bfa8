package main

import (
	"encoding/json"
	"fmt"
	"github.com/memgate/memgate/postgres/pgtest"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate/embedder/builtin"
)

// fakeOllama speaks Ollama's /api/embed for one model, with the built-in
// embedder's vectors (so similarities mean something) under that model's
// name; any other model is answered 404 as Ollama does.
func fakeOllama(t *testing.T, model string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if body.Model != model {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", body.Model)})
			return
		}
		out := make([][]float32, len(body.Input))
		for i, s := range body.Input {
			out[i] = builtin.LexicalVector(s)
		}
		json.NewEncoder(w).Encode(map[string]any{"model": model, "embeddings": out})
	}))
	t.Cleanup(s.Close)
	return s
}

type explainedRecall struct {
	Results []struct {
		Memory struct {
			ID string `json:"id"`
		} `json:"memory"`
		Explain struct {
			Text           float64 `json:"text"`
			Vector         float64 `json:"vector"`
			StaleEmbedding bool    `json:"stale_embedding"`
		} `json:"explain"`
	} `json:"results"`
	Explain struct {
		Embedder struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
		} `json:"embedder"`
	} `json:"explain"`
}

func parseRecall(t *testing.T, out string) explainedRecall {
	t.Helper()
	var r explainedRecall
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("recall --json printed %q: %v", out, err)
	}
	if len(r.Results) == 0 {
		t.Fatalf("recall returned nothing: %s", out)
	}
	return r
}

var walkFacts = []string{
	"Alice walks her dog Biscuit along the river every morning.",
	"Alice adopted Biscuit, a golden retriever, in March.",
	"Alice's sister Maria lives in Lisbon.",
	"Alice is allergic to penicillin.",
	"Alice prefers green tea without sugar.",
}

// TestSwitchEmbedderAndReembed: memories remembered with the built-in
// embedder; recall with an Ollama embedder works by text (every hit
// stale); reembed re-embeds them with progress; recall then uses vectors;
// a second reembed has nothing left to do.
func TestSwitchEmbedderAndReembed(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, f := range walkFacts {
		mustCLI(t, db, "remember", "--tenant", "acme", "--principal", "alice", f)
	}
	srv := fakeOllama(t, "fake-minilm")
	emb := []string{"--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL}
	recall := append([]string{"recall", "--tenant", "acme", "--principal", "alice", "--explain", "--json"}, emb...)
	recall = append(recall, "Where does Alice walk her dog?")

	r := parseRecall(t, mustCLI(t, db, recall...))
	if r.Explain.Embedder.Provider != "ollama" || r.Explain.Embedder.Model != "fake-minilm" {
		t.Fatalf("recall embedded the query with %+v", r.Explain.Embedder)
	}
	for _, h := range r.Results {
		if !h.Explain.StaleEmbedding || h.Explain.Vector != 0 {
			t.Fatalf("before reembed: %+v, want stale and no vector evidence", h.Explain)
		}
	}

	code, out, errs := cli(t, db, "", append([]string{"reembed", "--tenant", "acme", "--batch", "2"}, emb...)...)
	if code != 0 {
		t.Fatalf("reembed: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "re-embedded 5 of 5 memories with ollama fake-minilm (384 dimensions); 0 were already current, 0 changed meanwhile") {
		t.Fatalf("reembed printed %q", out)
	}
	if !strings.Contains(errs, "reembed: 5/5 examined, 5 re-embedded") {
		t.Fatalf("reembed progress %q", errs)
	}

	r = parseRecall(t, mustCLI(t, db, recall...))
	if h := r.Results[0]; h.Explain.StaleEmbedding || h.Explain.Vector <= 0 {
		t.Fatalf("after reembed: %+v, want vector evidence", h.Explain)
	}
	// The receipt names the new model.
	got := mustCLI(t, db, "get", "--tenant", "acme", "--principal", "alice", r.Results[0].Memory.ID)
	if !strings.Contains(got, "ollama fake-minilm dim 384") {
		t.Fatalf("get after reembed:\n%s", got)
	}

	out = mustCLI(t, db, append([]string{"reembed", "--tenant", "acme", "--principal", "alice", "--json"}, emb...)...)
	var res struct {
		Total, Reembedded, Current int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Total != 5 || res.Reembedded != 0 || res.Current != 5 {
		t.Fatalf("second reembed: %s (%v)", out, err)
	}
	// Back to the built-in embedder is a reembed like any other.
	if out := mustCLI(t, db, "reembed", "--tenant", "acme", "--embedder", "builtin"); !strings.Contains(out, "re-embedded 5 of 5 memories with builtin builtin/hybrid-v2") {
		t.Fatalf("reembed to builtin: %q", out)
	}
	// A database of the lexical model (memgate before v2) re-embeds to the
	// default the same way, and the old model stays selectable.
	if out := mustCLI(t, db, "reembed", "--tenant", "acme", "--embedder", "builtin:lexical-v1"); !strings.Contains(out, "re-embedded 5 of 5 memories with builtin builtin/lexical-v1") {
		t.Fatalf("reembed to builtin:lexical-v1: %q", out)
	}
	if out := mustCLI(t, db, "reembed", "--tenant", "acme"); !strings.Contains(out, "re-embedded 5 of 5 memories with builtin builtin/hybrid-v2") {
		t.Fatalf("reembed from lexical-v1 to the default: %q", out)
	}
}

func TestEmbedderFlagErrors(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	srv := fakeOllama(t, "fake-minilm")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"Unknown", []string{"--embedder", "word2vec"}, 1, `unknown embedder "word2vec"`},
		{"NoModel", []string{"--embedder", "ollama:"}, 1, "ollama needs a model"},
		{"OpenAINoModel", []string{"--embedder", "openai"}, 1, "openai needs a model"},
		{"BuiltinWithURL", []string{"--embedder", "builtin", "--embedder-url", srv.URL}, 1, "builtin takes no --embedder-url"},
		{"BuiltinUnknownModel", []string{"--embedder", "builtin:lexical-v3"}, 1, "the built-in embedder has the models"},
		{"BadURL", []string{"--embedder", "ollama:m", "--embedder-url", "localhost:11434"}, 1, "embedder_url"},
		{"UnknownModel", []string{"--embedder", "ollama:llama-unknown", "--embedder-url", srv.URL}, 1, `embedder: ollama (model "llama-unknown") does not know the model`},
		{"WrongDim", []string{"--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL, "--embedder-dim", "768"}, 1, "384 dimensions for input 0, expected 768 (as configured)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"remember", "--tenant", "acme", "--principal", "alice"}, c.args...)
			code, _, errs := cli(t, db, "", append(args, "Alice's favourite number is 4711")...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d: %q, want %d with %q", code, errs, c.code, c.want)
			}
			if strings.Contains(errs, "4711") {
				t.Fatal("the error quotes the content")
			}
		})
	}
	// With --server the server's embedder applies: the flag is refused.
	code, _, errs := runWith("--server", "http://127.0.0.1:1", "", "remember", "--principal", "alice", "--embedder", "ollama:fake-minilm", "x")
	if code != 2 || !strings.Contains(errs, "with --server the server's own embedder applies") {
		t.Fatalf("--embedder with --server: exit %d, %q", code, errs)
	}
	// Nothing was written by any of them.
	if out := mustCLI(t, db, "counts", "--tenant", "acme", "--json"); strings.Contains(out, `"n"`) {
		t.Fatalf("counts after refused remembers: %s", out)
	}
}

func TestServeProbesTheEmbedder(t *testing.T) {
	t.Parallel()
	srv := fakeOllama(t, "fake-minilm")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"UnknownModel", []string{"--embedder", "ollama:nomic-embed-text", "--embedder-url", srv.URL}, `embedder: ollama (model "nomic-embed-text") does not know the model`},
		{"WrongDim", []string{"--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL, "--embedder-dim", "1024"}, "expected 1024 (as configured)"},
		{"NoEndpoint", []string{"--embedder", "openai:fake-minilm", "--embedder-url", srv.URL}, "has no embeddings endpoint at the configured URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			code, out, errs := cli(t, db, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(out, "serving") {
				t.Fatalf("serve: exit %d, stdout %q, stderr %q; want a failed start saying %q", code, out, errs, c.want)
			}
		})
	}
	// Control: the right model serves, and says which embedder it probed.
	db := newDB(t)
	s := startServe(t, db, "--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL)
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if logs := s.stderr.String(); !strings.Contains(logs, `"msg":"embedder ready","provider":"ollama","model":"fake-minilm","dim":384`) || strings.Contains(logs, srv.URL) {
		t.Fatalf("serve log:\n%s", logs)
	}
}

// TestReembedWhileServing: a server over the database keeps answering
// recalls while "memgate reembed" rewrites the vectors underneath.
func TestReembedWhileServing(t *testing.T) {
	// MEMGATE_API_KEY is set with t.Setenv: not parallel.
	t.Setenv("MEMGATE_SERVER", "")
	db := newDB(t)
	for i := range 40 {
		mustCLI(t, db, "remember", "--tenant", "default", "--principal", "alice", fmt.Sprintf("%s (note %d)", walkFacts[i%len(walkFacts)], i))
	}
	srv := fakeOllama(t, "fake-minilm")
	emb := []string{"--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL}
	s := startServe(t, db, emb...)
	key := secretRE.FindString(s.stdout.String())
	if key == "" {
		t.Fatalf("no admin key:\n%s", s.stdout)
	}
	t.Setenv(apiKeyEnv, key)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	recalls := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, out, errs := remote(t, s.url, "", "recall", "--principal", "alice", "--json", "Where does Alice walk her dog?")
			mu.Lock()
			recalls++
			if code != 0 || !strings.Contains(out, `"results"`) {
				failures = append(failures, fmt.Sprintf("exit %d: %s", code, errs))
			}
			mu.Unlock()
		}
	})
	code, out, errs := cli(t, db, "", append([]string{"reembed", "--tenant", "default", "--batch", "5"}, emb...)...)
	close(stop)
	wg.Wait()
	if code != 0 || !strings.Contains(out, "re-embedded 40 of 40") {
		t.Fatalf("reembed while serving: exit %d, %q, %q", code, out, errs)
	}
	if len(failures) > 0 || recalls == 0 {
		t.Fatalf("%d of %d recalls failed during reembed: %v", len(failures), recalls, failures)
	}
	r := parseRecall(t, mustRemote(t, s.url, "recall", "--principal", "alice", "--explain", "--json", "Where does Alice walk her dog?"))
	if r.Explain.Embedder.Model != "fake-minilm" {
		t.Fatalf("server recall embedded with %+v", r.Explain.Embedder)
	}
	// The server's index followed the database's change sequence: the
	// new vectors count, without a restart.
	if h := r.Results[0]; h.Explain.StaleEmbedding || h.Explain.Vector <= 0 {
		t.Fatalf("server recall after reembed: %+v, want vector evidence", h.Explain)
	}
}

// TestReembedPostgres re-embeds a PostgreSQL database (the SQLite one
// migrated there), resumably, like the SQLite one.
func TestReembedPostgres(t *testing.T) {
	t.Parallel()
	pg := pgtest.SchemaURL(t)
	db := newDB(t)
	for _, f := range walkFacts {
		mustCLI(t, db, "remember", "--tenant", "acme", "--principal", "alice", f)
	}
	if code, _, errs := runMemgate("migrate", "--from", "sqlite:"+db, "--to", "postgres:"+pg); code != 0 {
		t.Fatalf("migrate: %s", errs)
	}
	srv := fakeOllama(t, "fake-minilm")
	args := []string{"reembed", "--tenant", "acme", "--postgres", pg, "--embedder", "ollama:fake-minilm", "--embedder-url", srv.URL}
	code, out, errs := runMemgate(args...)
	if code != 0 || !strings.Contains(out, "re-embedded 5 of 5 memories with ollama fake-minilm") {
		t.Fatalf("reembed on PostgreSQL: exit %d, %q, %q", code, out, errs)
	}
	if code, out, _ := runMemgate(args...); code != 0 || !strings.Contains(out, "re-embedded 0 of 5 memories") || !strings.Contains(out, "5 were already current") {
		t.Fatalf("second reembed on PostgreSQL: %q", out)
	}
	// --db with --postgres is refused.
	if code, _, errs := runMemgate(append(args, "--db", db)...); code != 2 || !strings.Contains(errs, "name two databases") {
		t.Fatalf("--db with --postgres: exit %d %q", code, errs)
	}
}
