package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// backend is what the memory commands run against: the embedded engine
// (localBackend) or a memgate server (remoteBackend, with --server). The
// commands are written once against it; both sides return the engine's
// types, so text and --json output are the same for the same data.
type backend interface {
	Remember(ctx context.Context, r memgate.RememberRequest) (*memgate.Remembered, error)
	Recall(ctx context.Context, r memgate.RecallRequest) (*memgate.RecallResult, error)
	Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error)
	List(ctx context.Context, s memgate.Scope, f memgate.ListRequest) (*store.Page, error)
	Update(ctx context.Context, s memgate.Scope, id string, version int64, p memgate.Patch) (*memgate.Memory, error)
	// Supersede stores r as the new version of oldID and returns the new memory.
	Supersede(ctx context.Context, s memgate.Scope, oldID string, r memgate.RememberRequest) (*memgate.Memory, error)
	Revoke(ctx context.Context, s memgate.Scope, id, reason string) (*memgate.Memory, error)
	Approve(ctx context.Context, s memgate.Scope, id string, version int64) (*memgate.Memory, error)
	Reject(ctx context.Context, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error)
	Feedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error)
	Delete(ctx context.Context, s memgate.Scope, id string) error
	Forget(ctx context.Context, s memgate.Scope) (*memgate.ForgetReceipt, error)
	Counts(ctx context.Context, s memgate.Scope) ([]store.Count, error)
	Audit(ctx context.Context, s memgate.Scope, f store.AuditFilter) (*store.AuditPage, error)
	Import(ctx context.Context, r memgate.ImportRequest, jsonl io.Reader) (memgate.ImportResult, error)
	// Export writes JSONL and returns the number of memories written.
	Export(ctx context.Context, s memgate.Scope, w io.Writer) (int, error)
	Sweep(ctx context.Context, grace time.Duration) (int, error)
}

// localBackend is the embedded engine; its methods are the engine's.
type localBackend struct{ *engine.Engine }

func (l localBackend) Forget(ctx context.Context, s memgate.Scope) (*memgate.ForgetReceipt, error) {
	return l.Engine.Forget(ctx, s.Tenant, s.Principal)
}

func (l localBackend) Supersede(ctx context.Context, s memgate.Scope, oldID string, r memgate.RememberRequest) (*memgate.Memory, error) {
	_, next, err := l.Engine.Supersede(ctx, s, oldID, r)
	return next, err
}

// remoteBackend is a memgate server reached through the Go client. The
// tenant is the key's: scopes' tenants are not sent by the client (see
// tenantTransport for how a --tenant is still checked).
type remoteBackend struct{ c *client.Client }

// apiKeyEnv holds the API key for --server; there is deliberately no flag,
// so the key never lands in shell history or in the process list.
const apiKeyEnv = "MEMGATE_API_KEY"

func newRemote(server, tenant string) (*remoteBackend, error) {
	return newRemoteTimeout(server, tenant, 60*time.Second)
}

// newRemoteTimeout is newRemote with the time limit of one request (a chat
// turn waits on a model, longer than any other call).
func newRemoteTimeout(server, tenant string, timeout time.Duration) (*remoteBackend, error) {
	key := os.Getenv(apiKeyEnv)
	if key == "" {
		return nil, &memgate.Error{Code: memgate.EUNAUTHORIZED, Field: apiKeyEnv,
			Message: "is not set: --server needs an API key in the environment"}
	}
	var tr http.RoundTripper = http.DefaultTransport
	if tenant != "" {
		tr = tenantTransport{base: tr, tenant: tenant}
	}
	c, err := client.New(server, key, client.WithUserAgent("memgate-cli"),
		client.WithHTTPClient(&http.Client{Timeout: timeout, Transport: tr}))
	if err != nil {
		return nil, err
	}
	return &remoteBackend{c: c}, nil
}

func cscope(s memgate.Scope) client.Scope {
	return client.Scope{Principal: s.Principal, Agent: s.Agent, Conversation: s.Conversation}
}

func clientMemory(r memgate.RememberRequest) client.Memory {
	m := r.Memory
	return client.Memory{
		Principal: m.Principal, Agent: m.Agent, Conversation: m.Conversation,
		Kind: m.Kind, Source: m.Source, Sensitivity: m.Sensitivity,
		Content: m.Content, Reason: m.Reason, Metadata: m.Metadata,
		ExpiresAt: m.ExpiresAt, ValidFrom: m.ValidFrom, ValidUntil: m.ValidUntil,
		TTL: r.TTL, Supersedes: r.Supersedes,
	}
}

// rememberOptions sends req's idempotency key, if any, as the header.
func rememberOptions(req memgate.RememberRequest) []client.RememberOption {
	if req.IdempotencyKey == "" {
		return nil
	}
	return []client.RememberOption{client.IdempotencyKey(req.IdempotencyKey)}
}

func (r *remoteBackend) Remember(ctx context.Context, req memgate.RememberRequest) (*memgate.Remembered, error) {
	return r.c.Remember(ctx, clientMemory(req), rememberOptions(req)...)
}

func (r *remoteBackend) Recall(ctx context.Context, req memgate.RecallRequest) (*memgate.RecallResult, error) {
	in := client.RecallRequest{
		Principal: req.Scope.Principal, Agent: req.Scope.Agent, Conversation: req.Scope.Conversation,
		Query: req.Query, K: req.K, MinScore: req.MinScore, Kinds: req.Kinds, Sources: req.Sources,
		Metadata: req.Metadata, IncludeRestricted: req.IncludeRestricted, BudgetChars: req.BudgetChars,
		Diversify: req.Diversify, Explain: req.Explain, Render: req.Render,
	}
	if !req.AsOf.IsZero() {
		in.AsOf = &req.AsOf
	}
	return r.c.Recall(ctx, in)
}

