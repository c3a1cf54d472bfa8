package openai_test

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
	"github.com/memgate/memgate/provider/openai"
)

// server is an httptest OpenAI embeddings endpoint: it records every
// request and answers with handle (default: one vector per input,
// [index+1, 1, 0], in reverse order of index, as servers may).
type server struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r *http.Request, body request)
}

type recorded struct {
	method, path, contentType, auth string
	raw                             map[string]any
	body                            request
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
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
		s.reqs = append(s.reqs, recorded{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type"),
			auth: r.Header.Get("Authorization"), raw: raw, body: body})
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

// answer writes the OpenAI response shape, data in reverse index order.
func answer(w http.ResponseWriter, model string, vecs [][]float64) {
	data := make([]map[string]any, 0, len(vecs))
	for i := len(vecs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vecs[i]})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": model,
		"usage": map[string]int{"prompt_tokens": 3, "total_tokens": 3},
	})
}

func apiError(w http.ResponseWriter, status int, msg, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}

func indexVectors(n, from int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{float64(from + i + 1), 1, 0}
	}
	return out
}

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

const apiKey = "sk-test-0123456789abcdef"

func newEmbedder(t *testing.T, url string, mod func(*openai.EmbedderConfig)) (*openai.Embedder, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	cfg := openai.EmbedderConfig{Model: "text-embedding-3-small", URL: url + "/v1", APIKey: apiKey, HTTP: provider.HTTP{Sleep: sl.Sleep}}
	if mod != nil {
		mod(&cfg)
	}
	e, err := openai.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, sl
}

const secretText = "Alice's door code is 4711 and her doctor is Dr. Kim"

func TestWireFormatAndProvenance(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		answer(w, "text-embedding-3-small-2024", indexVectors(len(body.Input), 0))
	})
	e, _ := newEmbedder(t, s.URL, nil)
	embs, err := e.Embed(t.Context(), []string{"first", "second", "third"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/v1/embeddings" || r.contentType != "application/json" {
		t.Fatalf("request %s %s (%s), want POST /v1/embeddings", r.method, r.path, r.contentType)
	}
	if r.auth != "Bearer "+apiKey {
		t.Fatalf("Authorization %q", r.auth)
	}
	if r.body.Model != "text-embedding-3-small" || fmt.Sprint(r.body.Input) != "[first second third]" || r.body.EncodingFormat != "float" || r.body.Dimensions != nil {
		t.Fatalf("body %v", r.raw)
	}
	// data came in reverse order: ordered by index. The model is the one
	// the server reports.
	for i, emb := range embs {
		if emb.Provider != "openai" || emb.Model != "text-embedding-3-small-2024" || emb.Dim != 3 || emb.Vector[0] != float32(i+1) {
			t.Fatalf("embedding %d = %+v", i, emb)
		}
	}
}

func TestDimensionsParameter(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		v := make([][]float64, len(body.Input))
		for i := range v {
			v[i] = make([]float64, *body.Dimensions)
			v[i][i%*body.Dimensions] = 1
		}
		answer(w, body.Model, v)
	})
	e, _ := newEmbedder(t, s.URL, func(c *openai.EmbedderConfig) { c.Dimensions = 8 })
	emb, err := e.Probe(t.Context())
	if err != nil || emb.Dim != 8 {
		t.Fatalf("probe %+v %v", emb, err)
	}
	if d := s.requests()[0].body.Dimensions; d == nil || *d != 8 {
		t.Fatalf("dimensions sent: %v", s.requests()[0].raw)
	}
}

