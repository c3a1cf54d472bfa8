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
	"github.com/memgate/memgate/guard"
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
	// Key is the memory's own key (Memory.Key): "" for none.
	Key string
	// IdempotencyKey makes a retry safe (the HTTP API sends it as the
	// Idempotency-Key header, MCP as the tool's idempotency_key).
	IdempotencyKey string
}

type recallIn struct {
	Query             string
	K                 int
	Kinds             []memgate.Kind
	IncludeRestricted bool
	// Preview marks the recall as an inspector's look (left out of the
	// memories' recall history): only the roles that inspect may.
	Preview bool
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
	// rememberBatch remembers every memory of ins in one atomic batch, in
	// the scope r asks for (the surfaces that have no batch never get it).
	rememberBatch(c *caller, r scopeReq, ins []rememberIn) ([]*memgate.Memory, error)
	recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error)
	// list reads every page.
	list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error)
	get(c *caller, r scopeReq, id string) (*memgate.Memory, error)
	update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error)
	revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error)
	// approve names the version reviewed (the HTTP API's If-Match); 0
	// names none.
	approve(c *caller, r scopeReq, id string, version int64) (*memgate.Memory, error)
	delete(c *caller, r scopeReq, id string) error
	forget(c *caller, r scopeReq) (int64, error)
	importJSONL(c *caller, r scopeReq, body []byte) (int, error)
	// export returns the memories and the JSONL lines as written.
	export(c *caller, r scopeReq) ([]*memgate.Memory, [][]byte, error)
}

// apiError is an error as a surface answered it. Two answers are the same
// when every field is.
type apiError struct {
	Status  int // HTTP status; 0 where the surface has none (guard, MCP tool errors)
	Code    string
	Field   string
	Message string
	// Body is the answer as sent on the wire (the HTTP body, the MCP
	// tool's text), so two answers compare byte for byte; "" on the guard.
	Body string
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

// guardDriver calls the guard's Session of the caller's key: the layer
// under every surface (package guard), which authorizes each operation
// (the permission table, the scope auth.ScopeFor derives from the key and
// the request, the sources the key may claim, the one-principal rules)
// before the engine sees it. Each call authenticates the key's secret, as
// a surface does for every request. The driver adds no rule of its own:
// whatever the guard lets through reaches the engine.
type guardDriver struct{ w *world }

// guardError is err as the guard answered it: its code, field and message.
func guardError(err error) error {
	if err == nil {
		return nil
	}
	var me *memgate.Error
	if errors.As(err, &me) {
		return &apiError{Code: me.Code, Field: me.Field, Message: memgate.ErrorMessage(err)}
	}
	return &apiError{Code: memgate.EINTERNAL, Message: err.Error()}
}

// session authenticates c's secret. A key of the world always
// authenticates: a failure is the harness's.
func (d *guardDriver) session(c *caller) *guard.Session {
	s, err := d.w.g.Authenticate(d.w.ctx, "Bearer "+c.secret)
	if err != nil {
		d.w.fatalf("guard: authenticate %s: %v", c.name, err)
	}
	return s
}

// scope is the narrowing fields as the guard takes them.
func (r scopeReq) scope() memgate.Scope {
	return memgate.Scope{Tenant: r.Tenant, Principal: r.Principal, Agent: r.Agent, Conversation: r.Conversation}
}

// scope is the scope the guard makes of c's key and request r for op: for
// the mutants of TestIsolationCatches, which call the engine with it.
func (d *guardDriver) scope(c *caller, op auth.Op, r scopeReq) (memgate.Scope, error) {
	s, err := d.session(c).Scope(op, r.scope())
	return s, guardError(err)
}

func (in rememberIn) request(r scopeReq) engine.RememberRequest {
	return engine.RememberRequest{
		Memory: memgate.Memory{
			Tenant: r.Tenant, Principal: r.Principal, Agent: r.Agent, Conversation: r.Conversation,
			Kind: in.Kind, Source: in.Source, Sensitivity: in.Sensitivity, Content: in.Content, Key: in.Key,
		},
		Supersedes:     in.Supersedes,
		IdempotencyKey: in.IdempotencyKey,
	}
}

func (d *guardDriver) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	m, err := d.session(c).Remember(d.w.ctx, in.request(r))
	if err != nil {
		return nil, false, guardError(err)
	}
	return m.Memory, m.Replayed, nil
}

