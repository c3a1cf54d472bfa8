package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Audit actions.
const (
	ActionRemember  = "remember"
	ActionRecall    = "recall"
	ActionUpdate    = "update"
	ActionSupersede = "supersede"
	ActionRevoke    = "revoke"
	ActionApprove   = "approve"
	ActionReject    = "reject"
	ActionDelete    = "delete"
	ActionForget    = "forget"
	ActionImport    = "import"
	ActionFeedback  = "feedback"
	ActionSweep     = "sweep"
	ActionEvict     = "evict"
)

type actorKey struct{}

// WithActor returns a context whose operations the audit log attributes to
// actor (a key id, "cli", an agent name). It is an identifier, never a
// secret: the HTTP layer passes the key's id, not the key.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

func actorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return "engine"
}

// QueryHash is what the audit log keeps of a query: its SHA-256, never its
// text.
func QueryHash(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])
}

// audit appends one event. The operation it records has already committed:
// a failure to append is logged (ids only) and does not undo it.
func (e *Engine) audit(ctx context.Context, ev store.AuditEvent) {
	ev.Actor = actorOf(ctx)
	if ev.At.IsZero() {
		ev.At = e.now()
	}
	e.appendAudit(context.WithoutCancel(ctx), []store.AuditEvent{ev})
}

func (e *Engine) appendAudit(ctx context.Context, evs []store.AuditEvent) {
	if err := e.store.AppendAudit(ctx, evs); err != nil {
		e.log.ErrorContext(ctx, "audit append failed", "events", len(evs), "action", evs[0].Action, "err", memgate.ErrorCode(err))
	}
}

// auditLater queues an event for a frequent operation (recall, remember): a
// write transaction of its own on each would cost more than the operation
// itself. The trade-off: a process killed within auditFlushEvery of an
// operation may lose that operation's audit event (never the operation,
// which has committed). Queued events
// are appended in batches by one goroutine, within auditFlushEvery; Audit
// and Close flush the queue first, so this process reads its own events.
// When the queue is full the event is appended at once (never dropped).
func (e *Engine) auditLater(ctx context.Context, ev store.AuditEvent) {
	ev.Actor = actorOf(ctx)
	if ev.At.IsZero() {
		ev.At = e.now()
	}
	e.auditOnce.Do(e.startAuditor)
	select {
	case e.auditq <- ev:
	default:
		e.appendAudit(context.WithoutCancel(ctx), []store.AuditEvent{ev})
	}
}

const (
	auditQueue      = 4096
	auditBatch      = 256
	auditFlushEvery = 50 * time.Millisecond
)

func (e *Engine) startAuditor() {
	e.auditq = make(chan store.AuditEvent, auditQueue)
	e.auditFlush = make(chan chan struct{})
	e.auditDone = make(chan struct{})
	go e.auditor()
}

func (e *Engine) auditor() {
	defer close(e.auditDone)
	t := time.NewTicker(auditFlushEvery)
	defer t.Stop()
	var batch []store.AuditEvent
	flush := func() {
		if len(batch) > 0 {
			e.appendAudit(context.Background(), batch)
			batch = batch[:0]
		}
	}
	drain := func() {
		for {
			select {
			case ev := <-e.auditq:
				batch = append(batch, ev)
				if len(batch) >= auditBatch {
					flush()
				}
			default:
				flush()
				return
			}
		}
	}
	for {
		select {
		case ev, ok := <-e.auditq:
			if !ok {
				flush()
				return
			}
			batch = append(batch, ev)
			if len(batch) >= auditBatch {
				flush()
			}
		case <-t.C:
			flush()
		case done := <-e.auditFlush:
			drain()
			close(done)
		case <-e.auditStop:
			drain()
			return
		}
	}
}

// flushAudit waits until every queued event is appended.
func (e *Engine) flushAudit() {
	e.auditOnce.Do(e.startAuditor)
	done := make(chan struct{})
	select {
	case e.auditFlush <- done:
		<-done
	case <-e.auditDone:
	}
}

// Close flushes the audit queue and stops the engine's background work. It
// does not close the store, which the caller owns.
func (e *Engine) Close() error {
	e.auditOnce.Do(e.startAuditor)
	e.closeOnce.Do(func() { close(e.auditStop) })
	<-e.auditDone
	return nil
}

// Audit returns audit events of a tenant, newest first. Scope must name
// the tenant; a principal in scope restricts to that principal's events.
func (e *Engine) Audit(ctx context.Context, s memgate.Scope, f store.AuditFilter) (*store.AuditPage, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !s.AllPrincipals {
		if f.Principal != "" && f.Principal != s.Principal {
			return &store.AuditPage{Events: []store.AuditEvent{}}, nil
		}
		f.Principal = s.Principal
	}
	if f.MemoryID != "" && !memgate.ValidIdent(f.MemoryID) {
		return nil, memgate.FieldError("memory_id", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return nil, memgate.FieldError("to", "must be after from")
	}
	if f.Limit < 0 {
		return nil, memgate.FieldError("limit", "must not be negative")
	}
	e.flushAudit()
	return e.store.ListAudit(ctx, s.Tenant, f)
}

// Sweep deletes memories that expired more than grace ago, in batches, and
// returns how many. Reads exclude expired memories already; the sweep only
// reclaims space.
func (e *Engine) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	if grace < 0 {
		return 0, memgate.FieldError("grace", "must not be negative")
	}
	before := e.now().Add(-grace)
	total := 0
	for {
		refs, err := e.store.DeleteExpired(ctx, before, 500)
		if err != nil {
			return total, err
		}
		if len(refs) == 0 {
			return total, nil
		}
		total += len(refs)
		byTenant := map[string][]string{}
		for _, r := range refs {
			e.rec.idx.Remove(r.Tenant, r.Principal, r.ID)
			byTenant[r.Tenant] = append(byTenant[r.Tenant], r.ID)
		}
		for t, ids := range byTenant {
			e.audit(ctx, store.AuditEvent{Tenant: t, Action: ActionSweep, MemoryIDs: ids, Counts: map[string]int64{"deleted": int64(len(ids))}})
		}
		e.log.InfoContext(ctx, "sweep", "deleted", len(refs))
		if len(refs) < 500 {
			return total, nil
		}
	}
}

// RunSweeper sweeps every interval until ctx ends.
func (e *Engine) RunSweeper(ctx context.Context, interval, grace time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.Sweep(ctx, grace); err != nil && ctx.Err() == nil {
				e.log.ErrorContext(ctx, "sweep failed", "err", memgate.ErrorCode(err))
			}
		}
	}
}
