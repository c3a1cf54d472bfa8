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
