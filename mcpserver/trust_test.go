package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/mcpserver"
)

// The trust model (issue 17) over MCP: every "must not" case has its
// populated control beside it.

// connectStatus posts an initialize to /mcp?query with key and returns the
// HTTP status and body.
func (e *env) connectStatus(key, query string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest("POST", e.url+"/mcp?"+query, strings.NewReader(initialize))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	return res.StatusCode, b.String()
}

// Finding 1 over MCP: the connection's source must be one the key may
// claim; the default is one it may.
func TestHTTPSourceBoundToKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.key("acme", memgate.RoleAgent, "alice", "")
	granted := e.key("acme", memgate.RoleAgent, "alice", "", memgate.SourceAssistant, memgate.SourceUser)
	user := e.key("acme", memgate.RoleUser, "alice", "")
	for _, tc := range []struct {
		name, key, query string
		ok               bool
	}{
		{"agent claims system", agent, "source=system", false},
		{"agent claims user", agent, "source=user", false},
		{"agent claims verified_tool", agent, "source=verified_tool", false},
		{"agent claims tool", agent, "source=tool", true},
		{"agent default", agent, "", true},
		{"granted agent claims user", granted, "source=user", true},
		{"granted agent claims system", granted, "source=system", false},
		{"user claims assistant", user, "source=assistant", false},
		{"user default", user, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.connectStatus(tc.key, tc.query)
			if !tc.ok {
				if status != http.StatusForbidden || !strings.Contains(body, `"field":"source"`) {
					t.Fatalf("connect ?%s: %d %s, want 403 naming source", tc.query, status, body)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("connect ?%s: %d %s", tc.query, status, body)
			}
			cs, _ := e.remote(tc.key, tc.query)
			_, out := ok(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "message", "content": "Alice says hello (" + tc.name + ")."})
			want := map[string]string{"source=tool": "tool", "source=user": "user", "": "assistant"}[tc.query]
			if tc.key == user {
				want = "user"
			}
			if out["source"] != want {
				t.Fatalf("remembered with source %v, want %s", out["source"], want)
			}
		})
	}
	if n := e.count("acme", "alice"); n != 4 {
		t.Fatalf("%d memories stored, want the 4 of the allowed connections", n)
	}
}

