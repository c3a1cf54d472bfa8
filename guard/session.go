package guard

import (
	"context"
	"fmt"
	"io"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
)

// Session is one key's view of memory: every method authorizes the
// operation for the key, then calls the engine with the narrowed scope and
// the key's id as the audit actor. Scopes and memory fields passed in are
// what the request asked for (its tenant empty or the key's; principal,
// agent and conversation only narrowing); the key decides the rest. A
// Session is cheap and safe for concurrent use.
type Session struct {
	g   *Guard
	key memgate.Key
}

// Key returns the session's key record (without its hash).
func (s *Session) Key() memgate.Key {
	k := s.key
	k.Hash = ""
	k.Sources = append([]memgate.Source(nil), k.Sources...)
	return k
}

// Grant is what the key may do, as GET /v1/whoami tells it.
func (s *Session) Grant() auth.Grant { return auth.GrantOf(&s.key) }

// Allowed reports whether the key's role may perform op at all.
func (s *Session) Allowed(op auth.Op) bool { return auth.Allowed(s.key.Role, op) }

// Scope returns the scope op acts in for the request req: auth.ScopeFor
// after the tenant check (a request naming another tenant is forbidden,
// naming "tenant"). Every method of Session starts here.
func (s *Session) Scope(op auth.Op, req memgate.Scope) (memgate.Scope, error) {
	if req.Tenant != "" && req.Tenant != s.key.Tenant {
		return memgate.Scope{}, errOtherTenant("tenant")
	}
	req.Tenant = s.key.Tenant
	sc, err := auth.ScopeFor(&s.key, op, req)
	if err != nil {
		return memgate.Scope{}, err
	}
	if sc.Tenant != s.key.Tenant {
		// auth.ScopeFor never widens; a second lock, not a branch any
		// request is expected to take.
		return memgate.Scope{}, fmt.Errorf("guard: scope for key %s names a tenant other than the key's", s.key.ID)
	}
	return sc, nil
}

// onePrincipal is Scope for an operation that acts for one person.
func (s *Session) onePrincipal(op auth.Op, req memgate.Scope, what string) (memgate.Scope, error) {
	sc, err := s.Scope(op, req)
	if err != nil {
		return memgate.Scope{}, err
	}
	if sc.AllPrincipals || sc.Principal == "" {
		return memgate.Scope{}, errOnePrincipal(what)
	}
	return sc, nil
}

// ctx attributes the engine's work to the key.
func (s *Session) ctx(ctx context.Context) context.Context { return engine.WithActor(ctx, s.key.ID) }

// MayClaim reports whether the key may write memories attributed to src.
func (s *Session) MayClaim(src memgate.Source) bool { return auth.MayClaim(&s.key, src) }

// checkSource refuses a source the key may not claim. An unknown source is
// invalid (the engine's own message), a known one outside the grant
// forbidden: both name field.
func (s *Session) checkSource(field string, src memgate.Source) error {
	if src == "" {
		return nil // the engine says it is required
	}
	if _, err := memgate.ParseSource(string(src)); err != nil {
		return memgate.FieldError(field, "%s", memgate.ErrorMessage(err))
	}
	if !s.MayClaim(src) {
		return auth.ErrSource(field)
	}
	return nil
}

// remember narrows one remember request: the scope, the source, and the
// lookup of the memory it supersedes.
func (s *Session) remember(ctx context.Context, r memgate.RememberRequest) (memgate.RememberRequest, error) {
	sc, err := s.onePrincipal(auth.OpRemember, r.Memory.Scope(), "a memory belongs to one principal")
	if err != nil {
		return r, err
	}
	if r.Memory.Tenant != "" && r.Memory.Tenant != s.key.Tenant {
		return r, errOtherTenant("tenant")
	}
	if err := s.checkSource("source", r.Memory.Source); err != nil {
		return r, err
	}
	m := &r.Memory
	m.Tenant, m.Principal, m.Agent, m.Conversation = sc.Tenant, sc.Principal, sc.Agent, sc.Conversation
	r.ExactAgent, r.HideRestricted = sc.ExactAgent, sc.HideRestricted
	if r.Supersedes != "" {
		// Superseding retires what the old memory says and puts the new
		// one in its place: it changes the old memory as an update would,
		// so the key must be able to claim the old memory's source too.
		look := r.Memory.Scope()
		look.ExactAgent, look.HideRestricted = r.ExactAgent, r.HideRestricted
		old, err := s.g.eng.Get(s.ctx(ctx), look, r.Supersedes)
		if err != nil {
			return r, err
		}
		if !s.MayClaim(old.Source) {
			return r, auth.ErrSource("supersedes")
		}
	}
	return r, nil
}

