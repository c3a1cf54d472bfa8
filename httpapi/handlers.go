package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/internal/wire"
	"github.com/memgate/memgate/store"
)

// memoryInput is one memory of POST /v1/memories: the caller's fields of
// the Memory model. The id, status, times, version and hashes are the
// server's; tenant, when given, must be the key's.
type memoryInput struct {
	Tenant       string         `json:"tenant"`
	Principal    string         `json:"principal"`
	Agent        string         `json:"agent"`
	Conversation string         `json:"conversation"`
	Kind         string         `json:"kind"`
	Source       string         `json:"source"`
	Sensitivity  string         `json:"sensitivity"`
	Content      string         `json:"content"`
	Reason       string         `json:"reason"`
	Metadata     map[string]any `json:"metadata"`
	ExpiresAt    string         `json:"expires_at"`
	ValidFrom    string         `json:"valid_from"`
	ValidUntil   string         `json:"valid_until"`
	TTL          string         `json:"ttl"`
	Key          string         `json:"key"`
	Supersedes   string         `json:"supersedes"`
}

// batchInput is the batch form of POST /v1/memories.
type batchInput struct {
	Tenant   string        `json:"tenant"`
	Memories []memoryInput `json:"memories"`
}

// rememberInput is a body of POST /v1/memories as it is decoded: one
// memory, or a batch, which the members tell apart (see isBatch).
type rememberInput struct {
	memoryInput
	Memories []memoryInput `json:"memories"`
}

// isBatch tells a batch from a single memory by the members of a remember
// body: a member named memories makes a batch, beside which only tenant
// may stand. Without it, memories in another case (which the field
// matching would take) is not a member of a memory either.
func isBatch(members []string) (bool, error) {
	batch := slices.Contains(members, "memories")
	for _, m := range members {
		var known bool
		if batch {
			known = strings.EqualFold(m, "memories") || strings.EqualFold(m, "tenant")
		} else {
			known = !strings.EqualFold(m, "memories")
		}
		if !known {
			return false, bodyDecoder.UnknownField(wire.Clip(m))
		}
	}
	return batch, nil
}

// rememberedList is the response of POST /v1/memories.
type rememberedList struct {
	Memories []*memgate.Remembered `json:"memories"`
}

// request turns one memoryInput into the engine's request, as the caller
// asked for it: the key's session narrows it (scope, source).
func (c *call) request(in memoryInput) (memgate.RememberRequest, error) {
	var req memgate.RememberRequest
	var err error
	m := memgate.Memory{
		Tenant: in.Tenant, Principal: in.Principal, Agent: in.Agent, Conversation: in.Conversation,
		Kind: memgate.Kind(in.Kind), Source: memgate.Source(in.Source), Sensitivity: memgate.Sensitivity(in.Sensitivity),
		Content: in.Content, Reason: in.Reason, Metadata: in.Metadata, Key: in.Key,
	}
	if m.ExpiresAt, err = optTime("expires_at", in.ExpiresAt); err != nil {
		return req, err
	}
	if m.ValidFrom, err = optTime("valid_from", in.ValidFrom); err != nil {
		return req, err
	}
	if m.ValidUntil, err = optTime("valid_until", in.ValidUntil); err != nil {
		return req, err
	}
	ttl, err := parseTTL(in.TTL)
	if err != nil {
		return req, err
	}
	return memgate.RememberRequest{Memory: m, TTL: ttl, Supersedes: in.Supersedes}, nil
}

