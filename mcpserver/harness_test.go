package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/mcpserver"
	"github.com/memgate/memgate/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// planted are markers put in content and query text: no log line may
// ever hold them.
var planted = []string{"zqxjvarnish", "quokkablimp"}

// lockedBuffer captures the log lines.
type lockedBuffer = logtest.Buffer

// env is a real engine over a real SQLite database in a temporary
// directory, with the built-in embedder, an authorizer over its keys, and
// a test server serving /mcp beside the REST API (to compare errors). Every
// log line is captured; when the test ends the logs must hold no planted
// marker, and must hold the tool call lines (the control).
type env struct {
	t    *testing.T
	db   *sqlite.DB
	eng  *engine.Engine
	g    *guard.Guard
	az   *auth.Authorizer
	log  *slog.Logger
	logs *lockedBuffer
	url  string

	mu      sync.Mutex
	secrets []string // every key minted: none may appear in the logs
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil, nil)
}

// newEnvWith is newEnv with the guard's and the /mcp handler's
// configurations changed by gc and hc (either may be nil).
func newEnvWith(t *testing.T, gc func(*guard.Config), hc func(*mcpserver.HTTPConfig)) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	gcfg := guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}, Logger: logger}
	if gc != nil {
		gc(&gcfg)
	}
	g, err := guard.New(gcfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, eng: eng, g: g, az: auth.New(db), log: logger, logs: logs}
	api, err := httpapi.New(httpapi.Config{Guard: g, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	// The server opts into forget_me (memgate serve --mcp-forget); the
	// default, off, is TestHTTPForgetNeedsOptIn's.
	hcfg := mcpserver.HTTPConfig{Guard: g, AllowForget: true, Logger: logger}
	if hc != nil {
		hc(&hcfg)
	}
	mh, err := mcpserver.NewHTTPHandler(hcfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mh)
	mux.Handle("/", api)
	srv := httptest.NewServer(mux)
	e.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
		db.Close()
		e.checkLogs()
	})
	return e
}

