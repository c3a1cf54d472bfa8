package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/mcpserver"
)

// Issue 26, finding 1 over MCP: remember with a key replaces only the
// connection's own keyed memory, never the person's (here a restricted
// one the agent cannot see), and its answer names nothing of it. Control:
// the agent's next write of the key replaces its own.
func TestRememberKeyNeverReplacesThePersons(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	said, err := e.eng.Remember(ctx, engine.RememberRequest{Memory: memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindTask,
		Source: memgate.SourceUser, Sensitivity: memgate.SensitivityRestricted, Content: "Therapy appointment Tuesday 5pm", Key: "task:health"}})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := e.remote(e.key("acme", memgate.RoleAgent, "alice", ""), "")
	txt, out := ok(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "No appointments this week", "key": "task:health"})
	if strings.Contains(txt, said.ID) || out["supersedes"] != nil || out["id"] == said.ID || out["status"] != "active" {
		t.Fatalf("the agent's keyed remember: %s", txt)
	}
	if m, err := e.db.Get(ctx, memgate.Scope{Tenant: "acme", Principal: "alice"}, said.ID); err != nil || m.Status != memgate.StatusActive {
		t.Fatalf("the person's keyed memory after the agent's write: %+v %v", m, err)
	}
	_, again := ok(t, cs, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "Dentist next Friday", "key": "task:health"})
	if again["supersedes"] != out["id"] {
		t.Fatalf("the agent's second keyed remember supersedes %v, want its own %v", again["supersedes"], out["id"])
	}
	if m, _ := e.db.Get(ctx, memgate.Scope{Tenant: "acme", Principal: "alice"}, said.ID); m.Status != memgate.StatusActive {
		t.Fatalf("the person's keyed memory after the agent's second write: %s", m.Status)
	}
}

// Issue 26, finding 5 over MCP: revoke_memory by an agent connection
// refuses what the person said (forbidden, naming source) and leaves it
// active. Controls: the agent revokes its own memory, and a user
// connection the user's.
func TestRevokeNeverRetiresWhatThePersonSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	said := e.seed("acme", "alice", "preference", "Alice prefers window seats.")
	agent, _ := e.remote(e.key("acme", memgate.RoleAgent, "alice", ""), "")
	ae, _ := fails(t, agent, mcpserver.ToolRevoke, map[string]any{"id": said, "reason": "outdated"})
	if ae.Error.Code != memgate.EFORBIDDEN || ae.Error.Field != "source" {
		t.Fatalf("the agent's revoke of the person's memory: %+v", ae.Error)
	}
	if m, _ := e.db.Get(ctx, memgate.Scope{Tenant: "acme", Principal: "alice"}, said); m.Status != memgate.StatusActive {
		t.Fatalf("a refused revoke left the person's memory %s", m.Status)
	}
	_, own := ok(t, agent, mcpserver.ToolRemember, map[string]any{"kind": "task", "content": "Book the Lisbon flight."})
	if _, out := ok(t, agent, mcpserver.ToolRevoke, map[string]any{"id": own["id"], "reason": "done"}); out["status"] != "revoked" {
		t.Fatalf("the agent's revoke of its own memory: %v", out)
	}
	user, _ := e.remote(e.key("acme", memgate.RoleUser, "alice", ""), "")
	if _, out := ok(t, user, mcpserver.ToolRevoke, map[string]any{"id": said, "reason": "changed my mind"}); out["status"] != "revoked" {
		t.Fatalf("the user's revoke of their own memory: %v", out)
	}
}
