package client

import (
	"bytes"
	"context"
	"io"

	"github.com/memgate/memgate"
)

// Memories returns the client as memgate.Memories, the contract the
// engine and the authorization guard implement too, so code written
// against it runs the same over a local engine or a server. The tenant of
// every scope is the key's: it is not sent (a server refuses a request
// naming another).
func (c *Client) Memories() memgate.Memories { return memories{c} }

type memories struct{ c *Client }

var _ memgate.Memories = memories{}

func scopeOf(s memgate.Scope) Scope {
	return Scope{Principal: s.Principal, Agent: s.Agent, Conversation: s.Conversation}
}

func memoryOf(r memgate.RememberRequest) Memory {
	m := r.Memory
	return Memory{
		Principal: m.Principal, Agent: m.Agent, Conversation: m.Conversation,
		Kind: m.Kind, Source: m.Source, Sensitivity: m.Sensitivity,
		Content: m.Content, Reason: m.Reason, Metadata: m.Metadata,
		ExpiresAt: m.ExpiresAt, ValidFrom: m.ValidFrom, ValidUntil: m.ValidUntil,
		TTL: r.TTL, Supersedes: r.Supersedes, Key: m.Key,
	}
}

func idempotency(key string) []RememberOption {
	if key == "" {
		return nil
	}
	return []RememberOption{IdempotencyKey(key)}
}

func (m memories) Remember(ctx context.Context, r memgate.RememberRequest) (*memgate.Remembered, error) {
	return m.c.Remember(ctx, memoryOf(r), idempotency(r.IdempotencyKey)...)
}

// RememberBatch sends one request: the API takes one idempotency key for a
// batch, so every request's IdempotencyKey must be the same (or all empty).
func (m memories) RememberBatch(ctx context.Context, rs []memgate.RememberRequest) ([]*memgate.Remembered, error) {
	ms := make([]Memory, len(rs))
	for i, r := range rs {
		if r.IdempotencyKey != rs[0].IdempotencyKey {
			return nil, memgate.FieldError("idempotency_key", "must be the same for every memory of a batch")
		}
		ms[i] = memoryOf(r)
	}
	var key string
	if len(rs) > 0 {
		key = rs[0].IdempotencyKey
	}
	return m.c.RememberBatch(ctx, ms, idempotency(key)...)
}

func (m memories) Recall(ctx context.Context, r memgate.RecallRequest) (*memgate.RecallResult, error) {
	in := RecallRequest{
		Principal: r.Scope.Principal, Agent: r.Scope.Agent, Conversation: r.Scope.Conversation,
		Query: r.Query, K: r.K, MinScore: r.MinScore, Kinds: r.Kinds, Sources: r.Sources,
		Metadata: r.Metadata, IncludeRestricted: r.IncludeRestricted, BudgetChars: r.BudgetChars,
		Diversify: r.Diversify, Explain: r.Explain, Render: r.Render, Preview: r.Preview,
	}
	if !r.AsOf.IsZero() {
		in.AsOf = &r.AsOf
	}
	return m.c.Recall(ctx, in)
}

func (m memories) Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error) {
	return m.c.Get(ctx, scopeOf(s), id)
}

func (m memories) List(ctx context.Context, s memgate.Scope, f memgate.ListRequest) (*memgate.Page, error) {
	p, err := m.c.List(ctx, ListRequest{Scope: scopeOf(s), Kinds: f.Kinds, Sources: f.Sources,
		Statuses: f.Statuses, Q: f.Text, Limit: f.Limit, Cursor: f.Cursor, StandardOnly: s.HideRestricted})
	if err != nil {
		return nil, err
	}
	return &memgate.Page{Memories: p.Memories, NextCursor: p.NextCursor, Limit: p.Limit, Clamped: p.Clamped}, nil
}

func (m memories) Update(ctx context.Context, s memgate.Scope, id string, version int64, p memgate.Patch) (*memgate.Memory, error) {
	return m.c.Update(ctx, scopeOf(s), id, version, Patch{
		Content: p.Content, Reason: p.Reason, Kind: p.Kind, Sensitivity: p.Sensitivity,
		Metadata: p.Metadata, SetMetadata: p.ReplaceMetadata,
		TTL: p.TTL, ExpiresAt: p.ExpiresAt, ClearExpiresAt: p.ClearExpiresAt,
		ValidFrom: p.ValidFrom, ValidUntil: p.ValidUntil,
	})
}

func (m memories) Revoke(ctx context.Context, s memgate.Scope, id, reason string) (*memgate.Memory, error) {
	return m.c.Revoke(ctx, scopeOf(s), id, reason)
}

func (m memories) Approve(ctx context.Context, s memgate.Scope, id string, version int64) (*memgate.Memory, error) {
	return m.c.Approve(ctx, scopeOf(s), id, version)
}

func (m memories) Reject(ctx context.Context, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error) {
	return m.c.Reject(ctx, scopeOf(s), id, version, reason)
}

func (m memories) Feedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	return m.c.Feedback(ctx, scopeOf(s), id, value)
}

func (m memories) Delete(ctx context.Context, s memgate.Scope, id string) error {
	return m.c.Delete(ctx, scopeOf(s), id)
}

func (m memories) Forget(ctx context.Context, s memgate.Scope) (*memgate.ForgetReceipt, error) {
	return m.c.Forget(ctx, s.Principal)
}

func (m memories) Counts(ctx context.Context, s memgate.Scope) ([]memgate.Count, error) {
	st, err := m.c.Stats(ctx, scopeOf(s))
	if err != nil {
		return nil, err
	}
	return st.Counts, nil
}

func (m memories) Audit(ctx context.Context, s memgate.Scope, f memgate.AuditFilter) (*memgate.AuditPage, error) {
	principal := f.Principal
	if principal == "" {
		principal = s.Principal
	}
	return m.c.Audit(ctx, AuditRequest{Principal: principal, MemoryID: f.MemoryID, RecallID: f.RecallID,
		Action: f.Action, From: f.From, To: f.To, Limit: f.Limit, Cursor: f.Cursor})
}

func (m memories) AuditHistogram(ctx context.Context, s memgate.Scope, r memgate.AuditHistogramRequest) (*memgate.AuditHistogram, error) {
	return m.c.AuditHistogram(ctx, AuditHistogramRequest{Principal: s.Principal, Action: r.Action, Bucket: r.Bucket, From: r.From, To: r.To})
}

// Import sends the JSONL as one request; the server stores it in batches
// of its own size (r.BatchSize is not sent), all lines validated first,
// in the key's tenant; r.TrustStatus is sent.
func (m memories) Import(ctx context.Context, r memgate.ImportRequest, jsonl io.Reader) (memgate.ImportResult, error) {
	var opts []ImportOption
	if r.TrustStatus {
		opts = append(opts, TrustStatus())
	}
	res, err := m.c.Import(ctx, jsonl, opts...)
	if err != nil {
		return memgate.ImportResult{}, err
	}
	return *res, nil
}

func (m memories) Export(ctx context.Context, s memgate.Scope, w io.Writer) (int, error) {
	lw := &lineCounter{w: w}
	_, err := m.c.Export(ctx, scopeOf(s), lw)
	return lw.n, err
}

// lineCounter counts the JSONL lines (memories) written through it.
type lineCounter struct {
	w io.Writer
	n int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	l.n += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

func (m memories) GetByKey(ctx context.Context, s memgate.Scope, key string) (*memgate.Memory, error) {
	return m.c.GetByKey(ctx, scopeOf(s), key)
}