func (d *guardDriver) rememberBatch(c *caller, r scopeReq, ins []rememberIn) ([]*memgate.Memory, error) {
	rs := make([]engine.RememberRequest, len(ins))
	for i, in := range ins {
		rs[i] = in.request(r)
	}
	out, err := d.session(c).RememberBatch(d.w.ctx, rs)
	if err != nil {
		return nil, guardError(err)
	}
	var ms []*memgate.Memory
	for _, m := range out {
		ms = append(ms, m.Memory)
	}
	return ms, nil
}

func (d *guardDriver) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	res, err := d.session(c).Recall(d.w.ctx, engine.RecallRequest{
		Scope: r.scope(), Query: in.Query, K: in.K, Kinds: in.Kinds, IncludeRestricted: in.IncludeRestricted, Preview: in.Preview,
	})
	if err != nil {
		return nil, guardError(err)
	}
	var out []*memgate.Memory
	for _, h := range res.Results {
		out = append(out, h.Memory)
	}
	return out, nil
}

func (d *guardDriver) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	sess := d.session(c)
	f := engine.ListRequest{Kinds: in.Kinds, Text: in.Text, Limit: store.MaxPageSize}
	if in.Status != "" {
		f.Statuses = []memgate.Status{in.Status}
	}
	var out []*memgate.Memory
	for {
		p, err := sess.List(d.w.ctx, r.scope(), f)
		if err != nil {
			return nil, guardError(err)
		}
		out = append(out, p.Memories...)
		if p.NextCursor == "" {
			return out, nil
		}
		f.Cursor = p.NextCursor
	}
}

func (d *guardDriver) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.session(c).Get(d.w.ctx, r.scope(), id)
	return m, guardError(err)
}

func (in updateIn) patch() engine.Patch {
	var p engine.Patch
	if in.Content != "" {
		p.Content = &in.Content
	} else {
		p.Reason = &in.Reason
	}
	return p
}

func (d *guardDriver) update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error) {
	m, err := d.session(c).Update(d.w.ctx, r.scope(), id, version, in.patch())
	return m, guardError(err)
}

func (d *guardDriver) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.session(c).Revoke(d.w.ctx, r.scope(), id, "isolation test")
	return m, guardError(err)
}

func (d *guardDriver) approve(c *caller, r scopeReq, id string, version int64) (*memgate.Memory, error) {
	m, err := d.session(c).Approve(d.w.ctx, r.scope(), id, version)
	return m, guardError(err)
}

func (d *guardDriver) delete(c *caller, r scopeReq, id string) error {
	return guardError(d.session(c).Delete(d.w.ctx, r.scope(), id))
}

func (d *guardDriver) forget(c *caller, r scopeReq) (int64, error) {
	rc, err := d.session(c).Forget(d.w.ctx, memgate.Scope{Tenant: r.Tenant, Principal: r.Principal})
	if err != nil {
		return 0, guardError(err)
	}
	return rc.Forgotten, nil
}

func (d *guardDriver) importJSONL(c *caller, r scopeReq, body []byte) (int, error) {
	res, err := d.session(c).Import(d.w.ctx, engine.ImportRequest{Tenant: r.Tenant}, bytes.NewReader(body))
	if err != nil {
		return 0, guardError(err)
	}
	return res.Imported, nil
}

func (d *guardDriver) export(c *caller, r scopeReq) ([]*memgate.Memory, [][]byte, error) {
	var buf bytes.Buffer
	if _, err := d.session(c).Export(d.w.ctx, r.scope(), &buf); err != nil {
		return nil, nil, guardError(err)
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
