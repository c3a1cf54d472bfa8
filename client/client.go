// Package client is a Go client for memgate's HTTP API (package httpapi):
// every endpoint under /v1, with a bearer key, JSON bodies, and errors
// decoded into *memgate.Error with the code the server sent, so
// memgate.ErrorCode works the same on a remote error as on a local one.
//
// The key fixes the tenant and, where it is bound, the principal and agent:
// a Scope here only narrows (and names the principal for keys that serve
// several). The client never logs, and never puts the key anywhere but the
// Authorization header.
//
// It imports only the root package (the callers' contract: requests,
// results and errors) and the standard library, never a server package.
//
// A Client is safe for concurrent use.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// MaxResponseBytes bounds a JSON response the client reads (an export is
// streamed and not bounded).
const MaxResponseBytes = 64 << 20

// Client calls one memgate server with one API key.
type Client struct {
	base *url.URL
	key  string
	hc   *http.Client
	ua   string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one with a 60 s timeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// New returns a client for the server at baseURL (such as
// "http://127.0.0.1:7070") that authenticates with key.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, memgate.FieldError("server", "must be an http or https URL such as http://127.0.0.1:7070")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, memgate.FieldError("server", "must not carry a query, a fragment or credentials")
	}
	if key == "" {
		return nil, memgate.FieldError("key", "is required (MEMGATE_API_KEY)")
	}
	if strings.ContainsAny(key, " \t\r\n") {
		return nil, memgate.FieldError("key", "must not contain spaces or line breaks")
	}
	c := &Client{base: u, key: key, hc: &http.Client{Timeout: 60 * time.Second}, ua: "memgate-go-client"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Scope names the memories a call acts on, within what the key grants:
// Principal is required for keys not bound to one (and may repeat the
// bound one); Agent and Conversation narrow. The tenant is the key's.
type Scope struct {
	Principal    string
	Agent        string
	Conversation string
}

func (s Scope) values() url.Values {
	v := url.Values{}
	set(v, "principal", s.Principal)
	set(v, "agent", s.Agent)
	set(v, "conversation", s.Conversation)
	return v
}

func set(v url.Values, k, s string) {
	if s != "" {
		v.Set(k, s)
	}
}

// request is one API call.
type request struct {
	method, path string
	query        url.Values
	body         any       // JSON-encoded when not nil
	raw          io.Reader // sent as is when body is nil
	rawType      string
	header       http.Header
}

// do sends r and decodes a 2xx JSON response into out (when not nil).
func (c *Client) do(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return c.transportError(ctx, r, err)
	}
	if len(b) > MaxResponseBytes {
		return &memgate.Error{Code: memgate.ETOOLARGE, Message: fmt.Sprintf("response to %s %s is larger than %d bytes", r.method, r.path, MaxResponseBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // metadata numbers stay exact
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the response: %w", r.method, r.path, err)
	}
	return nil
}

// send sends r and returns a 2xx response; any other status is decoded
// into an error.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	// r.path is escaped already (idPath); the base carries no query.
	u := c.base.String() + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader = r.raw
	ctype := r.rawType
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, memgate.FieldError("", "request cannot be encoded as JSON: %v", err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, r, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeError(resp)
}

func (c *Client) transportError(ctx context.Context, r request, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("%s %s: %w: %w", r.method, r.path,
		&memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the memgate server could not be reached"}, err)
}

// codeOfStatus is the code of a response that carries no API error body
// (a proxy's page, a truncated body): the inverse of the server's table.
var codeOfStatus = map[int]string{
	http.StatusBadRequest:            memgate.EINVALID,
	http.StatusUnauthorized:          memgate.EUNAUTHORIZED,
	http.StatusForbidden:             memgate.EFORBIDDEN,
	http.StatusNotFound:              memgate.ENOTFOUND,
	http.StatusConflict:              memgate.ECONFLICT,
	http.StatusPreconditionFailed:    memgate.ECONFLICT,
	http.StatusRequestEntityTooLarge: memgate.ETOOLARGE,
	http.StatusUnprocessableEntity:   memgate.EPOLICY,
	http.StatusTooManyRequests:       memgate.ERATELIMITED,
	http.StatusBadGateway:            memgate.EUNAVAILABLE,
	http.StatusServiceUnavailable:    memgate.EUNAVAILABLE,
	http.StatusGatewayTimeout:        memgate.EUNAVAILABLE,
}

// decodeError turns an error response into a *memgate.Error: the code,
// field and message of its {"error":{…}} body, or, when the body is not
// one, a code from the status.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error != nil && body.Error.Code != "" {
		// The server's message is self-contained ("field: message"); the
		// field is kept apart here, as the error it came from had it.
		msg := strings.TrimPrefix(body.Error.Message, body.Error.Field+": ")
		return &memgate.Error{Code: body.Error.Code, Field: body.Error.Field, Message: msg}
	}
	code, ok := codeOfStatus[resp.StatusCode]
	if !ok {
		code = memgate.EINTERNAL
	}
	return &memgate.Error{Code: code, Message: "the server answered " + resp.Status}
}

// idPath returns "/v1/memories/{id}" plus suffix, with the id escaped.
func idPath(id, suffix string) (string, error) {
	if id == "" {
		return "", memgate.FieldError("id", "is required")
	}
	return "/v1/memories/" + url.PathEscape(id) + suffix, nil
}

// Memory is a memory to remember: the caller's fields of the Memory model.
// The server assigns id, status, times, version and hashes; the tenant is
// the key's. TTL and ExpiresAt are exclusive; Supersedes makes the memory
// the new version of another (single remember only).
type Memory struct {
	Principal    string              `json:"principal,omitempty"`
	Agent        string              `json:"agent,omitempty"`
	Conversation string              `json:"conversation,omitempty"`
	Kind         memgate.Kind        `json:"kind"`
	Source       memgate.Source      `json:"source"`
	Sensitivity  memgate.Sensitivity `json:"sensitivity,omitempty"`
	Content      string              `json:"content"`
	Reason       string              `json:"reason,omitempty"`
	Metadata     map[string]any      `json:"metadata,omitempty"`
	ExpiresAt    *time.Time          `json:"expires_at,omitempty"`
	ValidFrom    *time.Time          `json:"valid_from,omitempty"`
	ValidUntil   *time.Time          `json:"valid_until,omitempty"`
	TTL          time.Duration       `json:"-"`
	// Key is the caller's own name for the memory (memgate.Memory.Key):
	// remembering a key the level has supersedes the memory of the same source that has it (each source is its own key space).
	Key        string `json:"key,omitempty"`
	Supersedes string `json:"supersedes,omitempty"`
}

// MarshalJSON writes the API's memory input (ttl as a duration string).
func (m Memory) MarshalJSON() ([]byte, error) {
	type plain Memory
	return json.Marshal(struct {
		plain
		TTL string `json:"ttl,omitempty"`
	}{plain(m), ttlString(m.TTL)})
}

func ttlString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// Remember stores one memory (POST /v1/memories). The result says whether
// it was deduplicated into an existing memory, and its status (pending,
// with the reason, when the write gate holds it for approval).
//
// With IdempotencyKey, a retry of the same call (after a timeout or an
// unavailable server) stores nothing twice: the server answers with the
// memory the first call stored, Replayed set. That holds for a memory with
// Supersedes too, although its old memory is superseded by then.
func (c *Client) Remember(ctx context.Context, m Memory, opts ...RememberOption) (*memgate.Remembered, error) {
	var out struct {
		Memories []*memgate.Remembered `json:"memories"`
	}
	if err := c.do(ctx, request{method: "POST", path: "/v1/memories", body: m, header: rememberHeader(opts)}, &out); err != nil {
		return nil, err
	}
	if len(out.Memories) != 1 {
		return nil, fmt.Errorf("POST /v1/memories: the server returned %d memories for one", len(out.Memories))
	}
	return out.Memories[0], nil
}

// RememberBatch stores memories atomically, all or none (POST /v1/memories
// with {"memories":[…]}); results are in input order.
func (c *Client) RememberBatch(ctx context.Context, ms []Memory, opts ...RememberOption) ([]*memgate.Remembered, error) {
	if ms == nil {
		ms = []Memory{}
	}
	in := struct {
		Memories []Memory `json:"memories"`
	}{ms}
	var out struct {
		Memories []*memgate.Remembered `json:"memories"`
	}
	if err := c.do(ctx, request{method: "POST", path: "/v1/memories", body: in, header: rememberHeader(opts)}, &out); err != nil {
		return nil, err
	}
	if len(out.Memories) != len(ms) {
		return nil, fmt.Errorf("POST /v1/memories: the server returned %d memories for %d", len(out.Memories), len(ms))
	}
	return out.Memories, nil
}

// RememberOption changes how Remember and RememberBatch send.
type RememberOption func(http.Header)

// IdempotencyKey sends key as the Idempotency-Key header: the server stores
// a call's memories once however often it is sent with the same key and
// body (within a day). Use a new key (a UUID, or a client id and a counter)
// for each new call, and the same one for its retries.
func IdempotencyKey(key string) RememberOption {
	return func(h http.Header) { h.Set("Idempotency-Key", key) }
}

func rememberHeader(opts []RememberOption) http.Header {
	if len(opts) == 0 {
		return nil
	}
	h := http.Header{}
	for _, o := range opts {
		o(h)
	}
	return h
}

// RecallRequest is the body of POST /v1/recall.
type RecallRequest struct {
	Principal    string `json:"principal,omitempty"`
	Agent        string `json:"agent,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Query        string `json:"query"`
	// K is the maximum number of results (0: the server's default).
	K int `json:"k,omitempty"`
	// MinScore is the floor on the final score: nil for the server's
	// default, 0 to turn it off.
	MinScore          *float64         `json:"min_score,omitempty"`
	Kinds             []memgate.Kind   `json:"kinds,omitempty"`
	Sources           []memgate.Source `json:"sources,omitempty"`
	Metadata          map[string]any   `json:"metadata,omitempty"`
	AsOf              *time.Time       `json:"as_of,omitempty"`
	IncludeRestricted bool             `json:"include_restricted,omitempty"`
	BudgetChars       int              `json:"budget_chars,omitempty"`
	Diversify         bool             `json:"diversify,omitempty"`
	Explain           bool             `json:"explain,omitempty"`
	Render            bool             `json:"render,omitempty"`
	// Preview makes the recall a dry run: the same results, plus the best
	// candidates below the floor (RecallResult.BelowFloorResults), audited
	// as recall_preview instead of recall.
	Preview bool `json:"preview,omitempty"`
}

// Recall returns what matters for a query (POST /v1/recall).
func (c *Client) Recall(ctx context.Context, r RecallRequest) (*memgate.RecallResult, error) {
	var out memgate.RecallResult
	if err := c.do(ctx, request{method: "POST", path: "/v1/recall", body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChatRequest is the body of POST /v1/chat.
type ChatRequest struct {
	Principal string `json:"principal,omitempty"`
	Agent     string `json:"agent,omitempty"`
	// Conversation is the conversation the exchange is remembered in;
	// empty starts a new one (memgate.ChatResult.Conversation names it).
	Conversation string `json:"conversation,omitempty"`
	Message      string `json:"message"`
}

// Chat runs one turn of the server's agent (POST /v1/chat; admin and
// agent keys): recall for the message, the server's model called with the
// memories as delimited data, the exchange remembered and, when the server
// extracts, facts proposed for approval. A server started without a model
// answers unavailable. A slow model may need more than the default HTTP
// client's 60 s: give the client one with a longer timeout (the server
// allows a turn 5 minutes).
func (c *Client) Chat(ctx context.Context, r ChatRequest) (*memgate.ChatResult, error) {
	var out memgate.ChatResult
	if err := c.do(ctx, request{method: "POST", path: "/v1/chat", body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// IngestRequest is the body of POST /v1/conversations/{id}/messages: a
// conversation the application already had.
type IngestRequest struct {
	Tenant    string                  `json:"tenant,omitempty"`
	Principal string                  `json:"principal,omitempty"`
	Agent     string                  `json:"agent,omitempty"`
	Messages  []memgate.IngestMessage `json:"messages"`
}

// IngestMessages stores the messages of conversation as message memories
// (each with the source its role gives, within what the key may claim)
// and, on a server whose agent extracts, proposes facts from them. With
// IdempotencyKey a retry stores nothing twice (Replayed is then true).
func (c *Client) IngestMessages(ctx context.Context, conversation string, r IngestRequest, opts ...RememberOption) (*memgate.IngestResult, error) {
	var out memgate.IngestResult
	p := "/v1/conversations/" + url.PathEscape(conversation) + "/messages"
	if err := c.do(ctx, request{method: "POST", path: p, body: r, header: rememberHeader(opts)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRequest filters GET /v1/memories. Q is literal text.
type ListRequest struct {
	Scope
	Kinds    []memgate.Kind
	Sources  []memgate.Source
	Statuses []memgate.Status
	Q        string
	Limit    int
	Cursor   string
	// StandardOnly leaves restricted memories out (sensitivity=standard),
	// for a key that may read them but a reader (a model) that may not.
	StandardOnly bool
}

// Page is a page of List.
type Page struct {
	Memories   []*memgate.Memory `json:"memories"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Limit      int               `json:"limit"`
	Clamped    bool              `json:"clamped"`
}

// List returns a page of memories, newest first (GET /v1/memories). An
// admin key without a principal lists the whole tenant.
func (c *Client) List(ctx context.Context, r ListRequest) (*Page, error) {
	q := r.Scope.values()
	for _, k := range r.Kinds {
		q.Add("kind", string(k))
	}
	for _, s := range r.Sources {
		q.Add("source", string(s))
	}
	for _, s := range r.Statuses {
		q.Add("status", string(s))
	}
	set(q, "q", r.Q)
	if r.Limit != 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	set(q, "cursor", r.Cursor)
	if r.StandardOnly {
		q.Set("sensitivity", string(memgate.SensitivityStandard))
	}
	var out Page
	if err := c.do(ctx, request{method: "GET", path: "/v1/memories", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns one memory (GET /v1/memories/{id}). A memory outside the
// scope is not_found, exactly like a missing one.
func (c *Client) Get(ctx context.Context, s Scope, id string) (*memgate.Memory, error) {
	return c.memoryCall(ctx, "GET", s, id, "", nil, nil)
}

func (c *Client) memoryCall(ctx context.Context, method string, s Scope, id, suffix string, body any, h http.Header) (*memgate.Memory, error) {
	p, err := idPath(id, suffix)
	if err != nil {
		return nil, err
	}
	var out memgate.Memory
	if err := c.do(ctx, request{method: method, path: p, query: s.values(), body: body, header: h}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Patch is an update. Nil fields are left as they are.
type Patch struct {
	Content     *string
	Reason      *string
	Kind        *memgate.Kind
	Sensitivity *memgate.Sensitivity
	// Metadata replaces the metadata when SetMetadata is true (nil then
	// clears it).
	Metadata    map[string]any
	SetMetadata bool
	// TTL sets expires_at to now+TTL; ExpiresAt sets it; ClearExpiresAt
	// removes it.
	TTL            time.Duration
	ExpiresAt      *time.Time
	ClearExpiresAt bool
	ValidFrom      *time.Time
	ValidUntil     *time.Time
}

// body is the PATCH body: only the fields the patch sets.
func (p Patch) body() map[string]any {
	b := map[string]any{}
	if p.Content != nil {
		b["content"] = *p.Content
	}
	if p.Reason != nil {
		b["reason"] = *p.Reason
	}
	if p.Kind != nil {
		b["kind"] = *p.Kind
	}
	if p.Sensitivity != nil {
		b["sensitivity"] = *p.Sensitivity
	}
	if p.SetMetadata {
		if p.Metadata == nil {
			b["metadata"] = nil
		} else {
			b["metadata"] = p.Metadata
		}
	}
	if p.TTL != 0 {
		b["ttl"] = ttlString(p.TTL)
	}
	switch {
	case p.ClearExpiresAt:
		b["expires_at"] = nil
	case p.ExpiresAt != nil:
		b["expires_at"] = p.ExpiresAt.Format(time.RFC3339Nano)
	}
	if p.ValidFrom != nil {
		b["valid_from"] = p.ValidFrom.Format(time.RFC3339Nano)
	}
	if p.ValidUntil != nil {
		b["valid_until"] = p.ValidUntil.Format(time.RFC3339Nano)
	}
	return b
}

// Update applies p to the memory if it is still at version (PATCH
// /v1/memories/{id} with If-Match): a memory changed since is a conflict.
func (c *Client) Update(ctx context.Context, s Scope, id string, version int64, p Patch) (*memgate.Memory, error) {
	if version <= 0 {
		return nil, memgate.FieldError("version", "is required: the version the update is based on")
	}
	h := http.Header{"If-Match": {`"` + strconv.FormatInt(version, 10) + `"`}}
	return c.memoryCall(ctx, "PATCH", s, id, "", p.body(), h)
}

// Delete removes a memory for good (DELETE /v1/memories/{id}).
func (c *Client) Delete(ctx context.Context, s Scope, id string) error {
	p, err := idPath(id, "")
	if err != nil {
		return err
	}
	var out struct {
		Deleted string `json:"deleted"`
	}
	return c.do(ctx, request{method: "DELETE", path: p, query: s.values()}, &out)
}

// keyQuery is the query string of a request by key at the level of s.
func keyQuery(s Scope, key string) (url.Values, error) {
	if key == "" {
		return nil, memgate.FieldError("key", "is required")
	}
	q := s.values()
	q.Set("key", key)
	return q, nil
}

// GetByKey returns the active memory with key at exactly the level of s
// (GET /v1/memories/by-key): its principal, agent and conversation. None,
// or one the key may not read, is not_found.
func (c *Client) GetByKey(ctx context.Context, s Scope, key string) (*memgate.Memory, error) {
	q, err := keyQuery(s, key)
	if err != nil {
		return nil, err
	}
	var out memgate.Memory
	if err := c.do(ctx, request{method: "GET", path: "/v1/memories/by-key", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateByKey applies p to the memory key names at the level of s if it is
// still at version (PATCH /v1/memories/by-key with If-Match): a memory
// changed or superseded since is a conflict.
func (c *Client) UpdateByKey(ctx context.Context, s Scope, key string, version int64, p Patch) (*memgate.Memory, error) {
	if version <= 0 {
		return nil, memgate.FieldError("version", "is required: the version the update is based on")
	}
	q, err := keyQuery(s, key)
	if err != nil {
		return nil, err
	}
	var out memgate.Memory
	h := http.Header{"If-Match": {`"` + strconv.FormatInt(version, 10) + `"`}}
	if err := c.do(ctx, request{method: "PATCH", path: "/v1/memories/by-key", query: q, body: p.body(), header: h}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteByKey removes for good the memory key names at the level of s
// (DELETE /v1/memories/by-key); the versions it superseded stay.
func (c *Client) DeleteByKey(ctx context.Context, s Scope, key string) error {
	q, err := keyQuery(s, key)
	if err != nil {
		return err
	}
	var out struct {
		Deleted string `json:"deleted"`
	}
	return c.do(ctx, request{method: "DELETE", path: "/v1/memories/by-key", query: q}, &out)
}

type reasonBody struct {
	Reason string `json:"reason,omitempty"`
}

// Revoke marks a memory revoked (POST /v1/memories/{id}/revoke).
func (c *Client) Revoke(ctx context.Context, s Scope, id, reason string) (*memgate.Memory, error) {
	return c.memoryCall(ctx, "POST", s, id, "/revoke", reasonBody{reason}, nil)
}

// Approve makes a pending memory active (POST /v1/memories/{id}/approve).
//
// version is the version that was reviewed (sent as If-Match): a memory
// changed since is a conflict and stays pending.
func (c *Client) Approve(ctx context.Context, s Scope, id string, version int64) (*memgate.Memory, error) {
	h, err := reviewed(version)
	if err != nil {
		return nil, err
	}
	return c.memoryCall(ctx, "POST", s, id, "/approve", struct{}{}, h)
}

// Reject refuses a pending memory (POST /v1/memories/{id}/reject) at the
// version that was reviewed, as Approve.
func (c *Client) Reject(ctx context.Context, s Scope, id string, version int64, reason string) (*memgate.Memory, error) {
	h, err := reviewed(version)
	if err != nil {
		return nil, err
	}
	return c.memoryCall(ctx, "POST", s, id, "/reject", reasonBody{reason}, h)
}

// reviewed is the If-Match header of an approval or a rejection.
func reviewed(version int64) (http.Header, error) {
	if version <= 0 {
		return nil, memgate.FieldError("version", "is required: the version of the memory that was reviewed")
	}
	return http.Header{"If-Match": {`"` + strconv.FormatInt(version, 10) + `"`}}, nil
}

// Feedback reports how useful a memory was, in [-1, 1] (POST
// /v1/memories/{id}/feedback).
func (c *Client) Feedback(ctx context.Context, s Scope, id string, value float64) (*memgate.Memory, error) {
	return c.memoryCall(ctx, "POST", s, id, "/feedback", struct {
		Value float64 `json:"value"`
	}{value}, nil)
}

// Forget erases every memory of a principal (POST /v1/forget). A key bound
// to a principal may leave it empty.
func (c *Client) Forget(ctx context.Context, principal string) (*memgate.ForgetReceipt, error) {
	var out memgate.ForgetReceipt
	body := struct {
		Principal string `json:"principal,omitempty"`
	}{principal}
	if err := c.do(ctx, request{method: "POST", path: "/v1/forget", body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AuditRequest filters GET /v1/audit.
type AuditRequest struct {
	Principal string
	MemoryID  string
	RecallID  string
	Action    string
	From, To  time.Time
	Limit     int
	Cursor    string
}

// Audit returns audit events, newest first (GET /v1/audit).
func (c *Client) Audit(ctx context.Context, r AuditRequest) (*memgate.AuditPage, error) {
	q := url.Values{}
	set(q, "principal", r.Principal)
	set(q, "memory_id", r.MemoryID)
	set(q, "recall_id", r.RecallID)
	set(q, "action", r.Action)
	if !r.From.IsZero() {
		q.Set("from", r.From.Format(time.RFC3339Nano))
	}
	if !r.To.IsZero() {
		q.Set("to", r.To.Format(time.RFC3339Nano))
	}
	if r.Limit != 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	set(q, "cursor", r.Cursor)
	var out memgate.AuditPage
	if err := c.do(ctx, request{method: "GET", path: "/v1/audit", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AuditHistogramRequest asks GET /v1/audit/histogram how many audit
// events of one action happened per UTC hour or day. Zero fields take the
// server's defaults: action recall, a day, to the end of the current
// bucket, from 14 buckets before to.
type AuditHistogramRequest struct {
	// Principal narrows to one principal (an admin key without it counts
	// the whole tenant; a user key counts its own principal).
	Principal string
	Action    string
	// Bucket is time.Hour or 24*time.Hour; anything else is refused
	// before a request is sent.
	Bucket   time.Duration
	From, To time.Time
}

// AuditHistogram returns every bucket of the range, zeros included, oldest
// first (GET /v1/audit/histogram).
func (c *Client) AuditHistogram(ctx context.Context, r AuditHistogramRequest) (*memgate.AuditHistogram, error) {
	q := url.Values{}
	set(q, "principal", r.Principal)
	set(q, "action", r.Action)
	switch r.Bucket {
	case 0:
	case time.Hour:
		q.Set("bucket", "1h")
	case 24 * time.Hour:
		q.Set("bucket", "1d")
	default:
		return nil, memgate.FieldError("bucket", "must be an hour or a day")
	}
	if !r.From.IsZero() {
		q.Set("from", r.From.Format(time.RFC3339Nano))
	}
	if !r.To.IsZero() {
		q.Set("to", r.To.Format(time.RFC3339Nano))
	}
	var out memgate.AuditHistogram
	if err := c.do(ctx, request{method: "GET", path: "/v1/audit/histogram", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Whoami returns what the client's key is and grants (GET /v1/whoami):
// its id, tenant, role, binding and name, the operations its role may
// perform, whether it acts tenant-wide and whether it may recall
// restricted memories. The server never sends the key's hash or secret.
func (c *Client) Whoami(ctx context.Context) (*memgate.Grant, error) {
	var out memgate.Grant
	if err := c.do(ctx, request{method: "GET", path: "/v1/whoami"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NewKey is the template of CreateKey: the role, the binding and the
// sources the key may claim (empty: its role's default).
type NewKey struct {
	Role      memgate.Role     `json:"role"`
	Principal string           `json:"principal,omitempty"`
	Agent     string           `json:"agent,omitempty"`
	Name      string           `json:"name,omitempty"`
	Sources   []memgate.Source `json:"sources,omitempty"`
}

// CreatedKey is a key CreateKey made: its record and its secret, which
// the server shows this once.
type CreatedKey struct {
	Key    *memgate.Key `json:"key"`
	Secret string       `json:"secret"`
}

// CreateKey mints a key in the caller's tenant (POST /v1/keys; an admin
// key).
func (c *Client) CreateKey(ctx context.Context, k NewKey) (*CreatedKey, error) {
	var out CreatedKey
	if err := c.do(ctx, request{method: "POST", path: "/v1/keys", body: k}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys returns every key of the caller's tenant, oldest first (GET
// /v1/keys; an admin key).
func (c *Client) ListKeys(ctx context.Context) ([]*memgate.Key, error) {
	var out struct {
		Keys []*memgate.Key `json:"keys"`
	}
	if err := c.do(ctx, request{method: "GET", path: "/v1/keys"}, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RevokeKey revokes a key of the caller's tenant (POST
// /v1/keys/{id}/revoke; an admin key).
func (c *Client) RevokeKey(ctx context.Context, id string) (*memgate.Key, error) {
	if !memgate.ValidIdent(id) {
		return nil, memgate.FieldError("id", "must match [A-Za-z0-9._:@-]{1,128}")
	}
	var out memgate.Key
	if err := c.do(ctx, request{method: "POST", path: "/v1/keys/" + url.PathEscape(id) + "/revoke", body: struct{}{}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stats is the response of GET /v1/stats.
type Stats struct {
	Tenant      string           `json:"tenant"`
	Principal   string           `json:"principal,omitempty"`
	Total       int64            `json:"total"`
	Pending     int64            `json:"pending"`
	ByStatus    map[string]int64 `json:"by_status"`
	ByKind      map[string]int64 `json:"by_kind"`
	ByPrincipal map[string]int64 `json:"by_principal"`
	Counts      []memgate.Count  `json:"counts"`
}

// Stats returns memory counts (GET /v1/stats); an admin key without a
// principal counts the whole tenant, a user key its own principal.
func (c *Client) Stats(ctx context.Context, s Scope) (*Stats, error) {
	var out Stats
	if err := c.do(ctx, request{method: "GET", path: "/v1/stats", query: s.values()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Import stores JSONL memories in the key's tenant (POST /v1/import; an
// admin key). Every line passes the write gate, as a remember by the key
// would, before anything is written; the server decides each status.
func (c *Client) Import(ctx context.Context, jsonl io.Reader, opts ...ImportOption) (*memgate.ImportResult, error) {
	q := url.Values{}
	for _, o := range opts {
		o(q)
	}
	var out memgate.ImportResult
	if err := c.do(ctx, request{method: "POST", path: "/v1/import", query: q, raw: jsonl, rawType: "application/x-ndjson"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ImportOption changes an import.
type ImportOption func(url.Values)

// TrustStatus keeps each line's status as the file gives it
// (trust_status=true), for restoring one's own export: audited with how
// many memories kept their file's status over the write gate's.
func TrustStatus() ImportOption { return func(q url.Values) { q.Set("trust_status", "true") } }

// Export writes the scope's memories to w as JSONL, oldest first (GET
// /v1/export), and returns the bytes written. An admin key without a
// principal exports the whole tenant.
func (c *Client) Export(ctx context.Context, s Scope, w io.Writer) (int64, error) {
	r := request{method: "GET", path: "/v1/export", query: s.values()}
	resp, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, c.transportError(ctx, r, err)
	}
	return n, nil
}

// Health reports whether the server answers GET /healthz.
func (c *Client) Health(ctx context.Context) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := c.do(ctx, request{method: "GET", path: "/healthz"}, &out); err != nil {
		return err
	}
	if out.Status != "ok" {
		return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the server is not healthy"}
	}
	return nil
}
