package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/ollama"
)

// server is an httptest Ollama: it records every request and answers with
// handle (default: one vector per input, [index+1, 1, 0]).
type server struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r *http.Request, body request)
}

type recorded struct {
	method, path, contentType string
	raw                       map[string]any
	body                      request
}

type request struct {
	Model    string   `json:"model"`
	Input    []string `json:"input"`
	Truncate *bool    `json:"truncate"`
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body request)) *server {
	t.Helper()
	s := &server{handle: handle}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body request
		var raw map[string]any
		json.Unmarshal(b, &body)
		json.Unmarshal(b, &raw)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type"), raw: raw, body: body})
		s.mu.Unlock()
		if s.handle != nil {
			s.handle(w, r, body)
			return
		}
		answer(w, body.Model, indexVectors(len(body.Input), 0))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func answer(w http.ResponseWriter, model string, vecs any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"model": model, "embeddings": vecs})
}

func indexVectors(n, from int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{float64(from + i + 1), 1, 0}
	}
	return out
}

// sleeper records the waits between retries instead of taking them.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func newEmbedder(t *testing.T, url string, mod func(*ollama.EmbedderConfig)) (*ollama.Embedder, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	cfg := ollama.EmbedderConfig{Model: "nomic-embed-text", URL: url, HTTP: provider.HTTP{Sleep: sl.Sleep}}
	if mod != nil {
		mod(&cfg)
	}
	e, err := ollama.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, sl
}

// secretText is input that must never appear in an error.
const secretText = "Alice's door code is 4711 and her doctor is Dr. Kim"

