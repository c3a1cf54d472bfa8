package memgate

import "context"

// Embedder turns texts into vectors. Implementations return one Embedding per
// input text, in order, each carrying the provider, model and dimension that
// actually produced it: the engine stores exactly that provenance.
//
// Implementations must be safe for concurrent use, honour ctx, and never
// include input text in errors or logs.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([]Embedding, error)
}

// Prober is implemented by an Embedder that can check its configuration
// before first use: that its server answers, that the model exists and that
// vectors have the expected dimension. Probe embeds a fixed text (no one's
// data) and returns that embedding, whose provenance is what Embed reports.
// memgate serve probes at startup, so a misconfigured embedder fails there
// with a clear message instead of on the first remember.
type Prober interface {
	Probe(ctx context.Context) (Embedding, error)
}
