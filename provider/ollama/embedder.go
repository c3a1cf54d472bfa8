package ollama

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/internal/httpmodel"
)

// EmbedderConfig configures an Embedder. Model is required; the rest have
// defaults.
type EmbedderConfig struct {
	Model string
	// URL is the server's base URL (default DefaultURL); requests go to
	// URL + "/api/embed".
	URL string
	// Dim is the dimension the model must answer with; 0 means the first
	// answer (Probe's, when called) fixes it. Either way a later answer of
	// another dimension is refused.
	Dim int
	// MaxBatch is the most texts per request (default
	// provider.DefaultMaxBatch).
	MaxBatch int
	// HTTP is how requests are made (default provider.EmbedderDefaults).
	HTTP provider.HTTP
}

// WithDefaults returns c with every zero field set to its default.
func (c EmbedderConfig) WithDefaults() EmbedderConfig {
	c.URL = cmp.Or(c.URL, DefaultURL)
	c.MaxBatch = cmp.Or(c.MaxBatch, provider.DefaultMaxBatch)
	c.HTTP = c.HTTP.WithDefaults(provider.EmbedderDefaults())
	return c
}

// Validate reports a configuration that cannot work.
func (c EmbedderConfig) Validate() error {
	if err := httpmodel.CheckEmbedder(Provider, c.Model, "nomic-embed-text", c.Dim, c.MaxBatch, c.HTTP); err != nil {
		return err
	}
	_, err := httpmodel.ParseEmbedderURL(c.URL)
	return err
}

// Embedder calls an Ollama server's /api/embed. It is safe for concurrent
// use.
type Embedder struct {
	c *httpmodel.EmbedClient
}

var (
	_ memgate.Embedder = (*Embedder)(nil)
	_ memgate.Prober   = (*Embedder)(nil)
)

// NewEmbedder returns an Embedder for cfg (defaults applied). It makes no
// request: call Probe to check the server and model before use.
func NewEmbedder(cfg EmbedderConfig) (*Embedder, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := httpmodel.ParseEmbedderURL(cfg.URL)
	t := httpmodel.Target{Provider: Provider, Model: cfg.Model, Endpoint: base.JoinPath("api", "embed"), HTTP: cfg.HTTP}
	return &Embedder{c: httpmodel.NewEmbedClient(t, cfg.Dim, cfg.MaxBatch, embedWire{model: cfg.Model})}, nil
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

// embedWire is Ollama's /api/embed format.
type embedWire struct {
	httpmodel.OllamaErrors
	model string
}

type embedRequest struct {
	Model    string   `json:"model"`
	Input    []string `json:"input"`
	Truncate bool     `json:"truncate"`
}

type embedResponse struct {
	Model      string              `json:"model"`
	Embeddings [][]httpmodel.Float `json:"embeddings"`
}

func (w embedWire) Request(texts []string) any {
	return embedRequest{Model: w.model, Input: texts, Truncate: true}
}

func (embedWire) Response(body []byte, n int) ([][]float32, string, error) {
	var r embedResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, "", err
	}
	if r.Embeddings == nil {
		return nil, "", fmt.Errorf("no embeddings in the response")
	}
	vecs := make([][]float32, len(r.Embeddings))
	for i, e := range r.Embeddings {
		vecs[i] = httpmodel.Vector(e)
	}
	return vecs, r.Model, nil
}
