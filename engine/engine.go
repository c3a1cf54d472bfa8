// Package engine is the one place every surface (CLI, HTTP API, MCP server,
// inspector, agent middleware) goes through to read or write memory. It
// validates at the edge, assigns ids, times and versions, computes content
// hashes and embeddings, and calls the store with the caller's scope.
//
// It must never let a caller bypass validation or scope, never store
// provenance that the embedder did not report, and never log memory content
// or query text: logs carry ids, counts and timings only.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/rank"
	"github.com/memgate/memgate/relate"
	"github.com/memgate/memgate/store"
)

// Config configures an Engine. Store is required; the rest have defaults.
type Config struct {
	Store store.Store
	// Embedder computes vectors at write time. Nil means memories are stored
	// without an embedding (Memory.Embedding stays nil): nothing is invented.
	Embedder memgate.Embedder
	// Policy is the write gate's configuration (default policy.Default());
	// its Limits bound what may be stored.
	Policy policy.Config
	Limits memgate.Limits
	// Index configures the in-memory recall index (memory budget and
	// parallelism); the zero value takes its defaults.
	Index index.Config
	// MaxBatch bounds a RememberBatch call and an import batch
	// (default DefaultMaxBatch).
	MaxBatch int
	// ChangeRetention is how long the store keeps the record of a deleted
	// memory for other processes' indexes to catch up with (Sweep prunes
	// older ones; default DefaultChangeRetention). A process whose index
	// partition is older reloads it on its next recall of it.
	ChangeRetention time.Duration
	// IdempotencyWindow is how long a remember's idempotency key is kept:
	// a retry within it replays, a later one is stored again (Sweep prunes
	// older keys; default DefaultIdempotencyWindow).
	IdempotencyWindow time.Duration
	// Rank overrides recall's ranking parameters (package rank's Options:
	// the text scale, the vector calibration and the context weights; its
	// K, floor, budget and diversity come from each request). The zero
	// value is the defaults, which are what memgate was measured with; the
	// benchmarks set it to measure others.
	Rank rank.Options
	// Relate sets how recall relates query words to the words of memories
	// (package relate: other forms, synonyms, derived forms, kinds); the
	// zero value is its measured defaults. NoRelate turns it off: query
	// words then match only themselves (for measurement).
	Relate   relate.Options
	NoRelate bool
	// Now is the clock (default time.Now); tests set it.
	Now    func() time.Time
	Logger *slog.Logger
}

// DefaultMaxBatch is the default maximum number of memories in one batch.
const DefaultMaxBatch = 500

// DefaultChangeRetention is the default Config.ChangeRetention: records of
// deletions are ids and sequence numbers, a day of them is small, and an
// index partition a day behind is cheaper to reload than to catch up.
const DefaultChangeRetention = 24 * time.Hour

// DefaultIdempotencyWindow is the default Config.IdempotencyWindow: a day
// covers any client's retries, and a record is a few ids and a hash.
const DefaultIdempotencyWindow = 24 * time.Hour

// WithDefaults returns c with defaults applied.
func (c Config) WithDefaults() Config {
	c.Policy = c.Policy.WithDefaults()
	if c.Limits == (memgate.Limits{}) {
		c.Limits = c.Policy.Limits
	}
	c.Limits = c.Limits.WithDefaults()
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.ChangeRetention <= 0 {
		c.ChangeRetention = DefaultChangeRetention
	}
	if c.IdempotencyWindow <= 0 {
		c.IdempotencyWindow = DefaultIdempotencyWindow
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.Store == nil {
		return fmt.Errorf("engine: store is required")
	}
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("engine: policy: %w", err)
	}
	if err := c.Rank.WithDefaults().Validate(); err != nil {
		return memgate.FieldError("rank", "%v", err)
	}
	return nil
}

// Engine is safe for concurrent use.
type Engine struct {
	cfg   Config
	store store.Store
	log   *slog.Logger
	rec   recaller
	// relater finds the words related to query words; nil with NoRelate.
	relater *relate.Relater
	// relateAll keeps every related word, also those whose term the
	// partition lacks (tests: Recall returns the same either way).
	relateAll bool

	pkeyMu sync.Mutex
	pkey   []byte
	ready  readyCache

	auditOnce sync.Once
	closeOnce sync.Once
	auditq    chan *auditReq
	auditStop chan struct{}
	auditDone chan struct{}
	auditWait time.Duration // auditGatherWait; tests set another before the first audit
	// The drainer (store.AuditDrainer): drainKick asks it to drain now,
	// drainDone is closed when it has stopped after the committer.
	drainKick chan struct{}
	drainDone chan struct{}
	undrained atomic.Int64 // appends since the last drain
	// The write committer (writegroup.go).
	writeOnce sync.Once
	writeq    chan *writeReq
	writeDone chan struct{} // closed when the write committer has stopped
	writeWait time.Duration // writeGatherWait; tests set another before the first write
}

