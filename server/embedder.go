package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
)

// startEmbedder returns the embedder to serve with (the built-in one when
// emb is nil), probed when it can be: the start fails fast, naming what is
// wrong, rather than the first remember. The log names the provenance the
// embedder reported (provider, model, dimension), never its URL or key.
func startEmbedder(ctx context.Context, emb memgate.Embedder, log *slog.Logger) (memgate.Embedder, error) {
	if emb == nil {
		return builtin.New(), nil
	}
	p, ok := emb.(memgate.Prober)
	if !ok {
		return emb, nil
	}
	e, err := p.Probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	log.Info("embedder ready", "provider", e.Provider, "model", e.Model, "dim", e.Dim)
	return emb, nil
}