// remember stores one memory or an atomic batch (up to the engine's
// MaxBatch): 201 {"memories":[…]}, each item with its status and whether it
// was deduplicated.
//
// An Idempotency-Key header makes a retry safe: the same key and body again
// store nothing and answer 200 with the same memories, each marked
// "replayed" (a batch's item i is keyed KEY#i). The same key with another
// body is a 409 naming Idempotency-Key. A single memory with supersedes
// replays too (the engine looks the key up before the old memory's
// status), so its retry is a 200, not a 409 for a superseded memory.
func (s *server) remember(c *call) error {
	key, err := idempotencyKey(c.r)
	if err != nil {
		return err
	}
	b, err := readBody(c.w, c.r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return memgate.FieldError("", "request body is required (a memory, or {\"memories\":[…]})")
	}
	var body rememberInput
	members, err := bodyDecoder.DecodeObject(b, &body)
	if err != nil {
		return err
	}
	batch, err := isBatch(members)
	if err != nil {
		return err
	}
	var out []*memgate.Remembered
	if batch {
		in := batchInput{Tenant: body.Tenant, Memories: body.Memories}
		if k := c.key(); in.Tenant != "" && in.Tenant != k.Tenant {
			return &memgate.Error{Code: memgate.EFORBIDDEN, Field: "tenant", Message: "is fixed by the key; another tenant may not be named"}
		}
		if len(in.Memories) == 0 {
			return memgate.FieldError("memories", "must not be empty")
		}
		reqs := make([]memgate.RememberRequest, len(in.Memories))
		for i, m := range in.Memories {
			if reqs[i], err = c.request(m); err != nil {
				return itemError(i, err)
			}
			if key != "" {
				reqs[i].IdempotencyKey = key + "#" + strconv.Itoa(i)
			}
		}
		if out, err = c.sess.RememberBatch(c.ctx, reqs); err != nil {
			return headerField(err)
		}
	} else {
		req, err := c.request(body.memoryInput)
		if err != nil {
			return err
		}
		req.IdempotencyKey = key
		r, err := c.sess.Remember(c.ctx, req)
		if err != nil {
			return headerField(err)
		}
		out = []*memgate.Remembered{r}
	}
	status := http.StatusOK // every memory replayed: nothing was created
	for _, r := range out {
		if !r.Replayed {
			status = http.StatusCreated
		}
	}
	writeJSON(c.w, status, rememberedList{Memories: out})
	return nil
}

// maxIdempotencyHeaderBytes leaves room for a batch item's "#i" suffix.
const maxIdempotencyHeaderBytes = 128

// idempotencyKey is the request's Idempotency-Key header ("" when absent),
// checked: one value of at most maxIdempotencyHeaderBytes.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", memgate.FieldError("Idempotency-Key", "must be given once")
	case len(vs[0]) > maxIdempotencyHeaderBytes:
		return "", &memgate.Error{Code: memgate.ETOOLARGE, Field: "Idempotency-Key", Message: fmt.Sprintf("is longer than %d bytes", maxIdempotencyHeaderBytes)}
	}
	if err := memgate.CheckIdempotencyKey("Idempotency-Key", vs[0]); err != nil {
		return "", err
	}
	return vs[0], nil
}

// headerField names the Idempotency-Key header in an error the engine
// reports about a single remember's idempotency_key.
func headerField(err error) error {
	var me *memgate.Error
	if errors.As(err, &me) && me.Field == "idempotency_key" {
		c := *me
		c.Field = "Idempotency-Key"
		return &c
	}
	return err
}

// itemError names the batch item an error is about.
func itemError(i int, err error) error {
	me, ok := err.(*memgate.Error)
	if !ok {
		return err
	}
	e := *me
	if e.Field != "" {
		e.Field = "memories[" + strconv.Itoa(i) + "]." + e.Field
	} else {
		e.Field = "memories[" + strconv.Itoa(i) + "]"
	}
	return &e
}

// recallInput is the body of POST /v1/recall.
type recallInput struct {
	Tenant            string         `json:"tenant"`
	Principal         string         `json:"principal"`
	Agent             string         `json:"agent"`
	Conversation      string         `json:"conversation"`
	Query             string         `json:"query"`
	K                 int            `json:"k"`
	MinScore          *float64       `json:"min_score"`
	Kinds             []string       `json:"kinds"`
	Sources           []string       `json:"sources"`
	Metadata          map[string]any `json:"metadata"`
	AsOf              string         `json:"as_of"`
	IncludeRestricted bool           `json:"include_restricted"`
	BudgetChars       int            `json:"budget_chars"`
	Diversify         bool           `json:"diversify"`
	Explain           bool           `json:"explain"`
	Render            bool           `json:"render"`
	Preview           bool           `json:"preview"`
}

