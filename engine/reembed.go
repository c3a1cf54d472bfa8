package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// ActionReembed is the audit action of a re-embedding: one event per batch
// and partition, with the ids whose vector was replaced.
const ActionReembed = "reembed"

// DefaultReembedBatch is the default number of memories Reembed reads and
// embeds at a time.
const DefaultReembedBatch = 64

// ReembedOptions tunes Reembed.
type ReembedOptions struct {
	// Batch is the number of memories read and embedded at a time (default
	// DefaultReembedBatch, at most store.MaxPageSize). The embedder splits
	// a batch further if its own maximum is lower.
	Batch int
	// Progress, when set, is called after every batch.
	Progress func(ReembedProgress)
}

// ReembedProgress counts a re-embedding so far.
type ReembedProgress struct {
	// Total is the number of active (expired ones included) and pending
	// memories in scope when the run started: what it examines.
	Total      int `json:"total"`
	Examined   int `json:"examined"`
	Reembedded int `json:"reembedded"`
	// Current memories already had a vector of the engine's model and
	// were left as they are.
	Current int `json:"current"`
	// Changed memories had new content (or were deleted) between the read
	// and the write: their writer embedded them, and they were left alone.
	Changed int `json:"changed"`
}

// ReembedResult is what a finished Reembed did, and the model it embedded
// with.
type ReembedResult struct {
	ReembedProgress
	Model Provenance `json:"model"`
}

// Reembed gives every active (expired ones included) and pending memory of
// the scope (one principal, or every principal with AllPrincipals) a
// vector of the engine's embedder, where it has none or one of another
// model or dimension. Revoked and superseded memories are left as they are:
// they are never recalled again, and their content is not sent anywhere.
//
// It first checks the embedder (Probe when it has one, else an embedding of
// a fixed text) and learns its provenance; then it pages through the scope
// newest first, Batch memories at a time, embeds those whose vector is not
// of that provenance and stores each vector with store.SetEmbedding, which
// writes only if the content is still the one embedded. Versions and
// update times do not change.
//
// It is resumable by construction: a memory already embedded with the
// engine's model is skipped, so running it again after an interruption
// continues where it stopped, and a finished run leaves nothing to do.
// Other processes may serve and write meanwhile (SQLite's WAL and
// PostgreSQL both allow it): a memory whose content changes under it keeps
// its writer's vector.
func (e *Engine) Reembed(ctx context.Context, s memgate.Scope, o ReembedOptions) (*ReembedResult, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if e.cfg.Embedder == nil {
		return nil, memgate.FieldError("embedder", "is not configured: there is nothing to embed with")
	}
	switch {
	case o.Batch < 0:
		return nil, memgate.FieldError("batch", "must not be negative")
	case o.Batch == 0:
		o.Batch = DefaultReembedBatch
	case o.Batch > store.MaxPageSize:
		o.Batch = store.MaxPageSize
	}
	start := time.Now()
	probe, err := e.probeEmbedder(ctx)
	if err != nil {
		return nil, err
	}
	target := model{provider: probe.Provider, name: probe.Model, dim: probe.Dim}
	res := &ReembedResult{Model: Provenance{Provider: probe.Provider, Model: probe.Model, Dim: probe.Dim}}

	now := e.now()
	counts, err := e.store.Counts(ctx, s, now)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		if c.Status == memgate.StatusActive || c.Status == memgate.StatusExpired || c.Status == memgate.StatusPending {
			res.Total += int(c.N)
		}
	}
	f := store.Filter{
		Statuses: []memgate.Status{memgate.StatusActive, memgate.StatusExpired, memgate.StatusPending},
		Now:      now, Limit: o.Batch,
	}
	for {
		page, err := e.store.List(ctx, s, f)
		if err != nil {
			return res, err
		}
		var todo []*memgate.Memory
		for _, m := range page.Memories {
			if target.matches(m.Embedding) {
				res.Current++
			} else {
				todo = append(todo, m)
			}
		}
		if err := e.reembedBatch(ctx, todo, res); err != nil {
			return res, err
		}
		res.Examined += len(page.Memories)
		if o.Progress != nil {
			o.Progress(res.ReembedProgress)
		}
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	e.log.InfoContext(ctx, "reembed", "tenant", s.Tenant, "principal", s.Principal, "provider", probe.Provider, "model", probe.Model, "dim", probe.Dim,
		"examined", res.Examined, "reembedded", res.Reembedded, "current", res.Current, "changed", res.Changed, "took", time.Since(start))
	return res, nil
}

// reembedBatch embeds ms in one call and stores each vector if the
// memory's content is still the one embedded. The cached partitions
// touched are dropped, so the next recall loads the new vectors.
func (e *Engine) reembedBatch(ctx context.Context, ms []*memgate.Memory, res *ReembedResult) error {
	if len(ms) == 0 {
		return nil
	}
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = m.Content
	}
	embs, err := e.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed %d texts: %w", len(texts), err)
	}
	if len(embs) != len(ms) {
		return fmt.Errorf("embedder returned %d embeddings for %d texts", len(embs), len(ms))
	}
	type part struct{ tenant, principal string }
	done := map[part][]string{}
	var order []part
	for i, m := range ms {
		emb := embs[i]
		if err := emb.Check(); err != nil {
			return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable vector: " + memgate.ErrorMessage(err)}
		}
		e.rec.observe(&emb)
		ok, err := e.store.SetEmbedding(ctx, m.Tenant, m.ID, m.ContentSHA256, &emb)
		if err != nil {
			return fmt.Errorf("store the vector of %s: %w", m.ID, err)
		}
		if !ok {
			res.Changed++
			continue
		}
		res.Reembedded++
		p := part{m.Tenant, m.Principal}
		if done[p] == nil {
			order = append(order, p)
		}
		done[p] = append(done[p], m.ID)
	}
	for _, p := range order {
		e.rec.idx.Drop(p.tenant, p.principal)
		ids := done[p]
		e.audit(ctx, store.AuditEvent{Tenant: p.tenant, Principal: p.principal, Action: ActionReembed,
			MemoryIDs: ids, Counts: map[string]int64{"reembedded": int64(len(ids))}})
	}
	return nil
}

// probeText is what the engine embeds to learn an embedder's provenance
// when it cannot probe itself: fixed, and no one's data.
const probeText = "memgate embedder probe"

// probeEmbedder checks the engine's embedder and returns the provenance it
// reports: by its Probe when it has one, else by embedding probeText.
func (e *Engine) probeEmbedder(ctx context.Context) (memgate.Embedding, error) {
	var emb memgate.Embedding
	if p, ok := e.cfg.Embedder.(memgate.Prober); ok {
		got, err := p.Probe(ctx)
		if err != nil {
			return emb, fmt.Errorf("probe the embedder: %w", err)
		}
		emb = got
	} else {
		embs, err := e.cfg.Embedder.Embed(ctx, []string{probeText})
		if err != nil {
			return emb, fmt.Errorf("probe the embedder: %w", err)
		}
		if len(embs) != 1 {
			return emb, fmt.Errorf("embedder returned %d embeddings for 1 text", len(embs))
		}
		emb = embs[0]
	}
	if err := emb.Check(); err != nil {
		return emb, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable vector: " + memgate.ErrorMessage(err)}
	}
	e.rec.observe(&emb)
	return emb, nil
}
