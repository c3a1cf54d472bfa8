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
