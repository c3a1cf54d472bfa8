package engine

import (
	"context"
	"math"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Approve moves a pending memory to active: from now on it is recalled.
// version is the version the approver reviewed (a REST caller's If-Match):
// a memory changed since is a conflict naming If-Match and stays pending,
// so what becomes active is exactly what a person read. When the pending
// memory was meant to supersede another (it was remembered with
// Supersedes and the write gate held it), that memory, if still active,
// is marked superseded by it in the same transaction: the replacement
// takes effect only now, and the old memory stays in the chain. Approving
// an active memory returns it unchanged. The audit event records the
// approved version and content hash.
func (e *Engine) Approve(ctx context.Context, s memgate.Scope, id string, version int64) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	if err := checkReviewed(version); err != nil {
		return nil, err
	}
	now := e.now()
	m, old, err := e.store.Promote(ctx, s, id, store.Promotion{At: now, By: writerOf(ctx), Version: version})
	if err != nil {
		return nil, err
	}
	e.indexed(m)
	e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionApprove, MemoryIDs: []string{m.ID},
		Counts: map[string]int64{"version": version}, ContentSHA256: m.ContentSHA256})
	if old != nil {
		e.indexed(old)
		e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionSupersede, MemoryIDs: []string{old.ID, m.ID}})
	}
	e.log.InfoContext(ctx, ActionApprove, "tenant", m.Tenant, "principal", m.Principal, "id", m.ID, "version", version, "status", m.Status, "superseded", old != nil)
	e.derive(m, now)
	return m, nil
}

// checkReviewed checks the version an approval or a rejection names.
func checkReviewed(version int64) error {
	if version <= 0 {
		return memgate.FieldError("version", "is required: the version of the memory that was reviewed (If-Match)")
	}
	return nil
}

// Reject refuses a pending memory: it becomes revoked with reason and is
// never recalled. version is the reviewed one, as for Approve.
func (e *Engine) Reject(ctx context.Context, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error) {
	if err := checkReviewed(version); err != nil {
		return nil, err
	}
	if reason == "" {
		reason = "rejected"
	}
	return e.setStatus(ctx, s, id, ActionReject, store.StatusChange{
		From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusRevoked, Reason: reason, Version: version,
	})
}

// Revoke marks the memory revoked with reason; it is left out of every later
// recall. Revoking a revoked memory returns it unchanged.
func (e *Engine) Revoke(ctx context.Context, s memgate.Scope, id, reason string) (*memgate.Memory, error) {
	return e.setStatus(ctx, s, id, ActionRevoke, store.StatusChange{
		From: []memgate.Status{memgate.StatusActive, memgate.StatusPending}, To: memgate.StatusRevoked, Reason: reason,
	})
}

func (e *Engine) setStatus(ctx context.Context, s memgate.Scope, id, action string, ch store.StatusChange) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	if err := checkReason("reason", ch.Reason, e.cfg.Limits); err != nil {
		return nil, err
	}
	ch.At, ch.By = e.now(), writerOf(ctx)
	m, err := e.store.SetStatus(ctx, s, id, ch)
	if err != nil {
		return nil, err
	}
	e.indexed(m)
	ev := store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: action, MemoryIDs: []string{m.ID}}
	if ch.Version > 0 {
		ev.Counts, ev.ContentSHA256 = map[string]int64{"version": ch.Version}, m.ContentSHA256
	}
	e.audit(ctx, ev)
	e.log.InfoContext(ctx, action, "tenant", m.Tenant, "principal", m.Principal, "id", m.ID, "status", m.Status)
	e.derive(m, ch.At)
	return m, nil
}

// Feedback records how useful a memory was, in [-1, 1]; the count and mean
// appear in its receipt.
func (e *Engine) Feedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	if math.IsNaN(value) || value < -1 || value > 1 {
		return nil, memgate.FieldError("value", "must be between -1 and 1")
	}
	m, err := e.store.AddFeedback(ctx, s, id, value)
	if err != nil {
		return nil, err
	}
	e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionFeedback, MemoryIDs: []string{m.ID}, Scores: []float64{value}})
	e.derive(m, e.now())
	return m, nil
}
