package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPEveryTool: over the streamable HTTP transport, with an admin key
// and the principal named by the URL, every tool works.
func TestHTTPEveryTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs, _ := e.remote(e.key("acme", memgate.RoleAdmin, "", ""), "principal=alice&source=user")
	_, out := ok(t, cs, "remember", map[string]any{"content": "Alice drinks green tea zqxjvarnish.", "kind": "preference", "reason": "said so"})
	id, _ := out["id"].(string)
	if out["status"] != "active" || out["source"] != "user" {
		t.Fatalf("remember: %v", out)
	}
	txt, out := ok(t, cs, "recall", map[string]any{"query": "What does Alice drink? quokkablimp"})
	if got := ids(out, "results"); !slices.Equal(got, []string{id}) || !strings.Contains(txt, "<memories>") {
		t.Fatalf("recall: %v\n%s", got, txt)
	}
	_, out = ok(t, cs, "list_memories", nil)
	if got := ids(out, "memories"); !slices.Equal(got, []string{id}) {
		t.Fatalf("list: %v", got)
	}
	_, out = ok(t, cs, "revoke_memory", map[string]any{"id": id})
	if out["status"] != "revoked" {
		t.Fatalf("revoke: %v", out)
	}
	_, out = ok(t, cs, "forget_me", map[string]any{"confirm": true})
	if out["forgotten"] != float64(1) || e.count("acme", "alice") != 0 {
		t.Fatalf("forget: %v", out)
	}
	if !strings.Contains(e.logs.String(), `"tool":"forget_me"`) {
		t.Fatal("no log line per tool call")
	}
}

// TestHTTPTenantIsolation: a key of tenant acme cannot reach tenant
// globex through any tool, nor by naming it in the URL; the control, the
// key's own memories, are reached.
func TestHTTPTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	theirs := e.seed("globex", "alice", "fact", "Alice of Globex keeps a pet zebra named Stripes.")
	theirBob := e.seed("globex", "bob", "fact", "Bob of Globex keeps a pet zebra named Dots.")
	ours := e.seed("acme", "alice", "fact", "Alice of Acme keeps a pet zebra named Pixel.")
	keyA := e.key("acme", memgate.RoleAdmin, "", "")
	keyB := e.key("globex", memgate.RoleAdmin, "", "")
	cs, _ := e.remote(keyA, "principal=alice")

	_, out := ok(t, cs, "recall", map[string]any{"query": "Which pet zebra does Alice keep?", "k": 10})
	if got := ids(out, "results"); !slices.Equal(got, []string{ours}) {
		t.Fatalf("recall: %v (want only %s)", got, ours)
	}
	_, out = ok(t, cs, "list_memories", map[string]any{"limit": 100})
	if got := ids(out, "memories"); !slices.Equal(got, []string{ours}) {
		t.Fatalf("list: %v", got)
	}
	_, missing := fails(t, cs, "revoke_memory", map[string]any{"id": "m_01aaaaaaaaaaaaaaaaaaaaaaaa"})
	for _, id := range []string{theirs, theirBob} {
		if _, raw := fails(t, cs, "revoke_memory", map[string]any{"id": id}); raw != missing {
			t.Fatalf("revoke another tenant's memory: %s (a missing id: %s)", raw, missing)
		}
	}
	ok(t, cs, "remember", map[string]any{"content": "Alice of Acme walks Pixel at dawn.", "kind": "task"})
	_, out = ok(t, cs, "forget_me", map[string]any{"confirm": true})
	if out["forgotten"] != float64(2) {
		t.Fatalf("forget: %v", out)
	}
	if e.count("globex", "alice") != 1 || e.count("globex", "bob") != 1 || e.count("acme", "alice") != 0 {
		t.Fatal("a tool reached another tenant")
	}
	csB, _ := e.remote(keyB, "principal=alice")
	_, out = ok(t, csB, "list_memories", nil)
	if got := ids(out, "memories"); !slices.Equal(got, []string{theirs}) {
		t.Fatalf("globex's own list: %v", got)
	}

	// Naming the other tenant in the URL is refused before any tool, with
	// the REST API's answer to naming it in a request.
	if _, _, err := e.dial(keyA, "tenant=globex&principal=alice"); err == nil {
		t.Fatal("connected with ?tenant=globex on an acme key")
	}
	status, _, body := e.post(keyA, "tenant=globex&principal=alice", initialize)
	restStatus, restBody := e.rest("POST", "/v1/recall", keyA, map[string]any{"tenant": "globex", "principal": "alice", "query": "zebra"})
	if status != http.StatusForbidden || status != restStatus || !sameJSON(body, restBody) {
		t.Fatalf("?tenant=globex: %d %s; REST: %d %s", status, body, restStatus, restBody)
	}
	// The control: the key's own tenant may be repeated.
	if _, _, err := e.dial(keyA, "tenant=acme&principal=alice"); err != nil {
		t.Fatalf("?tenant=acme: %v", err)
	}
}