func (e *env) checkLogs() {
	logs := e.logs.String()
	low := strings.ToLower(logs)
	for _, m := range planted {
		if strings.Contains(low, m) {
			e.t.Errorf("logs hold the planted marker %q:\n%s", m, logs)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.secrets {
		if strings.Contains(logs, k) {
			e.t.Errorf("logs hold an API key")
		}
	}
}

// key mints a key and stores it, returning its secret; sources, when
// given, are the ones it is granted.
func (e *env) key(tenant string, role memgate.Role, principal, agent string, sources ...memgate.Source) string {
	e.t.Helper()
	secret, rec, err := auth.NewKey(memgate.Key{Tenant: tenant, Role: role, Principal: principal, Agent: agent, Sources: sources})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.CreateKey(context.Background(), rec); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.secrets = append(e.secrets, secret)
	e.mu.Unlock()
	return secret
}

// keyRecord returns the stored record of a secret.
func (e *env) keyRecord(secret string) *memgate.Key {
	e.t.Helper()
	k, err := e.az.Authenticate(context.Background(), "Bearer "+secret)
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// seed remembers a memory straight through the engine (source user: it is
// active) and returns its id.
func (e *env) seed(tenant, principal, kind, content string) string {
	e.t.Helper()
	m, err := e.eng.Remember(context.Background(), engine.RememberRequest{Memory: memgate.Memory{
		Tenant: tenant, Principal: principal, Kind: memgate.Kind(kind), Source: memgate.SourceUser, Content: content,
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m.ID
}

// count returns how many memories (any status) tenant/principal holds.
func (e *env) count(tenant, principal string) int64 {
	e.t.Helper()
	counts, err := e.eng.Counts(context.Background(), memgate.Scope{Tenant: tenant, Principal: principal})
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c.N
	}
	return n
}

// session is the guard's session of a key record (stored or not).
func (e *env) session(k *memgate.Key) *guard.Session {
	e.t.Helper()
	s, err := e.g.Local(*k)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// caller is a SessionCaller for the key record k.
func (e *env) caller(k *memgate.Key, req memgate.Scope, allowForget bool) mcpserver.SessionCaller {
	e.t.Helper()
	return mcpserver.SessionCaller{Session: e.session(k), Request: req, AllowForget: allowForget}
}

// local connects an SDK client in-process (mcp.NewInMemoryTransports) to
// a server acting for caller, over the caller's own session when it has
// one (a remote caller gets an admin's of acme: only its listing matters).
func (e *env) local(caller mcpserver.Caller, source memgate.Source) *mcp.ClientSession {
	e.t.Helper()
	var be mcpserver.Backend
	switch c := caller.(type) {
	case mcpserver.SessionCaller:
		be = c.Session
	case mcpserver.Backend:
		be = c
	default:
		be = e.session(&memgate.Key{ID: "key_admin", Tenant: "acme", Role: memgate.RoleAdmin})
	}
	srv, err := mcpserver.New(mcpserver.Config{Backend: be, Caller: caller, Source: source, Logger: e.log})
	if err != nil {
		e.t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// localMCP is what memgate mcp --db gives (mcpserver.Local): an agent
// key bound to one principal, claiming source (default assistant), and
// the person's own key for forget_me when allowed.
func (e *env) localMCP(tenant, principal string, allowForget bool, source memgate.Source) *mcp.ClientSession {
	e.t.Helper()
	return e.local(e.localCaller(tenant, principal, allowForget, source), source)
}

func (e *env) localCaller(tenant, principal string, allowForget bool, source memgate.Source) *mcpserver.Local {
	e.t.Helper()
	if source == "" {
		source = mcpserver.DefaultSource
	}
	l, err := mcpserver.NewLocal(e.g, "mcp", memgate.Scope{Tenant: tenant, Principal: principal}, source, allowForget)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// bearer sets the Authorization header of every request; the key may be
// changed between requests.
type bearer struct {
	mu  sync.Mutex
	key string
}

func (b *bearer) set(k string) {
	b.mu.Lock()
	b.key = k
	b.mu.Unlock()
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	k := b.key
	b.mu.Unlock()
	r = r.Clone(r.Context())
	if k != "" {
		r.Header.Set("Authorization", "Bearer "+k)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// remote connects an SDK client over the streamable HTTP transport to
// /mcp with key and the query (such as "principal=alice").
func (e *env) remote(key, query string) (*mcp.ClientSession, *bearer) {
	e.t.Helper()
	cs, b, err := e.dial(key, query)
	if err != nil {
		e.t.Fatalf("connect /mcp?%s: %v", query, err)
	}
	return cs, b
}

func (e *env) dial(key, query string) (*mcp.ClientSession, *bearer, error) {
	b := &bearer{key: key}
	u := e.url + "/mcp"
	if query != "" {
		u += "?" + query
	}
	tr := &mcp.StreamableClientTransport{Endpoint: u, HTTPClient: &http.Client{Transport: b}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		return nil, nil, err
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs, b, nil
}

// call calls a tool; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text and structured
// content.
func ok(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res := call(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s: tool error: %s", tool, text(res))
	}
	var out map[string]any
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, b, err)
	}
	return text(res), out
}

// apiError is the REST API's error shape.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// fails calls a tool that must fail with a tool error (not a protocol
// error) and returns the error it carries, and its raw text.
func fails(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (apiError, string) {
	t.Helper()
	res := call(t, cs, tool, args)
	if !res.IsError {
		t.Fatalf("%s %v: succeeded: %s", tool, args, text(res))
	}
	var e apiError
	if err := json.Unmarshal([]byte(text(res)), &e); err != nil || e.Error.Code == "" {
		t.Fatalf("%s: error text is not the API's error shape: %q", tool, text(res))
	}
	if res.StructuredContent != nil {
		t.Fatalf("%s: an error carries structured content", tool)
	}
	return e, text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ids returns the ids of a list or recall result's structured content.
func ids(out map[string]any, field string) []string {
	var r []string
	items, _ := out[field].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["id"].(string)
		r = append(r, id)
	}
	return r
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// rest sends a request to the REST API with key and returns the status and
// the body.
func (e *env) rest(method, path, key string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(b)
}
