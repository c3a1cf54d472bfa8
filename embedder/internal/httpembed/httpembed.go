// Package httpembed is what memgate's network embedders (ollama, openai)
// share: batching with a maximum, one JSON POST per batch through
// internal/httpmodel (a timeout per attempt, bounded retries with backoff
// on transport failures, 408, 429 and 5xx honouring Retry-After, a bounded
// response body, errors mapped to memgate codes), and checks of every
// vector (present, finite, non-zero, of one dimension, the expected one).
//
// It must never put input text or the API key in an error, and never log:
// an error message names the provider, the configured model, the status and
// what went wrong; a message from the server is quoted only when it quotes
// no part of the input (see httpmodel.Redact). Provenance is the
// producer's: the model the server reports when it reports one, and the
// dimension of the vectors themselves, never a URL.
package httpembed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/internal/httpmodel"
)

// Defaults shared by the network embedders.
const (
	// DefaultTimeout bounds one HTTP attempt (connect, request, response).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a failed attempt is retried.
	DefaultMaxRetries = 3
	// DefaultMaxBatch is the most texts sent in one request (the
	// default client batch limit of Hugging Face TEI; Ollama and OpenAI
	// take more).
	DefaultMaxBatch = 32
	// DefaultMaxRetryWait is the longest wait before a retry (see
	// httpmodel.DefaultMaxRetryWait).
	DefaultMaxRetryWait = httpmodel.DefaultMaxRetryWait
	// MaxResponseBytes bounds a response body.
	MaxResponseBytes = 64 << 20
)

// Config configures a Client. The provider packages fill it from their own
// documented Config.
type Config struct {
	Provider string   // provenance and messages: "ollama", "openai"
	Model    string   // the configured model: sent, and named in messages
	Endpoint *url.URL // the URL every request is POSTed to
	// APIKey, when set, is sent as a bearer token and kept out of errors.
	APIKey string
	// Dim is the expected dimension; 0 means the first answer fixes it.
	Dim          int
	HTTPClient   *http.Client
	Timeout      time.Duration
	MaxRetries   int // negative: no retry
	MaxBatch     int
	MaxRetryWait time.Duration
	// Sleep waits d or until ctx is done (default: a timer); tests inject
	// one that records the waits instead of taking them.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Retry-After dates are read against (default
	// time.Now).
	Now func() time.Time
}

// Wire is one provider's request and response format.
type Wire interface {
	// Request returns the JSON body that embeds texts.
	Request(texts []string) any
	// Response decodes a 2xx body into one vector per text, in the order
	// of texts, and the model the server reports ("" when it does not).
	Response(body []byte, n int) (vecs [][]float32, model string, err error)
	// The provider's error answers (httpmodel.OpenAIErrors,
	// httpmodel.OllamaErrors).
	httpmodel.ErrorWire
}

// Client embeds through one HTTP endpoint. It is safe for concurrent use.
type Client struct {
	cfg  Config
	wire Wire
	http *httpmodel.Client
	dim  atomic.Int64 // expected dimension; 0 until known
}

// New returns a Client; cfg must be complete (the provider packages apply
// their defaults first).
func New(cfg Config, w Wire) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	c := &Client{cfg: cfg, wire: w}
	c.http = httpmodel.New(httpmodel.Config{
		Endpoint: cfg.Endpoint, APIKey: cfg.APIKey, HTTPClient: cfg.HTTPClient,
		Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries, MaxRetryWait: cfg.MaxRetryWait,
		MaxResponseBytes: MaxResponseBytes, Sleep: cfg.Sleep, Now: cfg.Now,
		Field: "embedder", Service: "embeddings", Sent: "input",
		Fail: c.fail,
		// A cancelled call fails with the context's error, prefixed with
		// the provider.
		Cancelled: func(err error) error { return fmt.Errorf("%s: %w", cfg.Provider, err) },
	}, w)
	c.dim.Store(int64(cfg.Dim))
	return c
}

// ProbeText is what Probe embeds: fixed, and no one's data.
const ProbeText = "memgate embedder probe"