// TestHTTPKeyBoundToPrincipal: a key bound to alice cannot act for bob:
// the connection is refused as the REST API refuses the request; without
// a principal, or naming alice, it acts for alice only.
func TestHTTPKeyBoundToPrincipal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bobs := e.seed("acme", "bob", "fact", "Bob lives in Lyon.")
	alices := e.seed("acme", "alice", "fact", "Alice lives in Porto.")
	user := e.key("acme", memgate.RoleUser, "alice", "")

	status, _, body := e.post(user, "principal=bob", initialize)
	restStatus, restBody := e.rest("POST", "/v1/recall", user, map[string]any{"principal": "bob", "query": "Where does Bob live?"})
	if status != http.StatusForbidden || status != restStatus || !sameJSON(body, restBody) {
		t.Fatalf("?principal=bob: %d %s; REST: %d %s", status, body, restStatus, restBody)
	}
	if _, _, err := e.dial(user, "principal=bob"); err == nil {
		t.Fatal("connected for bob with alice's key")
	}
	for _, q := range []string{"", "principal=alice"} {
		cs, _ := e.remote(user, q)
		_, out := ok(t, cs, "list_memories", nil)
		if got := ids(out, "memories"); !slices.Equal(got, []string{alices}) {
			t.Fatalf("?%s: list %v", q, got)
		}
		if er, _ := fails(t, cs, "revoke_memory", map[string]any{"id": bobs}); er.Error.Code != memgate.ENOTFOUND {
			t.Fatalf("?%s: revoke bob's: %+v", q, er)
		}
	}
	// An agent key bound to bob reaches bob only.
	agent := e.key("acme", memgate.RoleAgent, "bob", "")
	cs, _ := e.remote(agent, "")
	_, out := ok(t, cs, "recall", map[string]any{"query": "Where does Alice live?"})
	if contains(ids(out, "results"), alices) {
		t.Fatal("bob's agent recalled alice's memory")
	}
	_, out = ok(t, cs, "list_memories", nil)
	if got := ids(out, "memories"); !slices.Equal(got, []string{bobs}) {
		t.Fatalf("bob's agent: list %v", got)
	}
	// An admin key must name a principal: no tool acts for everyone.
	status, _, body = e.post(e.key("acme", memgate.RoleAdmin, "", ""), "", initialize)
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"field":"principal"`) {
		t.Fatalf("admin without a principal: %d %s", status, body)
	}
}

// TestHTTPAuthentication: a missing, malformed, unknown or revoked key is
// 401 with WWW-Authenticate and the REST API's body, for every method.
func TestHTTPAuthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	revoked := e.key("acme", memgate.RoleAdmin, "", "")
	rec := e.keyRecord(revoked)
	if _, err := e.db.RevokeKey(context.Background(), rec.Tenant, rec.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, restBody := e.rest("POST", "/v1/recall", "", map[string]any{"principal": "alice", "query": "x"})
	for name, key := range map[string]string{
		"missing":   "",
		"malformed": "not-a-key",
		"unknown":   "mgk_" + strings.Repeat("A", 43),
		"revoked":   revoked,
	} {
		for _, method := range []string{"POST", "GET", "DELETE"} {
			status, hdr, body := e.send(method, key, "principal=alice", initialize, nil)
			if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != `Bearer realm="memgate"` || !sameJSON(body, restBody) {
				t.Errorf("%s key, %s: %d %q %s (REST: %s)", name, method, status, hdr.Get("WWW-Authenticate"), body, restBody)
			}
		}
		if _, _, err := e.dial(key, "principal=alice"); err == nil {
			t.Errorf("%s key: connected", name)
		}
	}
	// The control: a valid key connects.
	e.remote(e.key("acme", memgate.RoleAdmin, "", ""), "principal=alice")
}

// TestHTTPEachRequestItsOwnKey: nothing binds a request to the key of an
// earlier one. No session id is issued, one presented is not honoured, and
// a client that changes its key mid-connection acts with the new key only;
// with no key its next call fails.
func TestHTTPEachRequestItsOwnKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ours := e.seed("acme", "alice", "fact", "Alice of Acme lives in Porto.")
	theirs := e.seed("globex", "alice", "fact", "Alice of Globex lives in Oslo.")
	keyA := e.key("acme", memgate.RoleAdmin, "", "")
	keyB := e.key("globex", memgate.RoleAdmin, "", "")

	status, hdr, body := e.post(keyA, "principal=alice", initialize)
	if status != http.StatusOK || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize: %d session %q %s", status, hdr.Get("Mcp-Session-Id"), body)
	}
	// A call presenting a session id, with globex's key, is globex's.
	status, _, body = e.send("POST", keyB, "principal=alice", listCall, map[string]string{"Mcp-Session-Id": "made-up-or-stolen"})
	if status != http.StatusOK || !strings.Contains(string(body), theirs) || strings.Contains(string(body), ours) {
		t.Fatalf("list with a session id and globex's key: %d %s", status, body)
	}

	cs, b := e.remote(keyA, "principal=alice")
	_, out := ok(t, cs, "list_memories", nil)
	if got := ids(out, "memories"); !slices.Equal(got, []string{ours}) {
		t.Fatalf("acme's key: %v", got)
	}
	b.set(keyB)
	_, out = ok(t, cs, "list_memories", nil)
	if got := ids(out, "memories"); !slices.Equal(got, []string{theirs}) {
		t.Fatalf("after switching to globex's key: %v", got)
	}
	b.set("")
	if res, err := cs.CallTool(context.Background(), callParams("list_memories")); err == nil && !res.IsError {
		t.Fatalf("a call without a key succeeded: %s", text(res))
	}
}

// TestHTTPErrorsMatchREST: a failed tool call carries the body the REST
// API sends for the same mistake.
func TestHTTPErrorsMatchREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.key("acme", memgate.RoleAdmin, "", "")
	bobs := e.seed("acme", "bob", "fact", "Bob lives in Lyon.")
	cs, _ := e.remote(key, "principal=alice")
	mem := func(fields map[string]any) map[string]any {
		m := map[string]any{"principal": "alice", "source": "assistant"}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name       string
		tool       string
		args       map[string]any
		path       string
		restBody   map[string]any
		wantStatus int
	}{
		{"unknown kind", "remember", map[string]any{"content": "x", "kind": "rumour"},
			"/v1/memories", mem(map[string]any{"content": "x", "kind": "rumour"}), 400},
		{"bad ttl", "remember", map[string]any{"content": "x", "kind": "fact", "ttl": "soon"},
			"/v1/memories", mem(map[string]any{"content": "x", "kind": "fact", "ttl": "soon"}), 400},
		{"too large", "remember", map[string]any{"content": strings.Repeat("a", 9<<10), "kind": "fact"},
			"/v1/memories", mem(map[string]any{"content": strings.Repeat("a", 9<<10), "kind": "fact"}), 413},
		{"secret", "remember", map[string]any{"content": "my key is AKIAIOSFODNN7EXAMPLE", "kind": "fact"},
			"/v1/memories", mem(map[string]any{"content": "my key is AKIAIOSFODNN7EXAMPLE", "kind": "fact"}), 422},
		{"supersede a foreign id", "remember", map[string]any{"content": "Alice moved.", "kind": "fact", "supersedes": bobs},
			"/v1/memories", mem(map[string]any{"content": "Alice moved.", "kind": "fact", "supersedes": bobs}), 404},
		{"revoke a foreign id", "revoke_memory", map[string]any{"id": bobs},
			"/v1/memories/" + bobs + "/revoke?principal=alice", map[string]any{}, 404},
		{"revoke a missing id", "revoke_memory", map[string]any{"id": "m_01aaaaaaaaaaaaaaaaaaaaaaaa"},
			"/v1/memories/m_01aaaaaaaaaaaaaaaaaaaaaaaa/revoke?principal=alice", map[string]any{}, 404},
		{"blank query", "recall", map[string]any{"query": " \t"},
			"/v1/recall", map[string]any{"principal": "alice", "query": " \t"}, 400},
		{"k too large", "recall", map[string]any{"query": "x", "k": 1000},
			"/v1/recall", map[string]any{"principal": "alice", "query": "x", "k": 1000}, 400},
		{"k negative", "recall", map[string]any{"query": "x", "k": -1},
			"/v1/recall", map[string]any{"principal": "alice", "query": "x", "k": -1}, 400},
		{"unknown kind filter", "list_memories", map[string]any{"kind": "rumour"},
			"/v1/memories?principal=alice&kind=rumour", nil, 400},
	} {
		_, raw := fails(t, cs, tc.tool, tc.args)
		method := "POST"
		if tc.restBody == nil {
			method = "GET"
		}
		var body any
		if tc.restBody != nil {
			body = tc.restBody
		}
		status, restBody := e.rest(method, tc.path, key, body)
		if status != tc.wantStatus || !sameJSON([]byte(raw), restBody) {
			t.Errorf("%s: MCP %s\nREST %d %s", tc.name, raw, status, restBody)
		}
	}
	if e.count("acme", "alice") != 0 {
		t.Fatal("a refused memory was written")
	}
}

// initialize and listCall are JSON-RPC messages as a client posts them.
const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	listCall   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_memories","arguments":{}}}`
)

func callParams(tool string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
}

// post sends one JSON-RPC message to /mcp with key (empty: none).
func (e *env) post(key, query, msg string) (int, http.Header, []byte) {
	e.t.Helper()
	return e.send("POST", key, query, msg, nil)
}

func (e *env) send(method, key, query, msg string, hdr map[string]string) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if method == "POST" {
		rd = strings.NewReader(msg)
	}
	u := e.url + "/mcp"
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, bytes.TrimSpace(b)
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
