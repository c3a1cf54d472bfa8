package openai

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
	// MaxBatch is the most texts per request (default
	// provider.DefaultMaxBatch).
	MaxBatch int
	// HTTP is how requests are made (default provider.EmbedderDefaults).
	HTTP provider.HTTP
}

// WithDefaults returns c with every zero field set to its default.
func (c EmbedderConfig) WithDefaults() EmbedderConfig {
	c.URL = cmp.Or(c.URL, DefaultURL)
	c.Provider = cmp.Or(c.Provider, Provider)
	c.MaxBatch = cmp.Or(c.MaxBatch, provider.DefaultMaxBatch)
	c.HTTP = c.HTTP.WithDefaults(provider.EmbedderDefaults())
	return c
}

// Validate reports a configuration that cannot work.
func (c EmbedderConfig) Validate() error {
	if err := httpmodel.CheckEmbedder(Provider, c.Model, "text-embedding-3-small", c.Dimensions, c.MaxBatch, c.HTTP); err != nil {
		return err
	}
	if err := checkKey(c.APIKey); err != nil {
		return err
	}
	if c.Provider != "" {
		if err := memgate.CheckIdent("provider", c.Provider); err != nil {
			return err
		}
	}
	_, err := httpmodel.ParseEmbedderURL(c.URL)
	return err
}

// Embedder calls an OpenAI-compatible embeddings API. It is safe for
// concurrent use.
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
	t := httpmodel.Target{Provider: cfg.Provider, Model: cfg.Model, Endpoint: httpmodel.OpenAIEndpoint(base, "embeddings"), APIKey: cfg.APIKey, HTTP: cfg.HTTP}
	w := embedWire{model: cfg.Model, dimensions: cfg.Dimensions}
	return &Embedder{c: httpmodel.NewEmbedClient(t, cfg.Dimensions, cfg.MaxBatch, w)}, nil
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

// embedWire is the OpenAI /v1/embeddings format.
type embedWire struct {
	httpmodel.OpenAIErrors
	model      string
	dimensions int
}

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embedResponse struct {
	Data []struct {
		Index     *int              `json:"index"`
		Embedding []httpmodel.Float `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

func (w embedWire) Request(texts []string) any {
	return embedRequest{Model: w.model, Input: texts, EncodingFormat: "float", Dimensions: w.dimensions}
}

// Response orders data by index; every index in [0, n) must appear once.
// A server that sends no index at all is read in order.
func (embedWire) Response(body []byte, n int) ([][]float32, string, error) {
	var r embedResponse
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
		vecs[at] = httpmodel.Vector(d.Embedding)
	}
	return vecs, r.Model, nil
}