// Findings 2 and 3 over MCP: list_memories and recall give a model only
// what recall could: never restricted, pending, revoked, superseded or
// expired content.
func TestModelSeesOnlyWhatRecallCould(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	admin := e.session(&memgate.Key{ID: "key_admin", Tenant: "acme", Role: memgate.RoleAdmin})
	put := func(m memgate.Memory, supersedes ...string) *memgate.Memory {
		t.Helper()
		m.Principal = "alice"
		if m.Source == "" {
			m.Source = memgate.SourceUser
		}
		req := engine.RememberRequest{Memory: m}
		if len(supersedes) > 0 {
			req.Supersedes = supersedes[0]
		}
		r, err := admin.Remember(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory
	}
	visible := put(memgate.Memory{Kind: memgate.KindFact, Content: "Alice walks her dog Pepper every evening."})
	restricted := put(memgate.Memory{Kind: memgate.KindFact, Sensitivity: memgate.SensitivityRestricted, Content: "Alice's dog Pepper takes seizure medication."})
	pending := put(memgate.Memory{Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: "Alice's dog Pepper is a beagle."})
	revoked := put(memgate.Memory{Kind: memgate.KindFact, Content: "Alice's dog Pepper sleeps in the kitchen."})
	if _, err := admin.Revoke(ctx, memgate.Scope{Principal: "alice"}, revoked.ID, "wrong"); err != nil {
		t.Fatal(err)
	}
	old := put(memgate.Memory{Kind: memgate.KindFact, Content: "Alice's dog Pepper eats dry food."})
	put(memgate.Memory{Kind: memgate.KindFact, Content: "Alice's dog Pepper eats wet food now."}, old.ID)
	later := time.Now().Add(24 * time.Hour)
	notYet := put(memgate.Memory{Kind: memgate.KindFact, Content: "Alice's dog Pepper starts agility classes.", ValidFrom: &later})
	if pending.Status != memgate.StatusPending {
		t.Fatalf("assistant fact is %s, want pending", pending.Status)
	}
	hidden := map[string]string{restricted.ID: "restricted", pending.ID: "pending", revoked.ID: "revoked", old.ID: "superseded", notYet.ID: "not valid yet"}

	cs, _ := e.remote(e.key("acme", memgate.RoleAgent, "alice", ""), "")
	_, out := ok(t, cs, mcpserver.ToolList, map[string]any{"limit": 100})
	listed := ids(out, "memories")
	if !contains(listed, visible.ID) {
		t.Fatalf("list_memories %v lacks the active standard memory", listed)
	}
	for id, why := range hidden {
		if contains(listed, id) {
			t.Errorf("list_memories gave the model a %s memory", why)
		}
	}
	for _, m := range out["memories"].([]any) {
		if st := m.(map[string]any)["status"]; st != "active" {
			t.Errorf("list_memories listed a memory with status %v", st)
		}
	}
	_, out = ok(t, cs, mcpserver.ToolRecall, map[string]any{"query": "What about Alice's dog Pepper?", "k": 20})
	recalled := ids(out, "results")
	if !contains(recalled, visible.ID) {
		t.Fatalf("recall %v lacks the active standard memory", recalled)
	}
	for id, why := range hidden {
		if contains(recalled, id) {
			t.Errorf("recall gave the model a %s memory", why)
		}
	}
	// The agent cannot revoke what it cannot see: the restricted memory
	// answers as a missing one.
	missing, _ := fails(t, cs, mcpserver.ToolRevoke, map[string]any{"id": "m_01jzzzzzzzzzzzzzzzzzzzzzzz"})
	got, _ := fails(t, cs, mcpserver.ToolRevoke, map[string]any{"id": restricted.ID})
	if got != missing || got.Error.Code != memgate.ENOTFOUND {
		t.Fatalf("revoke of a restricted memory %+v, a missing id %+v", got, missing)
	}
	// MCP is a model's view: even the person's own key lists no
	// restricted memory there, while the REST API (the person's view)
	// shows it: the control that the memory is there to be hidden.
	userKey := e.key("acme", memgate.RoleUser, "alice", "")
	user, _ := e.remote(userKey, "")
	_, out = ok(t, user, mcpserver.ToolList, map[string]any{"limit": 100})
	if got := ids(out, "memories"); contains(got, restricted.ID) || !contains(got, visible.ID) {
		t.Fatalf("the user key's list_memories %v", got)
	}
	if status, body := e.rest("GET", "/v1/memories/"+restricted.ID, userKey, nil); status != http.StatusOK {
		t.Fatalf("the person's own GET of the restricted memory: %d %s", status, body)
	}
}

// Finding 5 over MCP: a key bound to one agent revokes and supersedes only
// that agent's memories.
func TestHTTPAgentBoundWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	admin := e.session(&memgate.Key{ID: "key_admin", Tenant: "acme", Role: memgate.RoleAdmin})
	put := func(agent, content string) string {
		t.Helper()
		r, err := admin.Remember(ctx, engine.RememberRequest{Memory: memgate.Memory{Principal: "alice", Agent: agent,
			Kind: memgate.KindTask, Source: memgate.SourceAssistant, Content: content}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory.ID
	}
	wide := put("", "Renew Alice's passport.")
	theirs := put("writer", "Draft chapter three of Alice's novel.")
	own := put("planner", "Book Alice's train to Porto.")
	cs, _ := e.remote(e.key("acme", memgate.RoleAgent, "alice", "planner"), "")
	missing, _ := fails(t, cs, mcpserver.ToolRevoke, map[string]any{"id": "m_01jzzzzzzzzzzzzzzzzzzzzzzz"})
	missingSup, _ := fails(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "Book a flight instead.", "supersedes": "m_01jzzzzzzzzzzzzzzzzzzzzzzz"})
	for name, id := range map[string]string{"principal-wide": wide, "another agent's": theirs} {
		if got, _ := fails(t, cs, mcpserver.ToolRevoke, map[string]any{"id": id}); got != missing {
			t.Errorf("revoke of a %s memory answered %+v, a missing id %+v", name, got, missing)
		}
		if got, _ := fails(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "Book a flight instead.", "supersedes": id}); got != missingSup {
			t.Errorf("supersede of a %s memory answered %+v, a missing id %+v", name, got, missingSup)
		}
		m, err := e.db.Get(ctx, memgate.Scope{Tenant: "acme", AllPrincipals: true}, id)
		if err != nil || m.Status != memgate.StatusActive {
			t.Fatalf("the %s memory after refused writes: %v %v", name, m, err)
		}
	}
	// Control: its own memory it supersedes, and the new one it revokes.
	_, out := ok(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "Book Alice's bus to Porto.", "supersedes": own})
	ok(t, cs, mcpserver.ToolRevoke, map[string]any{"id": out["id"]})
}