func TestNoKeyNoAuthorizationAndBareURLGetsV1(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	e, err := openai.NewEmbedder(openai.EmbedderConfig{Model: "bge-m3", URL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r := s.requests()[0]
	if r.auth != "" || r.path != "/v1/embeddings" {
		t.Fatalf("auth %q path %q", r.auth, r.path)
	}
}

func TestProviderOverride(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	e, _ := newEmbedder(t, s.URL, func(c *openai.EmbedderConfig) { c.Provider = "vllm" })
	embs, err := e.Embed(t.Context(), []string{"x"})
	if err != nil || embs[0].Provider != "vllm" {
		t.Fatalf("%+v %v", embs, err)
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
	e, _ := newEmbedder(t, s.URL, func(c *openai.EmbedderConfig) { c.MaxBatch = 3 })
	texts := make([]string, 7)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	embs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range s.requests() {
		sizes = append(sizes, len(r.body.Input))
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Fatalf("batch sizes %v, want [3 3 1]", sizes)
	}
	for i, emb := range embs {
		if emb.Vector[0] != float32(i+1) {
			t.Fatalf("embedding %d: order lost", i)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	retries := provider.DefaultEmbedderMaxRetries + 1
	for _, c := range []struct {
		name     string
		handle   func(w http.ResponseWriter)
		code     string
		field    string
		attempts int
		want     string
	}{
		{"UnknownModel", func(w http.ResponseWriter) {
			apiError(w, 404, "The model `text-embedding-3-small` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found")
		}, memgate.EINVALID, "embedder", 1, "does not know the model"},
		{"UnknownModelVLLM", func(w http.ResponseWriter) {
			apiError(w, 404, "The model `text-embedding-3-small` does not exist.", "NotFoundError", "")
		}, memgate.EINVALID, "embedder", 1, "does not know the model"},
		{"BadKeyEchoed", func(w http.ResponseWriter) {
			apiError(w, 401, "Incorrect API key provided: "+apiKey+".", "invalid_request_error", "invalid_api_key")
		}, memgate.EINVALID, "embedder", 1, "refused the credentials"},
		{"Forbidden", func(w http.ResponseWriter) {
			apiError(w, 403, "You are not allowed to use this model.", "invalid_request_error", "")
		}, memgate.EINVALID, "embedder", 1, "refused the credentials"},
		{"TooLong", func(w http.ResponseWriter) {
			apiError(w, 400, "This model's maximum context length is 8192 tokens, however you requested 9000 tokens.", "invalid_request_error", "")
		}, memgate.EINVALID, "", 1, "maximum context length is 8192 tokens"},
		{"EchoesInput", func(w http.ResponseWriter) {
			apiError(w, 400, "Invalid input: '"+secretText+"'", "invalid_request_error", "")
		}, memgate.EINVALID, "", 1, "withheld"},
		{"StringError", func(w http.ResponseWriter) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"input must not be empty"}`)
		}, memgate.EINVALID, "", 1, "input must not be empty"},
		{"RateLimitedThroughout", func(w http.ResponseWriter) {
			apiError(w, 429, "Rate limit reached", "requests", "rate_limit_exceeded")
		}, memgate.EUNAVAILABLE, "", retries, "429"},
		{"ServerError", func(w http.ResponseWriter) {
			apiError(w, 500, "The server had an error while processing your request.", "server_error", "")
		}, memgate.EUNAVAILABLE, "", retries, "500"},
		{"MalformedJSON", func(w http.ResponseWriter) {
			io.WriteString(w, `{"object":"list","data":[{"index":0,"embedding":[0.1,`)
		}, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"MissingIndex", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}],"model":"m"}`)
		}, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"WrongCount", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]}],"model":"m"}`)
		}, memgate.EUNAVAILABLE, "", 1, "malformed"},
		{"ZeroVector", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,0]}],"model":"m"}`)
		}, memgate.EUNAVAILABLE, "", 1, "zero vector for input 1"},
		{"NonFinite", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[-1e300,0]},{"index":1,"embedding":[0,1]}],"model":"m"}`)
		}, memgate.EUNAVAILABLE, "", 1, "non-finite value for input 0"},
		{"EmptyVector", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[0,1]}],"model":"m"}`)
		}, memgate.EUNAVAILABLE, "", 1, "empty vector for input 0"},
		{"MixedDimensions", func(w http.ResponseWriter) {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1,0]}],"model":"m"}`)
		}, memgate.EINVALID, "embedder", 1, "3 dimensions for input 1, expected 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) { c.handle(w) })
			e, sl := newEmbedder(t, s.URL, nil)
			_, err := e.Embed(t.Context(), []string{secretText, "second " + secretText})
			if memgate.ErrorCode(err) != c.code || memgate.ErrorField(err) != c.field {
				t.Fatalf("error %v: code %q field %q, want %q %q", err, memgate.ErrorCode(err), memgate.ErrorField(err), c.code, c.field)
			}
			msg := memgate.ErrorMessage(err)
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, `openai (model "text-embedding-3-small")`) {
				t.Fatalf("message %q, want it to name the embedder and say %q", msg, c.want)
			}
			for _, leak := range []string{"4711", "Dr. Kim", apiKey} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("error quotes %q: %v", leak, err)
				}
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
	var mu sync.Mutex
	calls := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1:
			w.Header().Set("Retry-After", "2")
			apiError(w, 429, "Rate limit reached for requests", "requests", "rate_limit_exceeded")
		case 2:
			w.Header().Set("Retry-After", "0")
			apiError(w, 503, "overloaded", "server_error", "")
		default:
			answer(w, body.Model, indexVectors(len(body.Input), 0))
		}
	})
	e, sl := newEmbedder(t, s.URL, nil)
	embs, err := e.Embed(t.Context(), []string{"x"})
	if err != nil || len(embs) != 1 {
		t.Fatal(err)
	}
	if w := sl.got(); len(w) != 2 || w[0] != 2*time.Second || w[1] != 0 {
		t.Fatalf("waits %v, want [2s 0s]: what the server asked", w)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	calls := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		calls++
		if calls == 1 {
			w.Header().Set("Retry-After", time.Now().Add(time.Minute).UTC().Format(http.TimeFormat))
			apiError(w, 429, "slow down", "requests", "")
			return
		}
		answer(w, body.Model, indexVectors(len(body.Input), 0))
	})
	e, sl := newEmbedder(t, s.URL, func(c *openai.EmbedderConfig) { c.HTTP.MaxRetryWait = 2 * time.Minute })
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	// The date is a minute away, to the second, read against the real
	// clock: the wait is up to a minute, and more than the backoff's.
	if w := sl.got(); len(w) != 1 || w[0] <= 30*time.Second || w[0] > time.Minute {
		t.Fatalf("waits %v, want about a minute", w)
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
	e, sl := newEmbedder(t, s.URL, func(c *openai.EmbedderConfig) { c.HTTP.Timeout = 30 * time.Millisecond; c.HTTP.MaxRetries = -1 })
	_, err := e.Embed(t.Context(), []string{"x"})
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(memgate.ErrorMessage(err), "did not answer within 30ms") {
		t.Fatalf("err %v", err)
	}
	// At most one request: under load the timeout may even fire before
	// the server sees it.
	if len(sl.got()) != 0 || len(s.requests()) > 1 {
		t.Fatal("retried with MaxRetries < 0")
	}
}

func TestContextCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body request) {
		cancel()
		<-r.Context().Done()
	})
	e, _ := newEmbedder(t, s.URL, nil)
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(s.requests()) != 1 {
		t.Fatal("retried after the caller cancelled")
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		cfg   openai.EmbedderConfig
		field string
	}{
		{"NoModel", openai.EmbedderConfig{}, "embedder"},
		{"BadURL", openai.EmbedderConfig{Model: "m", URL: "ftp://x"}, "embedder_url"},
		{"Query", openai.EmbedderConfig{Model: "m", URL: "http://x/v1?key=1"}, "embedder_url"},
		{"NegativeDimensions", openai.EmbedderConfig{Model: "m", Dimensions: -1}, "embedder_dim"},
		{"BadProvider", openai.EmbedderConfig{Model: "m", Provider: "a b"}, "provider"},
		{"KeyWithNewline", openai.EmbedderConfig{Model: "m", APIKey: "a\nb"}, "api_key"},
	} {
		if _, err := openai.NewEmbedder(c.cfg); memgate.ErrorField(err) != c.field {
			t.Errorf("%s: %v, want a %s error", c.name, err, c.field)
		}
	}
}