// Remember passes one memory through the write gate as the key's.
func (s *Session) Remember(ctx context.Context, r memgate.RememberRequest) (*memgate.Remembered, error) {
	r, err := s.remember(ctx, r)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Remember(s.ctx(ctx), r)
}

// RememberBatch is Remember for an atomic batch; an error names its item
// (memories[i].field).
func (s *Session) RememberBatch(ctx context.Context, rs []memgate.RememberRequest) ([]*memgate.Remembered, error) {
	if !s.Allowed(auth.OpRemember) {
		return nil, auth.ErrForbidden(auth.OpRemember)
	}
	out := make([]memgate.RememberRequest, len(rs))
	for i, r := range rs {
		if r.Supersedes != "" {
			return nil, itemError(i, memgate.FieldError("supersedes", "is only accepted on a single remember"))
		}
		n, err := s.remember(ctx, r)
		if err != nil {
			return nil, itemError(i, err)
		}
		out[i] = n
	}
	return s.g.eng.RememberBatch(s.ctx(ctx), out)
}

// Recall recalls for one principal. Restricted memories only for the
// roles that may read them (auth.MayIncludeRestricted, field
// include_restricted), and a preview only for the roles that inspect
// (auth.MayPreview, field preview): an agent's recalls reach a prompt and
// stay in each memory's recall history.
func (s *Session) Recall(ctx context.Context, r memgate.RecallRequest) (*memgate.RecallResult, error) {
	sc, err := s.onePrincipal(auth.OpRecall, r.Scope, "recall is for one principal")
	if err != nil {
		return nil, err
	}
	if r.IncludeRestricted && !auth.MayIncludeRestricted(s.key.Role) {
		return nil, &memgate.Error{Code: memgate.EFORBIDDEN, Field: "include_restricted", Message: "is not granted to this API key's role"}
	}
	if r.Preview && !auth.MayPreview(s.key.Role) {
		return nil, &memgate.Error{Code: memgate.EFORBIDDEN, Field: "preview", Message: "is not granted to this API key's role: its recalls are real ones"}
	}
	r.Scope = sc
	return s.g.eng.Recall(s.ctx(ctx), r)
}

// List returns a page of the memories the key may see.
func (s *Session) List(ctx context.Context, req memgate.Scope, f memgate.ListRequest) (*memgate.Page, error) {
	sc, err := s.Scope(auth.OpList, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.List(s.ctx(ctx), sc, f)
}

// Get returns one memory; one outside the key's reach (another principal,
// a restricted one for an agent key) is not_found, like a missing id.
func (s *Session) Get(ctx context.Context, req memgate.Scope, id string) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpGet, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Get(s.ctx(ctx), sc, id)
}

// Update applies p to a memory at version (compare-and-set). The key must
// be able to claim the memory's source (an agent key cannot rewrite what a
// person said), and only the roles that read restricted memories may make
// one standard. The engine's write gate judges the result.
func (s *Session) Update(ctx context.Context, req memgate.Scope, id string, version int64, p memgate.Patch) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpUpdate, req)
	if err != nil {
		return nil, err
	}
	// Decided on the memory as the engine reads it for the update; the
	// version compare-and-set makes the decision hold for what is
	// written: a memory changed since it was read is a conflict.
	return s.g.eng.UpdateChecked(s.ctx(ctx), sc, id, version, p, func(cur *memgate.Memory) error {
		if !s.MayClaim(cur.Source) {
			return auth.ErrSource("source")
		}
		if p.Sensitivity != nil && cur.Sensitivity == memgate.SensitivityRestricted && *p.Sensitivity != memgate.SensitivityRestricted &&
			!auth.MayLowerSensitivity(s.key.Role) {
			return &memgate.Error{Code: memgate.EFORBIDDEN, Field: "sensitivity", Message: "only the person or an admin may lift a restriction"}
		}
		return nil
	})
}