func (r *remoteBackend) Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error) {
	return r.c.Get(ctx, cscope(s), id)
}

func (r *remoteBackend) List(ctx context.Context, s memgate.Scope, f memgate.ListRequest) (*store.Page, error) {
	p, err := r.c.List(ctx, client.ListRequest{Scope: cscope(s), Kinds: f.Kinds, Sources: f.Sources,
		Statuses: f.Statuses, Q: f.Text, Limit: f.Limit, Cursor: f.Cursor, StandardOnly: s.HideRestricted})
	if err != nil {
		return nil, err
	}
	return &store.Page{Memories: p.Memories, NextCursor: p.NextCursor, Limit: p.Limit, Clamped: p.Clamped}, nil
}

func (r *remoteBackend) Update(ctx context.Context, s memgate.Scope, id string, version int64, p memgate.Patch) (*memgate.Memory, error) {
	return r.c.Update(ctx, cscope(s), id, version, client.Patch{
		Content: p.Content, Reason: p.Reason, Kind: p.Kind, Sensitivity: p.Sensitivity,
		Metadata: p.Metadata, SetMetadata: p.ReplaceMetadata,
		TTL: p.TTL, ExpiresAt: p.ExpiresAt, ClearExpiresAt: p.ClearExpiresAt,
		ValidFrom: p.ValidFrom, ValidUntil: p.ValidUntil,
	})
}

// Supersede is a remember with supersedes (the API has no other form): the
// new memory lives in s, like the engine's Supersede.
func (r *remoteBackend) Supersede(ctx context.Context, s memgate.Scope, oldID string, req memgate.RememberRequest) (*memgate.Memory, error) {
	req.Memory.Principal, req.Memory.Agent, req.Memory.Conversation = s.Principal, s.Agent, s.Conversation
	req.Supersedes = oldID
	m, err := r.c.Remember(ctx, clientMemory(req), rememberOptions(req)...)
	if err != nil {
		return nil, err
	}
	return m.Memory, nil
}

func (r *remoteBackend) Revoke(ctx context.Context, s memgate.Scope, id, reason string) (*memgate.Memory, error) {
	return r.c.Revoke(ctx, cscope(s), id, reason)
}

func (r *remoteBackend) Approve(ctx context.Context, s memgate.Scope, id string, version int64) (*memgate.Memory, error) {
	return r.c.Approve(ctx, cscope(s), id, version)
}

func (r *remoteBackend) Reject(ctx context.Context, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error) {
	return r.c.Reject(ctx, cscope(s), id, version, reason)
}

func (r *remoteBackend) Feedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	return r.c.Feedback(ctx, cscope(s), id, value)
}

func (r *remoteBackend) Delete(ctx context.Context, s memgate.Scope, id string) error {
	return r.c.Delete(ctx, cscope(s), id)
}

func (r *remoteBackend) Forget(ctx context.Context, s memgate.Scope) (*memgate.ForgetReceipt, error) {
	return r.c.Forget(ctx, s.Principal)
}

func (r *remoteBackend) Counts(ctx context.Context, s memgate.Scope) ([]store.Count, error) {
	st, err := r.c.Stats(ctx, cscope(s))
	if err != nil {
		return nil, err
	}
	return st.Counts, nil
}

func (r *remoteBackend) Audit(ctx context.Context, s memgate.Scope, f store.AuditFilter) (*store.AuditPage, error) {
	return r.c.Audit(ctx, client.AuditRequest{Principal: s.Principal, MemoryID: f.MemoryID, RecallID: f.RecallID,
		Action: f.Action, From: f.From, To: f.To, Limit: f.Limit, Cursor: f.Cursor})
}

// Import sends the JSONL as one request; the server stores it in batches
// of its own size (req.BatchSize is not sent), all lines validated first.
func (r *remoteBackend) Import(ctx context.Context, _ memgate.ImportRequest, jsonl io.Reader) (memgate.ImportResult, error) {
	res, err := r.c.Import(ctx, jsonl)
	if err != nil {
		return memgate.ImportResult{}, err
	}
	return *res, nil
}

func (r *remoteBackend) Export(ctx context.Context, s memgate.Scope, w io.Writer) (int, error) {
	lw := &lineCounter{w: w}
	_, err := r.c.Export(ctx, cscope(s), lw)
	return lw.n, err
}

func (r *remoteBackend) Sweep(context.Context, time.Duration) (int, error) {
	return 0, usageError{"sweep runs on the server's own schedule (memgate serve --sweep-every); it has no --server form"}
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

// tenantTransport names --tenant in every request, so that the server,
// which takes the tenant from the key, refuses one that differs
// (forbidden: tenant: is fixed by the key) instead of the CLI silently
// acting in the key's tenant. The client does not send a tenant, so it is
// added here: in the JSON body of the four endpoints that read it there,
// and as the "tenant" query parameter everywhere else.
type tenantTransport struct {
	base   http.RoundTripper
	tenant string
}

func (t tenantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	bodyTenant := req.Method == http.MethodPost &&
		(req.URL.Path == "/v1/memories" || req.URL.Path == "/v1/recall" || req.URL.Path == "/v1/forget" || req.URL.Path == "/v1/chat")
	if bodyTenant && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, err
		}
		obj["tenant"], _ = json.Marshal(t.tenant)
		if b, err = json.Marshal(obj); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	} else if !bodyTenant {
		q := req.URL.Query()
		q.Set("tenant", t.tenant)
		req.URL.RawQuery = q.Encode()
	}
	return t.base.RoundTrip(req)
}