// Probe embeds ProbeText and returns its embedding: it checks that the
// endpoint answers, the model exists and the dimension is the expected one
// (and fixes it when none was configured).
func (c *Client) Probe(ctx context.Context) (memgate.Embedding, error) {
	embs, err := c.Embed(ctx, []string{ProbeText})
	if err != nil {
		return memgate.Embedding{}, err
	}
	return embs[0], nil
}

// Embed returns one embedding per text, in order, sending at most MaxBatch
// texts per request, one request at a time.
func (c *Client) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]memgate.Embedding, 0, len(texts))
	for lo := 0; lo < len(texts); lo += c.cfg.MaxBatch {
		batch := texts[lo:min(lo+c.cfg.MaxBatch, len(texts))]
		embs, err := c.embedBatch(ctx, batch, lo)
		if err != nil {
			return nil, err
		}
		out = append(out, embs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string, offset int) ([]memgate.Embedding, error) {
	body, err := json.Marshal(c.wire.Request(texts))
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.cfg.Provider, err)
	}
	resp, err := c.http.Post(ctx, body, texts)
	if err != nil {
		return nil, err
	}
	vecs, model, err := c.wire.Response(resp, len(texts))
	if err != nil {
		return nil, c.fail(memgate.EUNAVAILABLE, "", "answered with a malformed response", err)
	}
	if len(vecs) != len(texts) {
		return nil, c.fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("answered %d vectors for %d texts", len(vecs), len(texts)), nil)
	}
	if model == "" {
		model = c.cfg.Model
	}
	out := make([]memgate.Embedding, len(vecs))
	for i, v := range vecs {
		if err := c.checkVector(v, offset+i); err != nil {
			return nil, err
		}
		out[i] = memgate.Embedding{Provider: c.cfg.Provider, Model: model, Dim: len(v), Vector: v}
	}
	return out, nil
}

// checkVector refuses a vector no index should hold: empty, non-finite,
// zero, or of another dimension than expected. The first good vector fixes
// the dimension when none was configured.
func (c *Client) checkVector(v []float32, i int) error {
	if len(v) == 0 {
		return c.fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("returned an empty vector for input %d", i), nil)
	}
	var norm float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return c.fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("returned a vector with a non-finite value for input %d", i), nil)
		}
		norm += f * f
	}
	if norm == 0 {
		return c.fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("returned a zero vector for input %d", i), nil)
	}
	want := c.dim.Load()
	if want == 0 && c.dim.CompareAndSwap(0, int64(len(v))) {
		return nil
	}
	if want = c.dim.Load(); int64(len(v)) != want {
		how := "as it did before"
		if c.cfg.Dim > 0 {
			how = "as configured"
		}
		return c.fail(memgate.EINVALID, "embedder", fmt.Sprintf("returned a vector of %d dimensions for input %d, expected %d (%s): the model or its settings changed", len(v), i, want, how), nil)
	}
	return nil
}

// fail returns an error with code and field whose message names the
// provider and model; cause, when set, follows it in the error chain (for
// the operator) but not in the message a caller is shown.
func (c *Client) fail(code, field, what string, cause error) error {
	// With the field "embedder" the message reads "embedder: ollama
	// (model …) …"; without one it names the embedder itself.
	prefix := "embedder "
	if field == "embedder" {
		prefix = ""
	}
	return httpmodel.Error(code, field, fmt.Sprintf("%s%s (model %q) %s", prefix, c.cfg.Provider, c.cfg.Model, what), cause)
}

// Float is a JSON number decoded as a float32 that refuses null and reads
// a number beyond float32's range as ±Inf (which the vector check then
// refuses), instead of failing the whole decode or reading 0.
type Float float32

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return errors.New("null in a vector")
	}
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("not a number in a vector")
	}
	*f = Float(v)
	return nil
}

// Vector converts a decoded vector.
func Vector(fs []Float) []float32 {
	v := make([]float32, len(fs))
	for i, f := range fs {
		v[i] = float32(f)
	}
	return v
}

// ParseURL checks an embedder's base URL (see httpmodel.ParseURL).
func ParseURL(raw string) (*url.URL, error) {
	return httpmodel.ParseURL("embedder_url", "http://localhost:11434", raw)
}
