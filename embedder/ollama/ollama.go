// Package ollama is a memgate embedder that calls an Ollama server's
// embedding API: POST {URL}/api/embed with a batch of inputs, as in
//
//	{"model":"nomic-embed-text","input":["a","b"],"truncate":true}
//	→ {"model":"nomic-embed-text","embeddings":[[…],[…]]}
//
// Every embedding carries provider "ollama", the model the server reports
// (the configured one when it reports none) and the dimension of the
// vector. Inputs longer than the model's context are truncated by the
// server (truncate: true), so a long memory is embedded from its beginning
// rather than refused; the text channel of recall still sees all of it.
//
// It speaks HTTP with the standard library only. It must never include
// input text in an error and never log (see packages httpembed and
// httpmodel).
package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/internal/httpembed"
	"github.com/memgate/memgate/internal/httpmodel"
)

// Provider is the provenance every embedding of this package carries.
const Provider = "ollama"

// Defaults for Config.
const (
	DefaultURL          = "http://localhost:11434"
	DefaultTimeout      = httpembed.DefaultTimeout
	DefaultMaxRetries   = httpembed.DefaultMaxRetries
	DefaultMaxBatch     = httpembed.DefaultMaxBatch
	DefaultMaxRetryWait = httpembed.DefaultMaxRetryWait
)

// Config configures an Embedder. Model is required; the rest have
// defaults.
type Config struct {
	Model string
	// URL is the server's base URL (default DefaultURL); requests go to
	// URL + "/api/embed".
	URL string
	// Dim is the dimension the model must answer with; 0 means the first
	// answer (Probe's, when called) fixes it. Either way a later answer of
	// another dimension is refused.
	Dim int
	// Timeout bounds one HTTP attempt (default DefaultTimeout).
	Timeout time.Duration
	// MaxRetries is how often a transport failure, 408, 429 or 5xx is
	// retried (default DefaultMaxRetries; negative: never).
	MaxRetries int
	// MaxBatch is the most texts per request (default DefaultMaxBatch).
	MaxBatch int
	// MaxRetryWait is the longest wait before a retry (default
	// DefaultMaxRetryWait); a longer Retry-After fails the call at once.
	MaxRetryWait time.Duration
	// HTTPClient makes the requests (default: a new http.Client; its
	// Timeout, if any, applies on top of Timeout).
	HTTPClient *http.Client
	// Sleep waits between retries (default: a timer honouring ctx).
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case strings.TrimSpace(c.Model) == "":
		return memgate.FieldError("embedder", "ollama needs a model, as in ollama:nomic-embed-text")
	case c.Dim < 0:
		return memgate.FieldError("embedder_dim", "must not be negative")
	case c.Timeout < 0 || c.MaxRetryWait < 0:
		return memgate.FieldError("embedder_timeout", "must not be negative")
	case c.MaxBatch < 0:
		return memgate.FieldError("embedder_batch", "must not be negative")
	}
	_, err := httpembed.ParseURL(c.URL)
	return err
}

// Embedder calls an Ollama server. It is safe for concurrent use.
type Embedder struct {
	c *httpembed.Client
}

var (
	_ memgate.Embedder = (*Embedder)(nil)
	_ memgate.Prober   = (*Embedder)(nil)
)

// New returns an Embedder for cfg (defaults applied). It makes no request:
// call Probe to check the server and model before use.
func New(cfg Config) (*Embedder, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := httpembed.ParseURL(cfg.URL)
	c := httpembed.New(httpembed.Config{
		Provider: Provider, Model: cfg.Model, Endpoint: base.JoinPath("api", "embed"), Dim: cfg.Dim,
		HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		MaxBatch: cfg.MaxBatch, MaxRetryWait: cfg.MaxRetryWait, Sleep: cfg.Sleep,
	}, wire{model: cfg.Model})
	return &Embedder{c: c}, nil
}

// Embed returns one embedding per text, in order, in requests of at most
// MaxBatch texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	return e.c.Embed(ctx, texts)
}

// Probe embeds a fixed text and returns its embedding: the server answers,
// the model exists, and its dimension is Dim (or is now fixed).
func (e *Embedder) Probe(ctx context.Context) (memgate.Embedding, error) {
	return e.c.Probe(ctx)
}

// wire is Ollama's /api/embed format.
type wire struct {
	httpmodel.OllamaErrors
	model string
}

type request struct {
	Model    string   `json:"model"`
	Input    []string `json:"input"`
	Truncate bool     `json:"truncate"`
}

type response struct {
	Model      string              `json:"model"`
	Embeddings [][]httpembed.Float `json:"embeddings"`
}

func (w wire) Request(texts []string) any {
	return request{Model: w.model, Input: texts, Truncate: true}
}

func (wire) Response(body []byte, n int) ([][]float32, string, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, "", err
	}
	if r.Embeddings == nil {
		return nil, "", fmt.Errorf("no embeddings in the response")
	}
	vecs := make([][]float32, len(r.Embeddings))
	for i, e := range r.Embeddings {
		vecs[i] = httpembed.Vector(e)
	}
	return vecs, r.Model, nil
}
