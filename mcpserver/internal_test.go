package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedLog captures log lines (or output) written while a test reads them.
type lockedLog = logtest.Buffer

func testEngine(t *testing.T) (*engine.Engine, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); db.Close() })
	return eng, db
}

// TestKeyNeverReachesTheSDK: the request the MCP layer sees carries no
// Authorization header, and a server made for the request's own key.
func TestKeyNeverReachesTheSDK(t *testing.T) {
	t.Parallel()
	eng, db := testEngine(t)
	secret, rec, err := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	h, err := NewHTTPHandler(HTTPConfig{Guard: testGuard(t, eng, nil)})
	if err != nil {
		t.Fatal(err)
	}
	var seen *http.Request
	h.(*httpHandler).streamable = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r })
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+secret)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen == nil {
		t.Fatal("the request did not reach the MCP layer")
	}
	for k, vs := range seen.Header {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				t.Fatalf("header %s carries the key into the MCP layer", k)
			}
		}
	}
	if req.Header.Get("Authorization") == "" {
		t.Fatal("the caller's request was modified")
	}
	if s, _ := seen.Context().Value(serverKey{}).(*mcp.Server); s == nil {
		t.Fatal("no server for the request's key")
	}
}

// failingBackend fails List with an error that is not the caller's.
type failingBackend struct{ Backend }

func (failingBackend) List(context.Context, memgate.Scope, engine.ListRequest) (*store.Page, error) {
	return nil, errors.New("sqlite: disk I/O error at /var/lib/secret-path")
}

// TestInternalErrorsAreNotEchoed: an internal error answers "internal
// error" with an id; the detail goes to the log under that id only.
func TestInternalErrorsAreNotEchoed(t *testing.T) {
	t.Parallel()
	eng, _ := testEngine(t)
	logs := &lockedLog{}
	sess, err := testGuard(t, eng, nil).Local(memgate.Key{ID: "mcp", Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{
		Backend: failingBackend{sess},
		Caller:  SessionCaller{Session: sess},
		Logger:  slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolList, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	txt := res.Content[0].(*mcp.TextContent).Text
	id, _ := res.Meta[metaCallID].(string)
	if !res.IsError || txt != `{"error":{"code":"internal","message":"internal error"}}` || id == "" {
		t.Fatalf("internal error answered %q (id %q)", txt, id)
	}
	l := logs.String()
	if !strings.Contains(l, id) || !strings.Contains(l, "disk I/O error") {
		t.Fatalf("the log does not hold the error under its id:\n%s", l)
	}
	// The control: the caller's own mistakes are echoed.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolRecall, Arguments: map[string]any{}})
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, `"field":"query"`) {
		t.Fatalf("a caller's error: %s", txt)
	}
}

// brokenKeys is a key store that fails.
type brokenKeys struct{}

var errBroken = errors.New("sqlite: database is locked at /var/lib/secret-path")

func (brokenKeys) KeyByHash(context.Context, string) (*memgate.Key, error)  { return nil, errBroken }
func (brokenKeys) CreateKey(context.Context, *memgate.Key) error            { return errBroken }
func (brokenKeys) ListKeys(context.Context, string) ([]*memgate.Key, error) { return nil, errBroken }
func (brokenKeys) RevokeKey(context.Context, string, string, time.Time) (*memgate.Key, error) {
	return nil, errBroken
}

// testGuard is a guard over eng (and keys, when not nil), without a rate
// limit.
func testGuard(t *testing.T, eng *engine.Engine, keys guard.KeyStore) *guard.Guard {
	t.Helper()
	g, err := guard.New(guard.Config{Engine: eng, Keys: keys, RateLimit: guard.RateLimit{PerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestHTTPStoreFailureIsInternal: a key store that fails is a 500
// "internal error", not a 401 and not its detail.
func TestHTTPStoreFailureIsInternal(t *testing.T) {
	t.Parallel()
	eng, _ := testEngine(t)
	h, err := NewHTTPHandler(HTTPConfig{Guard: testGuard(t, eng, brokenKeys{})})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer mgk_"+strings.Repeat("A", 43))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusInternalServerError || strings.TrimSpace(w.Body.String()) != `{"error":{"code":"internal","message":"internal error"}}` {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}

// TestHTTPAnonymousRateLimit: /mcp requests without a valid key are
// limited per client address (the guard's anonymous bucket, as on the
// REST API): past the burst, 429 with Retry-After. The controls: another
// address still gets its 401, and a valid key from the limited address
// reaches the MCP layer.
func TestHTTPAnonymousRateLimit(t *testing.T) {
	t.Parallel()
	eng, db := testEngine(t)
	secret, rec, err := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}, AnonRateLimit: guard.RateLimit{PerSecond: 0.001, Burst: 2}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHTTPHandler(HTTPConfig{Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	reached := false
	h.(*httpHandler).streamable = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })
	send := func(remote, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
		req.RemoteAddr = remote
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	for i := range 2 {
		if w := send("203.0.113.9:5000", "mgk_"+strings.Repeat("B", 43)); w.Code != http.StatusUnauthorized {
			t.Fatalf("request %d within the burst: %d", i, w.Code)
		}
	}
	if w := send("203.0.113.9:5001", ""); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d, Retry-After %q; want 429 with it", w.Code, w.Header().Get("Retry-After"))
	}
	if w := send("203.0.113.10:5000", ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("control: another address: %d, want 401", w.Code)
	}
	send("203.0.113.9:5002", secret)
	if !reached {
		t.Fatal("control: a valid key from the limited address did not reach the MCP layer")
	}
}
