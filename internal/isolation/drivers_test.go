package isolation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// scopeReq holds the narrowing fields a request carries, as a caller
// would send them: empty means not named. Only the key decides what they
// may reach.
type scopeReq struct {
	Tenant, Principal, Agent, Conversation string
}

type rememberIn struct {
	Kind        memgate.Kind
	Source      memgate.Source
	Sensitivity memgate.Sensitivity // "" on surfaces that cannot set it
	Content     string
	Supersedes  string
	// IdempotencyKey makes a retry safe (the HTTP API sends it as the
	// Idempotency-Key header, MCP as the tool's idempotency_key).
	IdempotencyKey string
}

type recallIn struct {
	Query             string
	K                 int
	Kinds             []memgate.Kind
	IncludeRestricted bool
}

type listIn struct {
	Kinds  []memgate.Kind
	Status memgate.Status // "": the surface's default
	Text   string
}

// updateIn changes the content or, when Content is empty, the reason.
type updateIn struct {
	Content, Reason string
}

// driver performs operations as a caller through one surface. Memories it
// returns are what the surface answered: complete on the engine and the
// HTTP API; on MCP, only what its tools show (id, kind, source, status
// where listed, content), so their owner is judged from the registry.
// Errors are *apiError.
type driver interface {
	// remember also returns whether the surface marked the answer
	// replayed (an earlier request with the same idempotency key stored
	// the memory; this one stored nothing).
	remember(c *caller, r scopeReq, in rememberIn) (m *memgate.Memory, replayed bool, err error)
	recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error)
	// list reads every page.
	list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error)
	get(c *caller, r scopeReq, id string) (*memgate.Memory, error)
	update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error)
	revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error)
	approve(c *caller, r scopeReq, id string) (*memgate.Memory, error)
	delete(c *caller, r scopeReq, id string) error
	forget(c *caller, r scopeReq) (int64, error)
	importJSONL(c *caller, r scopeReq, body []byte) (int, error)
	// export returns the memories and the JSONL lines as written.
	export(c *caller, r scopeReq) ([]*memgate.Memory, [][]byte, error)
}

// apiError is an error as a surface answered it. Two answers are the same
// when every field is.
type apiError struct {
	Status  int // HTTP status; 0 where the surface has none (engine, MCP tool errors)
	Code    string
	Field   string
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s field=%q %q", e.Status, e.Code, e.Field, e.Message)
}

func codeOf(err error) string {
	var e *apiError
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "?"
	}
	return ""
}

// engineDriver calls the engine directly, with the scope auth.ScopeFor
// derives from the caller's key and request, and the few rules the
// surfaces add on top (one principal for remember, recall and forget; a
// tenant-wide key for import; restricted memories only for the roles that
// may ask).
type engineDriver struct{ w *world }

func engineError(err error) error {
	if err == nil {
		return nil
	}
	var me *memgate.Error
	if errors.As(err, &me) {
		return &apiError{Code: me.Code, Field: me.Field, Message: memgate.ErrorMessage(err)}
	}
	return &apiError{Code: memgate.EINTERNAL, Message: err.Error()}
}

func (d *engineDriver) scope(c *caller, op auth.Op, r scopeReq) (memgate.Scope, error) {
	s, err := auth.ScopeFor(c.key, op, memgate.Scope{Tenant: r.Tenant, Principal: r.Principal, Agent: r.Agent, Conversation: r.Conversation})
	if err != nil {
		return s, engineError(err)
	}
	return s, nil
}

func onePrincipal(s memgate.Scope) error {
	if s.AllPrincipals || s.Principal == "" {
		return engineError(memgate.FieldError("principal", "is required"))
	}
	return nil
}

func (d *engineDriver) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	s, err := d.scope(c, auth.OpRemember, r)
	if err != nil {
		return nil, false, err
	}
	if err := onePrincipal(s); err != nil {
		return nil, false, err
	}
	ctx := engine.WithActor(d.w.ctx, c.key.ID)
	m, err := d.w.eng.Remember(ctx, engine.RememberRequest{
		Memory: memgate.Memory{
			Tenant: s.Tenant, Principal: s.Principal, Agent: s.Agent, Conversation: s.Conversation,
			Kind: in.Kind, Source: in.Source, Sensitivity: in.Sensitivity, Content: in.Content,
		},
		Supersedes:     in.Supersedes,
		IdempotencyKey: in.IdempotencyKey,
	})
	if err != nil {
		return nil, false, engineError(err)
	}
	return m.Memory, m.Replayed, nil
}

