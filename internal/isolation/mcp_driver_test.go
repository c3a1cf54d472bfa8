package isolation

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/memgate/memgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpDriver calls the MCP server's tools over its streamable HTTP
// transport (/mcp), as a client of the official SDK, with the caller's
// key. The narrowing fields, and the source of remembered memories, go in
// the URL's query, as a real client configures them (a source the key may
// not claim refuses the request). The endpoint is stateless (each request
// is authenticated and scoped on its own), so one session per key serves
// every query: the session's transport sets the query of each request. MCP offers remember, recall, list_memories,
// revoke_memory and forget_me only (forget_me because the server is made
// with AllowForget): the other operations are never asked of it.
type mcpDriver struct {
	w        *world
	sessions map[string]*mcpSession
}

type mcpSession struct {
	cs *mcp.ClientSession
	rt *rewriter
}

func newMCPDriver(w *world) *mcpDriver {
	d := &mcpDriver{w: w, sessions: map[string]*mcpSession{}}
	w.t.Cleanup(func() {
		for _, s := range d.sessions {
			s.cs.Close()
		}
	})
	return d
}

// rewriter sends every request of a session with the caller's key and
// the query set last.
type rewriter struct {
	secret string
	mu     sync.Mutex
	query  string
}

func (rw *rewriter) set(q string) {
	rw.mu.Lock()
	rw.query = q
	rw.mu.Unlock()
}

func (rw *rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	rw.mu.Lock()
	q := rw.query
	rw.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.RawQuery = q
	r.Header.Set("Authorization", "Bearer "+rw.secret)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpQuery(r scopeReq, source memgate.Source) string {
	q := scopeQuery(r)
	if source != "" {
		q.Set("source", string(source))
	}
	return q.Encode()
}

// session returns the caller's connected session, connecting with a query
// the key accepts.
func (d *mcpDriver) session(c *caller) *mcpSession {
	if s := d.sessions[c.secret]; s != nil {
		return s
	}
	q := ""
	if c.key.Principal == "" {
		q = "principal=" + principals[0]
	}
	rt := &rewriter{secret: c.secret, query: q}
	tr := &mcp.StreamableClientTransport{Endpoint: d.w.url + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "isolation", Version: "v0"}, nil).Connect(d.w.ctx, tr, nil)
	if err != nil {
		d.w.fatalf("mcp: connect as %s: %v", c.name, err)
	}
	s := &mcpSession{cs: cs, rt: rt}
	d.sessions[c.secret] = s
	return s
}

