package mcpserver

import (
	"context"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/guard"
)

// Local is the identity of a local server (memgate mcp --db), made from
// its flags and never stored: an agent key's guard session for every tool
// (bound to the tenant, the principal and, when named, the agent, with the
// connection's source as the one source it may claim) and, when forget_me
// is allowed, the person's own (user) key for it. So a model reaches that
// principal's memories and no one else's, never a restricted one, and
// writes what an agent key may. Local is both the server's Caller and its
// Backend: every call goes through the guard.
type Local struct {
	// Memories are the agent key's session's: every operation but Forget.
	memgate.Memories
	agent, user *guard.Session
	req         memgate.Scope
	actor       string
}

// NewLocal returns the Local identity of scope (tenant and principal
// required; agent and conversation narrowing every call), acting as actor
// in the audit log, attributing what it remembers to src.
func NewLocal(g *guard.Guard, actor string, scope memgate.Scope, src memgate.Source, allowForget bool) (*Local, error) {
	if scope.Principal == "" || scope.AllPrincipals {
		return nil, errOnePrincipal()
	}
	agent, err := g.Local(memgate.Key{ID: actor, Tenant: scope.Tenant, Role: memgate.RoleAgent, Principal: scope.Principal, Agent: scope.Agent,
		Sources: []memgate.Source{src}})
	if err != nil {
		return nil, err
	}
	l := &Local{Memories: agent, agent: agent, req: memgate.Scope{Agent: scope.Agent, Conversation: scope.Conversation}, actor: actor}
	if allowForget {
		if l.user, err = g.Local(memgate.Key{ID: actor, Tenant: scope.Tenant, Role: memgate.RoleUser, Principal: scope.Principal}); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *Local) caller(op auth.Op) SessionCaller {
	if op == auth.OpForget && l.user != nil {
		return SessionCaller{Session: l.user, Request: l.req, AllowForget: true}
	}
	return SessionCaller{Session: l.agent, Request: l.req}
}

// Scope implements Caller.
func (l *Local) Scope(op auth.Op) (memgate.Scope, error) { return l.caller(op).Scope(op) }

// Offers implements Caller: forget_me only when allowed.
func (l *Local) Offers(op auth.Op) bool { return l.caller(op).Offers(op) }

// Actor implements Caller.
func (l *Local) Actor() string { return l.actor }

// Forget implements Backend, as the person's own key, when allowed.
func (l *Local) Forget(ctx context.Context, s memgate.Scope) (*memgate.ForgetReceipt, error) {
	if l.user == nil {
		return nil, auth.ErrForbidden(auth.OpForget)
	}
	return l.user.Forget(ctx, s)
}