// Revoke revokes a memory within the key's reach. Revoking retires a
// memory as superseding does, so a key that may not delete it (an agent
// key) must be able to claim its source, unless the policy says otherwise
// (policy.Config.RevokeAnySource): a prompt-injected model cannot retire
// what the person said. A key that may delete the memory may revoke it.
// A memory's source never changes, so the check on the memory read here
// holds for the one the engine revokes.
func (s *Session) Revoke(ctx context.Context, req memgate.Scope, id, reason string) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpRevoke, req)
	if err != nil {
		return nil, err
	}
	if !s.Allowed(auth.OpDelete) && s.g.eng.Policy().RevokeNeedsClaim() {
		cur, err := s.g.eng.Get(s.ctx(ctx), sc, id)
		if err != nil {
			return nil, err
		}
		if !s.MayClaim(cur.Source) {
			return nil, auth.ErrSource("source")
		}
	}
	return s.g.eng.Revoke(s.ctx(ctx), sc, id, reason)
}

// Approve activates a pending memory at the version that was reviewed.
func (s *Session) Approve(ctx context.Context, req memgate.Scope, id string, version int64) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpApprove, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Approve(s.ctx(ctx), sc, id, version)
}

// Reject refuses a pending memory at the version that was reviewed.
func (s *Session) Reject(ctx context.Context, req memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpReject, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Reject(s.ctx(ctx), sc, id, version, reason)
}

// Feedback records how useful a memory was.
func (s *Session) Feedback(ctx context.Context, req memgate.Scope, id string, value float64) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpFeedback, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Feedback(s.ctx(ctx), sc, id, value)
}

// Delete removes a memory for good.
func (s *Session) Delete(ctx context.Context, req memgate.Scope, id string) error {
	sc, err := s.Scope(auth.OpDelete, req)
	if err != nil {
		return err
	}
	return s.g.eng.Delete(s.ctx(ctx), sc, id)
}

// Forget erases one principal: the key's own, or (admin) the one req names.
func (s *Session) Forget(ctx context.Context, req memgate.Scope) (*memgate.ForgetReceipt, error) {
	sc, err := s.onePrincipal(auth.OpForget, memgate.Scope{Tenant: req.Tenant, Principal: req.Principal}, "forget erases one principal's memories")
	if err != nil {
		return nil, err
	}
	return s.g.eng.Forget(s.ctx(ctx), sc)
}

// Audit returns a page of the audit log within the key's reach.
func (s *Session) Audit(ctx context.Context, req memgate.Scope, f memgate.AuditFilter) (*memgate.AuditPage, error) {
	sc, err := s.Scope(auth.OpAudit, memgate.Scope{Tenant: req.Tenant, Principal: req.Principal, AllPrincipals: req.AllPrincipals})
	if err != nil {
		return nil, err
	}
	return s.g.eng.Audit(s.ctx(ctx), sc, f)
}

// AuditHistogram counts audit events per bucket within the key's reach.
func (s *Session) AuditHistogram(ctx context.Context, req memgate.Scope, r memgate.AuditHistogramRequest) (*memgate.AuditHistogram, error) {
	sc, err := s.Scope(auth.OpAudit, memgate.Scope{Tenant: req.Tenant, Principal: req.Principal, AllPrincipals: req.AllPrincipals})
	if err != nil {
		return nil, err
	}
	return s.g.eng.AuditHistogram(s.ctx(ctx), sc, r)
}

