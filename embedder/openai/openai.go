// Package openai is a memgate embedder that speaks the OpenAI embeddings
// API, POST {URL}/embeddings with a batch of inputs, as OpenAI itself and
// the OpenAI-compatible servers do (vLLM, llama.cpp server, Hugging Face
// TEI, LM Studio, LocalAI, Ollama's /v1):
//
//	{"model":"text-embedding-3-small","input":["a","b"],"encoding_format":"float","dimensions":512}
//	→ {"object":"list","data":[{"object":"embedding","index":0,"embedding":[…]},…],"model":"text-embedding-3-small","usage":{…}}
//
// data is ordered by index (servers may answer out of order). Every
// embedding carries provider "openai" (Config.Provider, for a deployment
// that wants another name), the model the server reports in "model" (the
// configured one when it reports none) and the dimension of the vector: the
// wire format, not the URL, is the provider, and provider and model are the
// whole provenance. The API key, when set, is sent as a bearer token and
// never appears in an error.
//
// It speaks HTTP with the standard library only. It must never include
// input text or the key in an error and never log (see packages httpembed and
// httpmodel).
package openai

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

// Provider is the default provenance of this package's embeddings.
const Provider = "openai"

// Defaults for Config.
const (
	DefaultURL          = "https://api.openai.com/v1"
	DefaultTimeout      = httpembed.DefaultTimeout
	DefaultMaxRetries   = httpembed.DefaultMaxRetries
	DefaultMaxBatch     = httpembed.DefaultMaxBatch
	DefaultMaxRetryWait = httpembed.DefaultMaxRetryWait
)

// Config configures an Embedder. Model is required; the rest have
// defaults.
type Config struct {
	Model string
	// URL is the API's base URL, /v1 included (default DefaultURL);
	// requests go to URL + "/embeddings". A URL without a path gets /v1,
	// so http://localhost:8000 means http://localhost:8000/v1.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Dimensions, when set, is sent as "dimensions" (OpenAI's
	// text-embedding-3 models shorten their vectors to it) and every
	// answer must have exactly that many values. Leave it 0 for a server
	// that refuses the parameter: the first answer (Probe's, when called)
	// then fixes the dimension, and a later answer of another is refused.
	Dimensions int
	// Provider is the provenance recorded (default Provider). Set it only
	// to tell apart two servers that serve different models under one name.
	Provider string
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
	// HTTPClient makes the requests (default: a new http.Client).
	HTTPClient *http.Client
	// Sleep waits between retries (default: a timer honouring ctx).
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Provider == "" {
		c.Provider = Provider
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
		return memgate.FieldError("embedder", "openai needs a model, as in openai:text-embedding-3-small")
	case c.Dimensions < 0:
		return memgate.FieldError("embedder_dim", "must not be negative")
	case c.Timeout < 0 || c.MaxRetryWait < 0:
		return memgate.FieldError("embedder_timeout", "must not be negative")
	case c.MaxBatch < 0:
		return memgate.FieldError("embedder_batch", "must not be negative")
	case strings.ContainsAny(c.APIKey, "\r\n"):
		return memgate.FieldError("api_key", "must be one line")
	}
	if c.Provider != "" {
		if err := memgate.CheckIdent("provider", c.Provider); err != nil {
			return err
		}
	}
	_, err := httpembed.ParseURL(c.URL)
	return err
}

// Embedder calls an OpenAI-compatible embeddings API. It is safe for
// concurrent use.
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
		Provider: cfg.Provider, Model: cfg.Model, Endpoint: httpmodel.OpenAIEndpoint(base, "embeddings"),
		APIKey: cfg.APIKey, Dim: cfg.Dimensions,
		HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		MaxBatch: cfg.MaxBatch, MaxRetryWait: cfg.MaxRetryWait, Sleep: cfg.Sleep,
	}, wire{model: cfg.Model, dimensions: cfg.Dimensions})
	return &Embedder{c: c}, nil
}

// Embed returns one embedding per text, in order, in requests of at most
// MaxBatch texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	return e.c.Embed(ctx, texts)
}

// Probe embeds a fixed text and returns its embedding: the server answers,
// accepts the key, knows the model, and its dimension is Dimensions (or is
// now fixed).
func (e *Embedder) Probe(ctx context.Context) (memgate.Embedding, error) {
	return e.c.Probe(ctx)
}

// wire is the OpenAI /v1/embeddings format.
type wire struct {
	httpmodel.OpenAIErrors
	model      string
	dimensions int
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     *int              `json:"index"`
		Embedding []httpembed.Float `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

func (w wire) Request(texts []string) any {
	return request{Model: w.model, Input: texts, EncodingFormat: "float", Dimensions: w.dimensions}
}

// Response orders data by index; every index in [0, n) must appear once.
// A server that sends no index at all is read in order.
func (wire) Response(body []byte, n int) ([][]float32, string, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, "", err
	}
	if len(r.Data) != n {
		return nil, "", fmt.Errorf("%d embeddings for %d inputs", len(r.Data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		} else if r.Data[0].Index != nil {
			return nil, "", fmt.Errorf("an embedding without an index")
		}
		if at < 0 || at >= n || vecs[at] != nil {
			return nil, "", fmt.Errorf("index out of range or repeated")
		}
		vecs[at] = httpembed.Vector(d.Embedding)
	}
	return vecs, r.Model, nil
}