func TestWireFormatAndProvenance(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		answer(w, "nomic-embed-text:latest", indexVectors(len(body.Input), 0))
	})
	e, _ := newEmbedder(t, s.URL+"/", nil)
	embs, err := e.Embed(t.Context(), []string{"first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/api/embed" || r.contentType != "application/json" {
		t.Fatalf("request %s %s (%s), want POST /api/embed (application/json)", r.method, r.path, r.contentType)
	}
	if r.body.Model != "nomic-embed-text" || fmt.Sprint(r.body.Input) != "[first second]" || r.body.Truncate == nil || !*r.body.Truncate {
		t.Fatalf("body %+v, want model, input list and truncate true", r.raw)
	}
	if len(r.raw) != 3 {
		t.Fatalf("body has fields %v, want model, input, truncate", r.raw)
	}
	// Provenance is the producer's: the model the server reports, the
	// dimension of the vector.
	for i, emb := range embs {
		if emb.Provider != "ollama" || emb.Model != "nomic-embed-text:latest" || emb.Dim != 3 || emb.Vector[0] != float32(i+1) {
			t.Fatalf("embedding %d = %+v", i, emb)
		}
		if err := emb.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModelFromConfigWhenTheServerNamesNone(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		answer(w, "", indexVectors(len(body.Input), 0))
	})
	e, _ := newEmbedder(t, s.URL, nil)
	embs, err := e.Embed(t.Context(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if embs[0].Model != "nomic-embed-text" {
		t.Fatalf("model %q, want the configured one", embs[0].Model)
	}
}

func TestBatchesWithAMaximumInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		mu.Lock()
		from := seen
		seen += len(body.Input)
		mu.Unlock()
		answer(w, body.Model, indexVectors(len(body.Input), from))
	})
	e, _ := newEmbedder(t, s.URL, func(c *ollama.EmbedderConfig) { c.MaxBatch = 4 })
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	embs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	var sizes []int
	for _, r := range reqs {
		sizes = append(sizes, len(r.body.Input))
	}
	if fmt.Sprint(sizes) != "[4 4 2]" {
		t.Fatalf("batch sizes %v, want [4 4 2] (ceil(10/4) requests)", sizes)
	}
	for i, emb := range embs {
		if emb.Vector[0] != float32(i+1) {
			t.Fatalf("embedding %d has vector %v: order lost", i, emb.Vector)
		}
	}
	if reqs[2].body.Input[1] != "text 9" {
		t.Fatalf("last batch %v", reqs[2].body.Input)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	type tc struct {
		name     string
		status   int
		body     string
		code     string
		field    string
		attempts int    // requests expected (retries included)
		want     string // in the message
	}
	retries := provider.DefaultEmbedderMaxRetries + 1
	for _, c := range []tc{
		{"UnknownModel", 404, `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`, memgate.EINVALID, "embedder", 1, "does not know the model"},
		{"NoEndpoint", 404, `404 page not found`, memgate.EINVALID, "embedder", 1, "check the URL"},
		{"BadRequest", 400, `{"error":"invalid input type"}`, memgate.EINVALID, "", 1, "invalid input type"},
		{"ServerError", 500, `{"error":"llama runner process has terminated"}`, memgate.EUNAVAILABLE, "", retries, "500"},
		{"BadGateway", 502, `bad gateway`, memgate.EUNAVAILABLE, "", retries, "502"},
		{"MalformedJSON", 200, `{"model":"m","embeddings":[[0.1, 0.2`, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"NoEmbeddings", 200, `{"model":"m"}`, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"WrongCount", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3]]}`, memgate.EUNAVAILABLE, "", 1, "1 vectors for 2 texts"},
		{"EmptyVector", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],[]]}`, memgate.EUNAVAILABLE, "", 1, "empty vector for input 1"},
		{"ZeroVector", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],[0,0,0]]}`, memgate.EUNAVAILABLE, "", 1, "zero vector for input 1"},
		{"NonFinite", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],[1e39,0.2,0.3]]}`, memgate.EUNAVAILABLE, "", 1, "non-finite value for input 1"},
		{"Null", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],[null,0.2,0.3]]}`, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"NotANumber", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],["NaN",0.2,0.3]]}`, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"MixedDimensions", 200, `{"model":"m","embeddings":[[0.1,0.2,0.3],[0.1,0.2]]}`, memgate.EINVALID, "embedder", 1, "2 dimensions for input 1, expected 3"},
		{"EchoesInput", 400, `{"error":"cannot embed \"` + secretText + `\""}`, memgate.EINVALID, "", 1, "withheld"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			e, sl := newEmbedder(t, s.URL, nil)
			_, err := e.Embed(t.Context(), []string{secretText, "second " + secretText})
			if memgate.ErrorCode(err) != c.code || memgate.ErrorField(err) != c.field {
				t.Fatalf("error %v: code %q field %q, want %q %q", err, memgate.ErrorCode(err), memgate.ErrorField(err), c.code, c.field)
			}
			msg := memgate.ErrorMessage(err)
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, `ollama (model "nomic-embed-text")`) {
				t.Fatalf("message %q, want it to name the embedder and say %q", msg, c.want)
			}
			if strings.Contains(err.Error(), "4711") || strings.Contains(err.Error(), "Dr. Kim") {
				t.Fatalf("error quotes the input: %v", err)
			}
			if n := len(s.requests()); n != c.attempts {
				t.Fatalf("%d requests, want %d", n, c.attempts)
			}
			if n := len(sl.got()); n != c.attempts-1 {
				t.Fatalf("%d waits, want %d", n, c.attempts-1)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	calls := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		calls++
		if calls == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":"too many requests"}`)
			return
		}
		answer(w, body.Model, indexVectors(len(body.Input), 0))
	})
	e, sl := newEmbedder(t, s.URL, nil)
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if w := sl.got(); len(w) != 1 || w[0] != 3*time.Second {
		t.Fatalf("waits %v, want exactly the 3s the server asked for", w)
	}
	// Control: without Retry-After the wait is a backoff below the cap.
	calls = 0
	s.handle = func(w http.ResponseWriter, r *http.Request, body request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		answer(w, body.Model, indexVectors(len(body.Input), 0))
	}
	e2, sl2 := newEmbedder(t, s.URL, nil)
	if _, err := e2.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if w := sl2.got(); len(w) != 1 || w[0] <= 0 || w[0] > provider.DefaultMaxRetryWait || w[0] == 3*time.Second {
		t.Fatalf("backoff waits %v", w)
	}
}