// recall answers the engine's RecallResult.
func (s *server) recall(c *call) error {
	var in recallInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	sc := memgate.Scope{Tenant: in.Tenant, Principal: in.Principal, Agent: in.Agent, Conversation: in.Conversation}
	asOf, err := parseTime("as_of", in.AsOf)
	if err != nil {
		return err
	}
	req := memgate.RecallRequest{
		Scope: sc, Query: in.Query, K: in.K, MinScore: in.MinScore,
		Metadata: in.Metadata, AsOf: asOf, IncludeRestricted: in.IncludeRestricted,
		BudgetChars: in.BudgetChars, Diversify: in.Diversify, Explain: in.Explain, Render: in.Render,
		Preview: in.Preview,
	}
	for _, k := range in.Kinds {
		req.Kinds = append(req.Kinds, memgate.Kind(k))
	}
	for _, src := range in.Sources {
		req.Sources = append(req.Sources, memgate.Source(src))
	}
	start := time.Now()
	res, err := c.sess.Recall(c.ctx, req)
	if err != nil {
		return err
	}
	s.metrics.observeRecall(time.Since(start))
	out := recallResponse{RecallResult: res}
	if req.Render {
		out.Context = &res.Context
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}

// recallResponse is the engine's RecallResult with context present
// whenever render was asked: an empty string when nothing was recalled,
// never a missing member a client has to test for.
type recallResponse struct {
	*memgate.RecallResult
	Context *string `json:"context,omitempty"`
}

// memoryList is the response of GET /v1/memories.
type memoryList struct {
	Memories   []*memgate.Memory `json:"memories"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Limit      int               `json:"limit"`
	Clamped    bool              `json:"clamped"`
}

var scopeParams = []string{"tenant", "principal", "agent", "conversation"}

func (s *server) list(c *call) error {
	q, err := parseQuery(c.r, append([]string{"q", "limit", "cursor", "sensitivity"}, scopeParams...), []string{"kind", "source", "status"})
	if err != nil {
		return err
	}
	sc := q.scope()
	switch q.get("sensitivity") {
	case "":
	case string(memgate.SensitivityStandard):
		sc.HideRestricted = true
	default:
		return memgate.FieldError("sensitivity", `must be "standard" (only standard memories), or absent`)
	}
	f := store.Filter{Text: q.get("q"), Cursor: q.get("cursor")}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	for _, k := range q.list("kind") {
		f.Kinds = append(f.Kinds, memgate.Kind(k))
	}
	for _, src := range q.list("source") {
		f.Sources = append(f.Sources, memgate.Source(src))
	}
	for _, st := range q.list("status") {
		f.Statuses = append(f.Statuses, memgate.Status(st))
	}
	if err := memgate.CheckText("q", f.Text, memgate.MaxQueryBytes); err != nil {
		return err
	}
	p, err := c.sess.List(c.ctx, sc, f)
	if err != nil {
		return err
	}
	out := memoryList{Memories: p.Memories, NextCursor: p.NextCursor, Limit: p.Limit, Clamped: p.Clamped}
	if out.Memories == nil {
		out.Memories = []*memgate.Memory{}
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}

// idScope is the scope a request on one memory asks for: the scope
// parameters of its query string (the session narrows them).
func (c *call) idScope() (memgate.Scope, error) {
	q, err := parseQuery(c.r, scopeParams, nil)
	if err != nil {
		return memgate.Scope{}, err
	}
	return q.scope(), nil
}

// idOwner is the owner a request on one memory may name in its body, as
// well as in its query string (tenant and principal: where people put
// them).
type idOwner struct {
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
}

// idScopeWith is idScope for a request with a body naming b: a tenant or
// principal in the body and another in the query is invalid, naming the
// field.
func (c *call) idScopeWith(b idOwner) (memgate.Scope, error) {
	sc, err := c.idScope()
	if err != nil {
		return sc, err
	}
	for _, f := range []struct {
		name     string
		q        *string
		fromBody string
	}{{"tenant", &sc.Tenant, b.Tenant}, {"principal", &sc.Principal, b.Principal}} {
		switch {
		case f.fromBody == "":
		case *f.q == "":
			*f.q = f.fromBody
		case *f.q != f.fromBody:
			return sc, memgate.FieldError(f.name, "names two values (%q in the query, %q in the body): name it once", wire.Clip(*f.q), wire.Clip(f.fromBody))
		}
	}
	return sc, nil
}

// wherePrincipal rewrites the session's "principal is required" of a
// request on one memory to say where the principal goes: the query string
// (?principal=…) and, for a request with a body, the body too.
func wherePrincipal(err error, body bool) error {
	var e *memgate.Error
	if !errors.As(err, &e) || e.Field != "principal" || e.Code != memgate.EINVALID || !strings.HasPrefix(e.Message, "is required") {
		return err
	}
	msg := "is required for this key (it is bound to no principal): name the memory's principal in the query string (?principal=…)"
	if body {
		msg += " or in the body (\"principal\": …)"
	}
	return memgate.FieldError("principal", "%s", msg)
}

// scope is the scope a query string asks for.
func (q *query) scope() memgate.Scope {
	return memgate.Scope{Tenant: q.get("tenant"), Principal: q.get("principal"), Agent: q.get("agent"), Conversation: q.get("conversation")}
}

// writeMemory answers one memory, with its version as the ETag.
func writeMemory(w http.ResponseWriter, m *memgate.Memory) {
	w.Header().Set("ETag", `"`+strconv.FormatInt(m.Version, 10)+`"`)
	writeJSON(w, http.StatusOK, m)
}

func (s *server) get(c *call) error {
	sc, err := c.idScope()
	if err != nil {
		return err
	}
	m, err := c.sess.Get(c.ctx, sc, c.r.PathValue("id"))
	if err != nil {
		return wherePrincipal(err, false)
	}
	writeMemory(c.w, m)
	return nil
}

// byKey serves an operation on the memory a key names (GET, PATCH and
// DELETE /v1/memories/by-key?key=…): the key's active memory at the level
// of the query string (principal, agent, conversation), looked up as the
// key may look (another principal's, another level's, a restricted one
// an agent key cannot read: not_found, like a key nobody has), then h, the
// same operation by its id, authorized again. PATCH keeps its If-Match:
// the compare-and-set is on the version of the memory the key names now,
// so a write that superseded it meanwhile makes the update a conflict.
func (s *server) byKey(h func(*call) error) func(*call) error {
	return func(c *call) error {
		q, err := parseQuery(c.r, append([]string{"key"}, scopeParams...), nil)
		if err != nil {
			return err
		}
		key := q.get("key")
		if key == "" {
			return memgate.FieldError("key", "is required: the memory's key (?key=…)")
		}
		m, err := c.sess.GetByKey(c.ctx, q.scope(), key)
		if err != nil {
			return wherePrincipal(err, false)
		}
		v := q.v
		v.Del("key")
		r := c.r.Clone(c.ctx)
		r.URL.RawQuery = v.Encode()
		r.SetPathValue("id", m.ID)
		c.r = r
		return h(c)
	}
}

// patchInput is the body of PATCH /v1/memories/{id}. Absent fields are left
// as they are; metadata null clears the metadata, expires_at null clears
// the expiry.
type patchInput struct {
	idOwner
	Content     *string         `json:"content"`
	Reason      *string         `json:"reason"`
	Metadata    json.RawMessage `json:"metadata"`
	Kind        *string         `json:"kind"`
	Sensitivity *string         `json:"sensitivity"`
	TTL         *string         `json:"ttl"`
	ExpiresAt   json.RawMessage `json:"expires_at"`
	ValidFrom   *string         `json:"valid_from"`
	ValidUntil  *string         `json:"valid_until"`
}

// ifMatch reads the version an update is based on from If-Match: a
// version number, quoted or not (the ETag of GET).
func ifMatch(r *http.Request) (int64, error) {
	vals := r.Header.Values("If-Match")
	if len(vals) == 0 {
		return 0, memgate.FieldError("If-Match", "header is required: the version the update is based on (the memory's version or ETag)")
	}
	v := strings.TrimSpace(vals[0])
	v = strings.TrimPrefix(v, "W/")
	v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
	n, err := strconv.ParseInt(v, 10, 64)
	if len(vals) > 1 || err != nil || n <= 0 {
		return 0, memgate.FieldError("If-Match", "header must be one positive version number, such as \"3\"")
	}
	return n, nil
}

func (s *server) update(c *call) error {
	version, err := ifMatch(c.r)
	if err != nil {
		return err
	}
	var in patchInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	sc, err := c.idScopeWith(in.idOwner)
	if err != nil {
		return err
	}
	p := memgate.Patch{Content: in.Content, Reason: in.Reason}
	changed := in.Content != nil || in.Reason != nil
	if in.Metadata != nil {
		changed = true
		p.ReplaceMetadata = true
		if string(in.Metadata) != "null" {
			if p.Metadata, err = memgate.DecodeMetadata(in.Metadata); err != nil {
				return err
			}
		}
	}
	if in.Kind != nil {
		k := memgate.Kind(*in.Kind)
		p.Kind, changed = &k, true
	}
	if in.Sensitivity != nil {
		sv := memgate.Sensitivity(*in.Sensitivity)
		p.Sensitivity, changed = &sv, true
	}
	if in.TTL != nil {
		if p.TTL, err = memgate.ParseTTL(*in.TTL); err != nil {
			return err
		}
		changed = true
	}
	if in.ExpiresAt != nil {
		changed = true
		if string(in.ExpiresAt) == "null" {
			p.ClearExpiresAt = true
		} else {
			var str string
			if err := json.Unmarshal(in.ExpiresAt, &str); err != nil {
				return memgate.FieldError("expires_at", "must be an RFC 3339 time, or null to clear it")
			}
			t, err := parseTime("expires_at", str)
			if err != nil {
				return err
			}
			if t.IsZero() {
				return memgate.FieldError("expires_at", "must be an RFC 3339 time, or null to clear it")
			}
			p.ExpiresAt = &t
		}
	}
	if in.ValidFrom != nil {
		if p.ValidFrom, err = optTime("valid_from", *in.ValidFrom); err != nil {
			return err
		}
		changed = changed || p.ValidFrom != nil
	}
	if in.ValidUntil != nil {
		if p.ValidUntil, err = optTime("valid_until", *in.ValidUntil); err != nil {
			return err
		}
		changed = changed || p.ValidUntil != nil
	}
	if !changed {
		return memgate.FieldError("", "nothing to update: name at least one of content, reason, metadata, kind, sensitivity, ttl, expires_at, valid_from, valid_until")
	}
	m, err := c.sess.Update(c.ctx, sc, c.r.PathValue("id"), version, p)
	if err != nil {
		return wherePrincipal(err, true)
	}
	writeMemory(c.w, m)
	return nil
}

func (s *server) delete(c *call) error {
	sc, err := c.idScope()
	if err != nil {
		return err
	}
	id := c.r.PathValue("id")
	if err := c.sess.Delete(c.ctx, sc, id); err != nil {
		return wherePrincipal(err, false)
	}
	writeJSON(c.w, http.StatusOK, map[string]string{"deleted": id})
	return nil
}

// reasonInput is the body of revoke and reject.
type reasonInput struct {
	idOwner
	Reason string `json:"reason"`
}

func (s *server) revoke(c *call) error {
	var in reasonInput
	if err := c.decodeBody(&in, true); err != nil {
		return err
	}
	sc, err := c.idScopeWith(in.idOwner)
	if err != nil {
		return err
	}
	m, err := c.sess.Revoke(c.ctx, sc, c.r.PathValue("id"), in.Reason)
	if err != nil {
		return wherePrincipal(err, true)
	}
	writeMemory(c.w, m)
	return nil
}

// reject refuses a pending memory at the version the reviewer saw
// (If-Match, required): a memory changed since is a 409 and stays pending.
func (s *server) reject(c *call) error {
	version, err := ifMatch(c.r)
	if err != nil {
		return err
	}
	var in reasonInput
	if err := c.decodeBody(&in, true); err != nil {
		return err
	}
	sc, err := c.idScopeWith(in.idOwner)
	if err != nil {
		return err
	}
	m, err := c.sess.Reject(c.ctx, sc, c.r.PathValue("id"), version, in.Reason)
	if err != nil {
		return wherePrincipal(err, true)
	}
	writeMemory(c.w, m)
	return nil
}

// approve activates a pending memory at the version the reviewer saw
// (If-Match, required): a memory changed since is a 409 and stays
// pending, so what becomes active is what a person read.
func (s *server) approve(c *call) error {
	version, err := ifMatch(c.r)
	if err != nil {
		return err
	}
	var in idOwner
	if err := c.decodeBody(&in, true); err != nil {
		return err
	}
	sc, err := c.idScopeWith(in)
	if err != nil {
		return err
	}
	m, err := c.sess.Approve(c.ctx, sc, c.r.PathValue("id"), version)
	if err != nil {
		return wherePrincipal(err, true)
	}
	writeMemory(c.w, m)
	return nil
}

// feedbackInput is the body of POST /v1/memories/{id}/feedback.
type feedbackInput struct {
	idOwner
	Value *float64 `json:"value"`
}

func (s *server) feedback(c *call) error {
	var in feedbackInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	sc, err := c.idScopeWith(in.idOwner)
	if err != nil {
		return err
	}
	if in.Value == nil {
		return memgate.FieldError("value", "is required: a usefulness in [-1, 1]")
	}
	m, err := c.sess.Feedback(c.ctx, sc, c.r.PathValue("id"), *in.Value)
	if err != nil {
		return wherePrincipal(err, true)
	}
	writeMemory(c.w, m)
	return nil
}

// forgetInput is the body of POST /v1/forget.
type forgetInput struct {
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
}

func (s *server) forget(c *call) error {
	var in forgetInput
	if err := c.decodeBody(&in, true); err != nil {
		return err
	}
	rc, err := c.sess.Forget(c.ctx, memgate.Scope{Tenant: in.Tenant, Principal: in.Principal})
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, rc)
	return nil
}

func (s *server) audit(c *call) error {
	q, err := parseQuery(c.r, []string{"tenant", "principal", "memory_id", "recall_id", "action", "from", "to", "limit", "cursor"}, nil)
	if err != nil {
		return err
	}
	sc := memgate.Scope{Tenant: q.get("tenant"), Principal: q.get("principal")}
	f := store.AuditFilter{MemoryID: q.get("memory_id"), RecallID: q.get("recall_id"), Action: q.get("action"), Cursor: q.get("cursor")}
	if f.From, err = q.time("from"); err != nil {
		return err
	}
	if f.To, err = q.time("to"); err != nil {
		return err
	}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	if f.RecallID != "" && !memgate.ValidIdent(f.RecallID) {
		return memgate.FieldError("recall_id", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	if f.Action != "" && !memgate.ValidIdent(f.Action) {
		return memgate.FieldError("action", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	p, err := c.sess.Audit(c.ctx, sc, f)
	if err != nil {
		return err
	}
	if p.Events == nil {
		p.Events = []store.AuditEvent{}
	}
	writeJSON(c.w, http.StatusOK, p)
	return nil
}

// histogramBuckets are the bucket parameters GET /v1/audit/histogram
// accepts.
var histogramBuckets = map[string]time.Duration{"1h": time.Hour, "1d": 24 * time.Hour}

// auditHistogram answers how many audit events of one action (default
// recall) happened per UTC hour or day: memgate.AuditHistogram, every bucket
// present, oldest first. The scope rules are those of GET /v1/audit: an
// admin key counts the whole tenant or the principal it names, a user key
// its own principal only.
func (s *server) auditHistogram(c *call) error {
	q, err := parseQuery(c.r, []string{"tenant", "principal", "action", "bucket", "from", "to"}, nil)
	if err != nil {
		return err
	}
	sc := memgate.Scope{Tenant: q.get("tenant"), Principal: q.get("principal")}
	req := memgate.AuditHistogramRequest{Action: q.get("action")}
	if b := q.get("bucket"); b != "" {
		var ok bool
		if req.Bucket, ok = histogramBuckets[b]; !ok {
			return memgate.FieldError("bucket", `must be "1h" or "1d"`)
		}
	}
	if req.From, err = q.time("from"); err != nil {
		return err
	}
	if req.To, err = q.time("to"); err != nil {
		return err
	}
	h, err := c.sess.AuditHistogram(c.ctx, sc, req)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, h)
	return nil
}

// whoami answers what the caller's key is and grants (auth.GrantOf): its
// public record, never its hash or secret.
func (s *server) whoami(c *call) error {
	if _, err := parseQuery(c.r, nil, nil); err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, whoamiResponse{Grant: c.sess.Grant(), Server: s.info()})
	return nil
}

// whoamiResponse is what GET /v1/whoami answers: the key's grant and what
// the server it reached offers.
type whoamiResponse struct {
	auth.Grant
	Server serverInfo `json:"server"`
}

// serverInfo is what a client needs to know of the server: its build and
// whether it can chat (a server started with --llm).
type serverInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Chat     bool   `json:"chat"`
}

func (s *server) info() serverInfo {
	b := buildinfo.Get()
	return serverInfo{Version: b.Version, Revision: b.Revision, Chat: s.cfg.Agent != nil}
}

// statsResponse is the response of GET /v1/stats.
type statsResponse struct {
	Tenant      string           `json:"tenant"`
	Principal   string           `json:"principal,omitempty"`
	Total       int64            `json:"total"`
	Pending     int64            `json:"pending"` // the approval queue
	ByStatus    map[string]int64 `json:"by_status"`
	ByKind      map[string]int64 `json:"by_kind"`
	ByPrincipal map[string]int64 `json:"by_principal"`
	Counts      []store.Count    `json:"counts"`
}

func (s *server) stats(c *call) error {
	q, err := parseQuery(c.r, scopeParams, nil)
	if err != nil {
		return err
	}
	sc, err := c.sess.Scope(auth.OpStats, q.scope())
	if err != nil {
		return err
	}
	counts, err := c.sess.Counts(c.ctx, sc)
	if err != nil {
		return err
	}
	out := statsResponse{Tenant: sc.Tenant, Principal: sc.Principal, ByStatus: map[string]int64{}, ByKind: map[string]int64{}, ByPrincipal: map[string]int64{}, Counts: counts}
	if out.Counts == nil {
		out.Counts = []store.Count{}
	}
	for _, n := range counts {
		out.Total += n.N
		out.ByStatus[string(n.Status)] += n.N
		out.ByKind[string(n.Kind)] += n.N
		out.ByPrincipal[n.Principal] += n.N
		if n.Status == memgate.StatusPending {
			out.Pending += n.N
		}
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}

// importJSONL stores a JSONL body (the format of export) in the key's
// tenant, every line validated before anything is written.
func (s *server) importJSONL(c *call) error {
	q, err := parseQuery(c.r, []string{"tenant", "trust_status"}, nil)
	if err != nil {
		return err
	}
	var trust bool
	switch q.get("trust_status") {
	case "", "false":
	case "true":
		trust = true
	default:
		return memgate.FieldError("trust_status", "must be true or false")
	}
	tenant := q.get("tenant")
	if _, err := c.sess.Scope(auth.OpImport, memgate.Scope{Tenant: tenant}); err != nil {
		return err // before the body is read
	}
	b, err := readBody(c.w, c.r, s.cfg.MaxImportBytes)
	if err != nil {
		return err
	}
	if err := bodyDecoder.CheckText(b); err != nil {
		return err
	}
	res, err := c.sess.Import(c.ctx, memgate.ImportRequest{Tenant: tenant, TrustStatus: trust}, bytes.NewReader(b))
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, res)
	return nil
}

// export writes the scope's memories as JSONL, oldest first.
func (s *server) export(c *call) error {
	sc, err := c.idScope()
	if err != nil {
		return err
	}
	lw := &lazyWriter{w: c.w}
	if _, err := c.sess.Export(c.ctx, sc, lw); err != nil {
		if lw.started {
			// The status is sent: the truncated body is all that can tell.
			if info := infoOf(c.r.Context()); info != nil {
				info.internal = err
			}
			return nil
		}
		return err
	}
	if !lw.started {
		lw.start()
	}
	return nil
}

// lazyWriter sends the export's headers with its first byte, so an error
// before any output is still answered as an error.
type lazyWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyWriter) start() {
	l.started = true
	l.w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	l.w.Header().Set("X-Content-Type-Options", "nosniff")
	l.w.WriteHeader(http.StatusOK)
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	if !l.started {
		l.start()
	}
	return l.w.Write(b)
}