// Counts counts the memories within the key's reach.
func (s *Session) Counts(ctx context.Context, req memgate.Scope) ([]memgate.Count, error) {
	sc, err := s.Scope(auth.OpStats, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.Counts(s.ctx(ctx), sc)
}

// Import stores a JSONL export in the key's tenant: a tenant-wide key
// only, since lines name their own principals.
func (s *Session) Import(ctx context.Context, req memgate.ImportRequest, r io.Reader) (memgate.ImportResult, error) {
	sc, err := s.Scope(auth.OpImport, memgate.Scope{Tenant: req.Tenant})
	if err != nil {
		return memgate.ImportResult{}, err
	}
	if !sc.AllPrincipals {
		return memgate.ImportResult{}, memgate.Errorf(memgate.EFORBIDDEN, "import needs a tenant-wide key")
	}
	req.Tenant = sc.Tenant
	return s.g.eng.Import(s.ctx(ctx), req, r)
}

// Export writes the memories within the key's reach as JSONL.
func (s *Session) Export(ctx context.Context, req memgate.Scope, w io.Writer) (int, error) {
	sc, err := s.Scope(auth.OpExport, req)
	if err != nil {
		return 0, err
	}
	return s.g.eng.Export(s.ctx(ctx), sc, w)
}

// Chat runs one turn of a with this key: its recall and its remembers go
// through this Session, so the turn reads and writes exactly what the key
// may. The user's turn is stored as source user when the key may claim it,
// else as the agent's report of what the person said (assistant, with
// speaker "user"); extracted facts go to the key's agent, if bound.
func (s *Session) Chat(ctx context.Context, a *agent.Agent, t agent.Turn) (*agent.Result, error) {
	sc, err := s.onePrincipal(auth.OpChat, t.Scope, "a chat is with one principal")
	if err != nil {
		return nil, err
	}
	t.Scope = memgate.Scope{Tenant: sc.Tenant, Principal: sc.Principal, Agent: sc.Agent, Conversation: sc.Conversation}
	t.FactAgent = s.key.Agent
	t.UserSource = memgate.SourceUser
	if !s.MayClaim(memgate.SourceUser) {
		t.UserSource = memgate.SourceAssistant
	}
	return a.With(s).Respond(ctx, t)
}

// Ingest stores a conversation the application already had, as the key's
// (remember): each message as a message memory whose source comes from
// its role, within what the key may claim (the user's falls back to the
// agent's report of it, as in Chat, and for a key that may claim user an
// assistant's or a tool's turn is the person's report of it; another role
// the key may not claim is forbidden, naming messages[i].role). With a (the server's agent, nil
// without a model) facts are proposed from it when the agent extracts.
func (s *Session) Ingest(ctx context.Context, a *agent.Agent, in agent.Ingestion) (*agent.IngestResult, error) {
	sc, err := s.onePrincipal(auth.OpRemember, in.Scope, "a conversation is with one principal")
	if err != nil {
		return nil, err
	}
	in.Scope = memgate.Scope{Tenant: sc.Tenant, Principal: sc.Principal, Agent: sc.Agent, Conversation: in.Scope.Conversation}
	in.FactAgent = s.key.Agent
	in.UserSource = memgate.SourceUser
	if !s.MayClaim(memgate.SourceUser) {
		in.UserSource = memgate.SourceAssistant
	}
	// A person's key may hand over a transcript with the assistant's
	// turns: each is stored as the person's report of it (source user,
	// speaker assistant), never under a source the key may not claim.
	if s.MayClaim(memgate.SourceUser) {
		in.ReportSource = memgate.SourceUser
	}
	in.MayClaim = s.MayClaim
	if a == nil {
		return agent.Ingest(ctx, s, in)
	}
	return a.With(s).Ingest(ctx, in)
}

// A Session is the memory operations for one key.
var _ memgate.Memories = (*Session)(nil)

// GetByKey returns the active memory with key at the level the request
// names, narrowed as Get narrows (an agent-bound key looks at its agent's
// level). Each source is its own key space: the memory of a source the
// key may claim comes first (the one its keyed write replaces, so a
// write then a read by key meet), else the one the store ranks first.
func (s *Session) GetByKey(ctx context.Context, req memgate.Scope, key string) (*memgate.Memory, error) {
	sc, err := s.Scope(auth.OpGet, req)
	if err != nil {
		return nil, err
	}
	return s.g.eng.GetByKeyPreferring(s.ctx(ctx), sc, key, auth.SourcesOf(&s.key))
}