// New returns an engine over cfg.Store.
func New(cfg Config) (*Engine, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, store: cfg.Store, auditStop: make(chan struct{}), writeWait: writeGatherWait, auditWait: auditGatherWait}
	if !cfg.NoRelate {
		e.relater = relate.New(cfg.Relate)
	}
	// Log lines name a principal only by its pseudonym (pseudonym.go).
	e.log = slog.New(&pseudonymous{inner: cfg.Logger.Handler(), e: e})
	idx, err := index.New(cfg.Index, func(ctx context.Context, tenant, principal string, l *index.Load) (int64, error) {
		return e.load(ctx, tenant, principal, l)
	})
	if err != nil {
		return nil, err
	}
	e.rec.idx = idx
	return e, nil
}

// Store returns the engine's store (for tools that must reach it directly,
// such as migration; surfaces must not).
func (e *Engine) Store() store.Store { return e.store }

// Policy returns the write policy the engine applies (a copy).
func (e *Engine) Policy() policy.Config { return e.cfg.Policy.WithDefaults() }

func (e *Engine) now() time.Time { return memgate.Now(e.cfg.Now()) }

// Get returns the memory with id if scope contains it; a foreign id is
// not_found exactly like a missing one.
func (e *Engine) Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	m, err := e.store.Get(ctx, s, id)
	if err != nil {
		return nil, err
	}
	e.derive(m, e.now())
	return m, nil
}

// GetByKey returns the active memory with key at exactly the level of s
// (tenant, principal, agent and conversation), whatever its expiry, or
// not_found, exactly like a memory outside the scope. Each source is its
// own key space, so a level may hold the key once per source: the holder
// of the first source in memgate.Sources order (user first) that has one
// is returned.
func (e *Engine) GetByKey(ctx context.Context, s memgate.Scope, key string) (*memgate.Memory, error) {
	return e.GetByKeyPreferring(ctx, s, key, nil)
}

// GetByKeyPreferring is GetByKey with the sources whose holder comes
// first, in order.
func (e *Engine) GetByKeyPreferring(ctx context.Context, s memgate.Scope, key string, prefer []memgate.Source) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	m, err := e.store.GetByKey(ctx, s, key, prefer...)
	if err != nil {
		return nil, err
	}
	e.derive(m, e.now())
	return m, nil
}

// ListRequest is memgate.ListRequest (the callers' contract): a List
// call's filter and page, the store's Filter.
type ListRequest = memgate.ListRequest

// List returns a page of memories scope contains, newest first.
func (e *Engine) List(ctx context.Context, s memgate.Scope, f ListRequest) (*memgate.Page, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkKinds("kind", f.Kinds); err != nil {
		return nil, err
	}
	if err := checkSources("source", f.Sources); err != nil {
		return nil, err
	}
	if err := checkFilterLen("status", len(f.Statuses)); err != nil {
		return nil, err
	}
	for _, st := range f.Statuses {
		if st == memgate.StatusExpired {
			continue
		}
		if _, err := memgate.ParseStatus(string(st)); err != nil {
			return nil, memgate.FieldError("status", "unknown status %q (one of active, pending, revoked, superseded, expired)", st)
		}
	}
	if f.Limit < 0 {
		return nil, memgate.FieldError("limit", "must not be negative")
	}
	now := e.now()
	f.Now = now
	p, err := e.store.List(ctx, s, f)
	if err != nil {
		return nil, err
	}
	for _, m := range p.Memories {
		e.derive(m, now)
	}
	return p, nil
}

// MaxFilterValues bounds every list of values a request filters on (kinds,
// sources, statuses): there are fewer values than this of each, so a
// longer list only costs the store (every value is a bound parameter).
const MaxFilterValues = 16

// checkFilterLen refuses a filter list longer than MaxFilterValues,
// naming field.
func checkFilterLen(field string, n int) error {
	if n > MaxFilterValues {
		return &memgate.Error{Code: memgate.ETOOLARGE, Field: field, Message: fmt.Sprintf("holds %d values, the limit is %d", n, MaxFilterValues)}
	}
	return nil
}

