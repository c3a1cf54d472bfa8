package httpmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/provider"
)

// EmbedWire is one provider's embedding request and response format.
type EmbedWire interface {
	// Request returns the JSON body that embeds texts.
	Request(texts []string) any
	// Response decodes a 2xx body into one vector per text, in the order
	// of texts, and the model the server reports ("" when it does not).
	Response(body []byte, n int) (vecs [][]float32, model string, err error)
	// The provider's error answers (OpenAIErrors, OllamaErrors).
	ErrorWire
}

// EmbedClient embeds through one HTTP endpoint: batches of at most
// MaxBatch texts, one request at a time, and checks of every vector
// (present, finite, non-zero, of one dimension, the expected one).
// Provenance is the producer's: the provider, the model the server reports
// when it reports one, and the dimension of the vectors themselves, never
// a URL. It is safe for concurrent use.
type EmbedClient struct {
	t        Target
	maxBatch int
	wire     EmbedWire
	http     *client
	dimSet   bool         // the dimension was configured
	dim      atomic.Int64 // expected dimension; 0 until known
}

// NewEmbedClient returns an EmbedClient for t. dim is the expected
// dimension (0: the first answer fixes it); maxBatch the most texts per
// request (0: provider.DefaultMaxBatch).
func NewEmbedClient(t Target, dim, maxBatch int, w EmbedWire) *EmbedClient {
	if maxBatch <= 0 {
		maxBatch = provider.DefaultMaxBatch
	}
	c := &EmbedClient{t: t, maxBatch: maxBatch, wire: w, dimSet: dim > 0}
	// A cancelled call fails with the context's error, prefixed with the
	// provider.
	cancelled := func(err error) error { return fmt.Errorf("%s: %w", t.Provider, err) }
	c.http = newClient(t, embedding, w, c.fail, cancelled)
	c.dim.Store(int64(dim))
	return c
}

// ProbeText is what Probe embeds: fixed, and no one's data.
const ProbeText = "memgate embedder probe"

// Probe embeds ProbeText and returns its embedding: it checks that the
// endpoint answers, the model exists and the dimension is the expected one
// (and fixes it when none was configured).
func (c *EmbedClient) Probe(ctx context.Context) (memgate.Embedding, error) {
	embs, err := c.Embed(ctx, []string{ProbeText})
	if err != nil {
		return memgate.Embedding{}, err
	}
	return embs[0], nil
}

// Embed returns one embedding per text, in order, sending at most maxBatch
// texts per request, one request at a time.
func (c *EmbedClient) Embed(ctx context.Context, texts []string) ([]memgate.Embedding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]memgate.Embedding, 0, len(texts))
	for lo := 0; lo < len(texts); lo += c.maxBatch {
		batch := texts[lo:min(lo+c.maxBatch, len(texts))]
		embs, err := c.embedBatch(ctx, batch, lo)
		if err != nil {
			return nil, err
		}
		out = append(out, embs...)
	}
	return out, nil
}

func (c *EmbedClient) embedBatch(ctx context.Context, texts []string, offset int) ([]memgate.Embedding, error) {
	body, err := json.Marshal(c.wire.Request(texts))
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.t.Provider, err)
	}
	resp, err := c.http.post(ctx, body, texts)
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
		model = c.t.Model
	}
	out := make([]memgate.Embedding, len(vecs))
	for i, v := range vecs {
		if err := c.checkVector(v, offset+i); err != nil {
			return nil, err
		}
		out[i] = memgate.Embedding{Provider: c.t.Provider, Model: model, Dim: len(v), Vector: v}
	}
	return out, nil
}

// checkVector refuses a vector no index should hold: empty, non-finite,
// zero, or of another dimension than expected. The first good vector fixes
// the dimension when none was configured.
func (c *EmbedClient) checkVector(v []float32, i int) error {
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
		if c.dimSet {
			how = "as configured"
		}
		return c.fail(memgate.EINVALID, "embedder", fmt.Sprintf("returned a vector of %d dimensions for input %d, expected %d (%s): the model or its settings changed", len(v), i, want, how), nil)
	}
	return nil
}

// fail returns an error with code and field whose message names the
// provider and model; cause, when set, follows it in the error chain (for
// the operator) but not in the message a caller is shown.
func (c *EmbedClient) fail(code, field, what string, cause error) error {
	// With the field "embedder" the message reads "embedder: ollama
	// (model …) …"; without one it names the embedder itself.
	prefix := "embedder "
	if field == "embedder" {
		prefix = ""
	}
	return newError(code, field, fmt.Sprintf("%s%s (model %q) %s", prefix, c.t.Provider, c.t.Model, what), cause)
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
