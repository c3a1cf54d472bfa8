package engine

import (
	"context"
	"sync"
	"time"

	"github.com/memgate/memgate"
)

// ReadyCheck is memgate.ReadyCheck (the callers' contract).
type ReadyCheck = memgate.ReadyCheck

// readyProbeTTL is how long an embedder probe's answer stands: a load
// balancer asks every few seconds, and a remote embedder (Ollama, an
// OpenAI-compatible API) should not be called that often for it.
const readyProbeTTL = 15 * time.Second

// readyCache remembers the last embedder probe.
type readyCache struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// Ready reports whether the engine can serve: the store answers a query
// (now, every call) and the embedder its probe (at most every
// readyProbeTTL). The errors are the parts' own messages, which hold no
// content (a PostgreSQL URL's password is redacted by the store).
func (e *Engine) Ready(ctx context.Context) []ReadyCheck {
	checks := []ReadyCheck{{Part: "store", OK: true}, {Part: "embedder", OK: true}}
	// A real read through the same path as every request: counting a
	// partition no one has is one indexed lookup.
	if _, err := e.store.Counts(ctx, memgate.Scope{Tenant: "memgate-readyz", Principal: "memgate-readyz"}, e.now()); err != nil {
		checks[0] = ReadyCheck{Part: "store", Error: memgate.ErrorMessage(err)}
	}
	if e.cfg.Embedder != nil {
		e.ready.mu.Lock()
		defer e.ready.mu.Unlock()
		if now := e.now(); e.ready.at.IsZero() || now.Sub(e.ready.at) >= readyProbeTTL || e.ready.err != nil {
			_, err := e.probeEmbedder(ctx)
			e.ready.at, e.ready.err = now, err
		}
		if err := e.ready.err; err != nil {
			checks[1] = ReadyCheck{Part: "embedder", Error: memgate.ErrorMessage(err)}
		}
	}
	return checks
}