// refusal reads the answer of a refused connection: the same initialize
// request, sent by hand, answered in the REST API's error shape.
func (d *mcpDriver) refusal(c *caller, endpoint string, dialErr error) error {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"isolation","version":"0"}}}`
	req, err := http.NewRequestWithContext(d.w.ctx, "POST", endpoint, strings.NewReader(initialize))
	if err != nil {
		d.w.fatalf("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.w.fatalf("POST %s: %v", endpoint, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	if res.StatusCode/100 == 2 || json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		return &apiError{Status: res.StatusCode, Code: "connect", Message: fmt.Sprintf("%v (by hand: %d %s)", dialErr, res.StatusCode, b)}
	}
	return &apiError{Status: res.StatusCode, Code: e.Error.Code, Field: e.Error.Field, Message: e.Error.Message, Body: string(b)}
}

// call calls a tool with the query of r and source, and decodes its
// structured content into out; a tool error is returned as the *apiError
// its text carries, and a refused request as the endpoint's answer.
func (d *mcpDriver) call(c *caller, r scopeReq, source memgate.Source, tool string, args map[string]any, out any) error {
	s := d.session(c)
	query := mcpQuery(r, source)
	s.rt.set(query)
	res, err := s.cs.CallTool(d.w.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		// The endpoint refused the request (or the session broke): read
		// its answer by hand, and start a new session next time.
		s.cs.Close()
		delete(d.sessions, c.secret)
		return d.refusal(c, d.w.url+"/mcp?"+query, err)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		var e struct {
			Error struct{ Code, Field, Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(text.String()), &e); err != nil || e.Error.Code == "" {
			return &apiError{Code: "malformed", Message: text.String()}
		}
		return &apiError{Code: e.Error.Code, Field: e.Error.Field, Message: e.Error.Message, Body: text.String()}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return &apiError{Code: "malformed", Message: err.Error()}
	}
	return decodeInto(b, out)
}

// shown is a memory as MCP tools show it.
type shown struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Source     string `json:"source"`
	Status     string `json:"status"`
	Content    string `json:"content"`
	Supersedes string `json:"supersedes"`
}

func (s shown) memory() *memgate.Memory {
	return &memgate.Memory{ID: s.ID, Kind: memgate.Kind(s.Kind), Source: memgate.Source(s.Source), Status: memgate.Status(s.Status), Content: s.Content, Supersedes: s.Supersedes}
}

func (d *mcpDriver) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	args := map[string]any{"content": in.Content, "kind": string(in.Kind)}
	if in.Supersedes != "" {
		args["supersedes"] = in.Supersedes
	}
	if in.IdempotencyKey != "" {
		args["idempotency_key"] = in.IdempotencyKey
	}
	if in.Key != "" {
		args["key"] = in.Key
	}
	var out struct {
		shown
		Replayed bool `json:"replayed"`
	}
	if err := d.call(c, r, in.Source, "remember", args, &out); err != nil {
		return nil, false, err
	}
	m := out.memory()
	m.Content = "" // remember does not echo the content
	return m, out.Replayed, nil
}

func (d *mcpDriver) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	var out struct{ Results []shown }
	if err := d.call(c, r, "", "recall", map[string]any{"query": in.Query, "k": in.K}, &out); err != nil {
		return nil, err
	}
	var ms []*memgate.Memory
	for _, h := range out.Results {
		ms = append(ms, h.memory())
	}
	return ms, nil
}

func (d *mcpDriver) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	args := map[string]any{"limit": 100}
	if len(in.Kinds) > 0 {
		args["kind"] = string(in.Kinds[0])
	}
	if in.Status != "" {
		d.w.fatalf("mcp: list_memories takes no status (it lists what recall could return): the run must not ask for one")
	}
	if in.Text != "" {
		args["q"] = in.Text
	}
	var all []*memgate.Memory
	for {
		var out struct {
			Memories   []shown
			NextCursor string `json:"next_cursor"`
		}
		if err := d.call(c, r, "", "list_memories", args, &out); err != nil {
			return nil, err
		}
		for _, m := range out.Memories {
			all = append(all, m.memory())
		}
		if out.NextCursor == "" {
			return all, nil
		}
		args["cursor"] = out.NextCursor
	}
}

func (d *mcpDriver) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	var out shown
	if err := d.call(c, r, "", "revoke_memory", map[string]any{"id": id, "reason": "isolation test"}, &out); err != nil {
		return nil, err
	}
	return out.memory(), nil
}

func (d *mcpDriver) forget(c *caller, r scopeReq) (int64, error) {
	var out struct{ Forgotten int64 }
	if err := d.call(c, r, "", "forget_me", map[string]any{"confirm": true}, &out); err != nil {
		return 0, err
	}
	return out.Forgotten, nil
}

// The operations MCP does not offer: the run never asks for them.

func (d *mcpDriver) unsupported(op string) error {
	d.w.fatalf("mcp has no %s tool: the run must not ask for it", op)
	return nil
}

func (d *mcpDriver) get(*caller, scopeReq, string) (*memgate.Memory, error) {
	return nil, d.unsupported("get")
}

func (d *mcpDriver) update(*caller, scopeReq, string, int64, updateIn) (*memgate.Memory, error) {
	return nil, d.unsupported("update")
}

func (d *mcpDriver) rememberBatch(*caller, scopeReq, []rememberIn) ([]*memgate.Memory, error) {
	return nil, d.unsupported("batch remember")
}

func (d *mcpDriver) approve(*caller, scopeReq, string, int64) (*memgate.Memory, error) {
	return nil, d.unsupported("approve")
}

func (d *mcpDriver) delete(*caller, scopeReq, string) error { return d.unsupported("delete") }

func (d *mcpDriver) importJSONL(*caller, scopeReq, []byte) (int, error) {
	return 0, d.unsupported("import")
}

func (d *mcpDriver) export(*caller, scopeReq) ([]*memgate.Memory, [][]byte, error) {
	return nil, nil, d.unsupported("export")
}