func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	e, sl := newEmbedder(t, s.URL, nil)
	_, err := e.Embed(t.Context(), []string{"x"})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Fatalf("err %v", err)
	}
	if len(sl.got()) != 0 || len(s.requests()) != 1 {
		t.Fatalf("waited %v over %d requests, want no wait and one request", sl.got(), len(s.requests()))
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	e, sl := newEmbedder(t, s.URL, func(c *ollama.EmbedderConfig) { c.HTTP.Timeout = 50 * time.Millisecond; c.HTTP.MaxRetries = 1 })
	_, err := e.Embed(t.Context(), []string{"x"})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(memgate.ErrorMessage(err), "did not answer within 50ms") {
		t.Fatalf("err %v", err)
	}
	if len(sl.got()) != 1 {
		t.Fatalf("waits %v, want one retry", sl.got())
	}
}

func TestContextCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		cancel() // the caller gives up while the server works
		<-r.Context().Done()
	})
	e, sl := newEmbedder(t, s.URL, nil)
	_, err := e.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(sl.got()) != 0 || len(s.requests()) != 1 {
		t.Fatal("retried after the caller cancelled")
	}
	// A context done before the call makes no request.
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) || len(s.requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(s.requests()))
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	e, sl := newEmbedder(t, url, nil)
	_, err := e.Embed(t.Context(), []string{secretText})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(memgate.ErrorMessage(err), "is unreachable") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "4711") {
		t.Fatal("error quotes the input")
	}
	if len(sl.got()) != provider.DefaultEmbedderMaxRetries {
		t.Fatalf("waits %v, want %d retries", sl.got(), provider.DefaultEmbedderMaxRetries)
	}
}

func TestDimension(t *testing.T) {
	t.Parallel()
	dim := 3
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		v := make([][]float64, len(body.Input))
		for i := range v {
			v[i] = make([]float64, dim)
			v[i][0] = 1
		}
		answer(w, body.Model, v)
	})
	// Configured: the probe checks it.
	e, _ := newEmbedder(t, s.URL, func(c *ollama.EmbedderConfig) { c.Dim = 768 })
	_, err := e.Probe(t.Context())
	if memgate.ErrorCode(err) != memgate.EINVALID || !strings.Contains(err.Error(), "3 dimensions for input 0, expected 768 (as configured)") {
		t.Fatalf("probe with the wrong dimension: %v", err)
	}
	// Not configured: the probe fixes it, and a later answer of another
	// dimension (the model was swapped under the same name) is refused.
	e, _ = newEmbedder(t, s.URL, nil)
	emb, err := e.Probe(t.Context())
	if err != nil || emb.Dim != 3 || emb.Provider != "ollama" || emb.Model != "nomic-embed-text" {
		t.Fatalf("probe: %+v, %v", emb, err)
	}
	dim = 4
	if _, err := e.Embed(t.Context(), []string{"x"}); memgate.ErrorCode(err) != memgate.EINVALID || !strings.Contains(err.Error(), "expected 3 (as it did before)") {
		t.Fatalf("changed dimension: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		cfg   ollama.EmbedderConfig
		field string
	}{
		{"NoModel", ollama.EmbedderConfig{}, "embedder"},
		{"BadURL", ollama.EmbedderConfig{Model: "m", URL: "localhost:11434"}, "embedder_url"},
		{"Credentials", ollama.EmbedderConfig{Model: "m", URL: "http://u:p@localhost:11434"}, "embedder_url"},
		{"NegativeDim", ollama.EmbedderConfig{Model: "m", Dim: -1}, "embedder_dim"},
	} {
		if _, err := ollama.NewEmbedder(c.cfg); memgate.ErrorField(err) != c.field {
			t.Errorf("%s: %v, want a %s error", c.name, err, c.field)
		}
	}
	if _, err := ollama.NewEmbedder(ollama.EmbedderConfig{Model: "m"}); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}