func (d *engineDriver) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpRecall, r)
	if err != nil {
		return nil, err
	}
	if err := onePrincipal(s); err != nil {
		return nil, err
	}
	if in.IncludeRestricted && !auth.MayIncludeRestricted(c.key.Role) {
		return nil, engineError(&memgate.Error{Code: memgate.EFORBIDDEN, Field: "include_restricted", Message: "is not granted"})
	}
	ctx := engine.WithActor(d.w.ctx, c.key.ID)
	res, err := d.w.eng.Recall(ctx, engine.RecallRequest{Scope: s, Query: in.Query, K: in.K, Kinds: in.Kinds, IncludeRestricted: in.IncludeRestricted})
	if err != nil {
		return nil, engineError(err)
	}
	var out []*memgate.Memory
	for _, h := range res.Results {
		out = append(out, h.Memory)
	}
	return out, nil
}

func (d *engineDriver) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpList, r)
	if err != nil {
		return nil, err
	}
	f := engine.ListRequest{Kinds: in.Kinds, Text: in.Text, Limit: store.MaxPageSize}
	if in.Status != "" {
		f.Statuses = []memgate.Status{in.Status}
	}
	var out []*memgate.Memory
	for {
		p, err := d.w.eng.List(d.w.ctx, s, f)
		if err != nil {
			return nil, engineError(err)
		}
		out = append(out, p.Memories...)
		if p.NextCursor == "" {
			return out, nil
		}
		f.Cursor = p.NextCursor
	}
}

func (d *engineDriver) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpGet, r)
	if err != nil {
		return nil, err
	}
	m, err := d.w.eng.Get(d.w.ctx, s, id)
	return m, engineError(err)
}

func (d *engineDriver) update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpUpdate, r)
	if err != nil {
		return nil, err
	}
	var p engine.Patch
	if in.Content != "" {
		p.Content = &in.Content
	} else {
		p.Reason = &in.Reason
	}
	m, err := d.w.eng.Update(engine.WithActor(d.w.ctx, c.key.ID), s, id, version, p)
	return m, engineError(err)
}

func (d *engineDriver) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpRevoke, r)
	if err != nil {
		return nil, err
	}
	m, err := d.w.eng.Revoke(engine.WithActor(d.w.ctx, c.key.ID), s, id, "isolation test")
	return m, engineError(err)
}

func (d *engineDriver) approve(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpApprove, r)
	if err != nil {
		return nil, err
	}
	ctx := engine.WithActor(d.w.ctx, c.key.ID)
	cur, err := d.w.eng.Get(ctx, s, id)
	if err != nil {
		return nil, engineError(err)
	}
	m, err := d.w.eng.Approve(ctx, s, id, cur.Version)
	return m, engineError(err)
}

func (d *engineDriver) delete(c *caller, r scopeReq, id string) error {
	s, err := d.scope(c, auth.OpDelete, r)
	if err != nil {
		return err
	}
	return engineError(d.w.eng.Delete(engine.WithActor(d.w.ctx, c.key.ID), s, id))
}

func (d *engineDriver) forget(c *caller, r scopeReq) (int64, error) {
	s, err := d.scope(c, auth.OpForget, r)
	if err != nil {
		return 0, err
	}
	if err := onePrincipal(s); err != nil {
		return 0, err
	}
	rc, err := d.w.eng.Forget(engine.WithActor(d.w.ctx, c.key.ID), s.Tenant, s.Principal)
	if err != nil {
		return 0, engineError(err)
	}
	return rc.Forgotten, nil
}

func (d *engineDriver) importJSONL(c *caller, r scopeReq, body []byte) (int, error) {
	s, err := d.scope(c, auth.OpImport, r)
	if err != nil {
		return 0, err
	}
	if !s.AllPrincipals {
		return 0, engineError(memgate.Errorf(memgate.EFORBIDDEN, "import needs a tenant-wide key"))
	}
	res, err := d.w.eng.Import(engine.WithActor(d.w.ctx, c.key.ID), engine.ImportRequest{Tenant: s.Tenant}, bytes.NewReader(body))
	if err != nil {
		return 0, engineError(err)
	}
	return res.Imported, nil
}

func (d *engineDriver) export(c *caller, r scopeReq) ([]*memgate.Memory, [][]byte, error) {
	s, err := d.scope(c, auth.OpExport, r)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if _, err := d.w.eng.Export(d.w.ctx, s, &buf); err != nil {
		return nil, nil, engineError(err)
	}
	return parseJSONL(buf.Bytes())
}

// parseJSONL reads an export: one memory per line.
func parseJSONL(b []byte) ([]*memgate.Memory, [][]byte, error) {
	var ms []*memgate.Memory
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m memgate.Memory
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, nil, fmt.Errorf("export line %d: %v", len(lines)+1, err)
		}
		ms = append(ms, &m)
		lines = append(lines, bytes.Clone(line))
	}
	return ms, lines, sc.Err()
}