// Finding 10: /mcp shares the REST API's rate limiter, per key.
func TestHTTPSharesTheRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := newEnvWith(t, func(c *guard.Config) {
		c.RateLimit = guard.RateLimit{PerSecond: 0.001, Burst: 3}
		c.Now = func() time.Time { return now }
	}, nil)
	key := e.key("acme", memgate.RoleAgent, "alice", "")
	other := e.key("acme", memgate.RoleAgent, "alice", "")
	// Three REST requests spend the key's burst...
	for range 3 {
		if status, body := e.rest("GET", "/v1/whoami", key, nil); status != http.StatusOK {
			t.Fatalf("whoami: %d %s", status, body)
		}
	}
	// ...so /mcp refuses the fourth with 429 and Retry-After.
	req, _ := http.NewRequest("POST", e.url+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("/mcp after the burst: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// Control: another key has its own bucket.
	if status, _ := e.connectStatus(other, ""); status != http.StatusOK {
		t.Fatalf("another key's /mcp: %d", status)
	}
}

// Finding 10: /mcp applies the guard's request deadline, as REST does.
func TestHTTPAppliesTheDeadline(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *guard.Config) { c.RequestTimeout = time.Nanosecond }, nil)
	key := e.key("acme", memgate.RoleAdmin, "", "")
	status, _ := e.connectStatus(key, "principal=alice")
	restStatus, _ := e.rest("GET", "/v1/memories?principal=alice", key, nil)
	if status == http.StatusOK || restStatus == http.StatusOK {
		t.Fatalf("with a deadline already passed: /mcp %d, REST %d; both must fail", status, restStatus)
	}
	// Control: with the default deadline both answer.
	e2 := newEnv(t)
	key2 := e2.key("acme", memgate.RoleAdmin, "", "")
	if status, body := e2.connectStatus(key2, "principal=alice"); status != http.StatusOK {
		t.Fatalf("/mcp with the default deadline: %d %s", status, body)
	}
}

// Finding 10: forget_me is offered over HTTP only where the server opts in.
func TestHTTPForgetNeedsOptIn(t *testing.T) {
	t.Parallel()
	toolsOf := func(e *env, key string) []string {
		cs, _ := e.remote(key, "")
		res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	off := newEnvWith(t, nil, func(c *mcpserver.HTTPConfig) { c.AllowForget = false })
	offUser := off.key("acme", memgate.RoleUser, "alice", "")
	if names := toolsOf(off, offUser); contains(names, mcpserver.ToolForget) || !contains(names, mcpserver.ToolRecall) {
		t.Fatalf("without the opt-in a user key is offered %v", names)
	}
	off.seed("acme", "alice", "fact", "Alice keeps a diary.")
	cs, _ := off.remote(offUser, "")
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolForget, Arguments: map[string]any{"confirm": true}}); err == nil && !res.IsError {
		t.Fatal("forget_me ran without the opt-in")
	}
	if n := off.count("acme", "alice"); n != 1 {
		t.Fatalf("%d memories left after a refused forget_me, want 1", n)
	}
	on := newEnv(t) // AllowForget: true
	if names := toolsOf(on, on.key("acme", memgate.RoleUser, "alice", "")); !contains(names, mcpserver.ToolForget) {
		t.Fatalf("with the opt-in a user key is offered %v", names)
	}
	// An agent key is never offered it.
	if names := toolsOf(on, on.key("acme", memgate.RoleAgent, "alice", "")); contains(names, mcpserver.ToolForget) {
		t.Fatalf("an agent key is offered %v", names)
	}
}
