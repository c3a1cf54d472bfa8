package engine

import (
	"context"
	"math"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Approve moves a pending memory to active: from now on it is recalled.
// When the pending memory was meant to supersede another (it was
// remembered with Supersedes and the write gate held it), that memory, if
// still active, is marked superseded by it in the same transaction: the
// replacement takes effect only now, and the old memory stays in the chain.
// Approving an active memory returns it unchanged.
func (e *Engine) Approve(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	now := e.now()
	m, old, err := e.store.Promote(ctx, s, id, store.Promotion{At: now})
	if err != nil {
		return nil, err
	}
	e.indexed(m)
	e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionApprove, MemoryIDs: []string{m.ID}})
	if old != nil {
		e.indexed(old)
		e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionSupersede, MemoryIDs: []string{old.ID, m.ID}})
	}
	e.log.InfoContext(ctx, ActionApprove, "tenant", m.Tenant, "principal", m.Principal, "id", m.ID, "status", m.Status, "superseded", old != nil)
	e.derive(m, now)
	return m, nil
}

// Reject refuses a pending memory: it becomes revoked with reason and is
// never recalled.
func (e *Engine) Reject(ctx context.Context, s memgate.Scope, id, reason string) (*memgate.Memory, error) {
	if reason == "" {
		reason = "rejected"
	}
	return e.setStatus(ctx, s, id, ActionReject, store.StatusChange{
		From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusRevoked, Reason: reason,
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
	ch.At = e.now()
	m, err := e.store.SetStatus(ctx, s, id, ch)
	if err != nil {
		return nil, err
	}
	e.indexed(m)
	e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: action, MemoryIDs: []string{m.ID}})
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