// checkKinds checks a kind filter: bounded, every kind known.
func checkKinds(field string, ks []memgate.Kind) error {
	if err := checkFilterLen(field, len(ks)); err != nil {
		return err
	}
	for _, k := range ks {
		if _, err := memgate.ParseKind(string(k)); err != nil {
			return memgate.FieldError(field, "unknown kind %q (one of message, fact, preference, task, summary)", clip(string(k)))
		}
	}
	return nil
}

// checkSources checks a source filter: bounded, every source known.
func checkSources(field string, ss []memgate.Source) error {
	if err := checkFilterLen(field, len(ss)); err != nil {
		return err
	}
	for _, src := range ss {
		if _, err := memgate.ParseSource(string(src)); err != nil {
			return memgate.FieldError(field, "unknown source %q (one of user, assistant, tool, verified_tool, system, import)", clip(string(src)))
		}
	}
	return nil
}

// clip shortens a caller's value quoted in an error.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// derive sets the fields computed at read time.
func (e *Engine) derive(m *memgate.Memory, now time.Time) {
	m.Expired = m.Status == memgate.StatusActive && m.ExpiredAt(now)
}

// Delete removes the memory with id for good.
func (e *Engine) Delete(ctx context.Context, s memgate.Scope, id string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return memgate.ErrNotFound()
	}
	m, err := e.store.Get(ctx, s, id)
	if err != nil {
		return err
	}
	if err := e.store.Delete(ctx, s, id); err != nil {
		return err
	}
	e.rec.idx.Remove(m.Tenant, m.Principal, id)
	e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionDelete, MemoryIDs: []string{id}})
	e.log.InfoContext(ctx, "delete", "tenant", s.Tenant, "id", id)
	return nil
}

// ForgetReceipt is memgate.ForgetReceipt (the callers' contract).
type ForgetReceipt = memgate.ForgetReceipt

// Forget erases every memory of the principal of s (s.Tenant,
// s.Principal; its agent and conversation are ignored) — in every agent and
// conversation, whatever its status — with its vector, feedback, dedup
// signature and index entry, and returns a receipt with counts. The audit
// log keeps the record of the forget itself (ids and counts, no content).
func (e *Engine) Forget(ctx context.Context, s memgate.Scope) (*ForgetReceipt, error) {
	tenant, principal := s.Tenant, s.Principal
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("principal", principal); err != nil {
		return nil, err
	}
	start := time.Now()
	rc := &ForgetReceipt{Tenant: tenant, Principal: principal, ByKind: map[string]int64{}, ByStatus: map[string]int64{}}
	counts, err := e.store.Counts(ctx, memgate.Scope{Tenant: tenant, Principal: principal}, time.Time{})
	if err != nil {
		return nil, err
	}
	pseudonym, err := e.Pseudonym(ctx, tenant, principal)
	if err != nil {
		return nil, err
	}
	// Events still queued name the principal: appended first, they take
	// the pseudonym with the rest.
	e.flushAudit()
	n, err := e.store.Forget(ctx, tenant, principal, pseudonym)
	e.rec.idx.Drop(tenant, principal)
	if err != nil {
		return nil, err
	}
	rc.Forgotten, rc.AuditPrincipal = n, pseudonym
	var counted int64
	for _, c := range counts {
		rc.ByKind[string(c.Kind)] += c.N
		rc.ByStatus[string(c.Status)] += c.N
		counted += c.N
	}
	if counted != n {
		// A write landed between the count and the erase: the total is
		// exact, the breakdown is not. Say so rather than guess.
		rc.ByKind, rc.ByStatus = nil, nil
	}
	e.audit(ctx, store.AuditEvent{Tenant: tenant, Principal: pseudonym, Action: ActionForget, Counts: map[string]int64{"forgotten": n}})
	e.log.InfoContext(ctx, "forget", "tenant", tenant, "principal", principal, "removed", n, "took", time.Since(start))
	return rc, nil
}

// Counts returns memory counts per (principal, kind, status) in scope, with
// expired memories counted as "expired".
func (e *Engine) Counts(ctx context.Context, s memgate.Scope) ([]memgate.Count, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return e.store.Counts(ctx, s, e.now())
}

func checkReason(field, s string, l memgate.Limits) error {
	return memgate.CheckText(field, s, l.MaxReasonBytes)
}

// The engine is the memory operations with no authorization: a trusted
// caller's (guard.Session adds the key's).
var _ memgate.Memories = (*Engine)(nil)
