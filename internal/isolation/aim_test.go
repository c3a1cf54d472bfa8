package isolation

import (
	"fmt"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// aim narrows the operations topUp aims at one control to those that can
// reach it. Each field is optional; an aim never changes what the checks
// expect, only which keys, requests and ids are drawn.
type aim struct {
	// caller: the keys that can reach the control.
	caller func(*caller) bool
	// needs: the memories the control needs within the reach of key c's
	// request (s as expect makes it). Requests are drawn again, up to
	// maxDraws times, until their scope holds one, and an operation on one
	// id names one of them nine times in ten.
	needs func(c *caller, s memgate.Scope, e *entry) bool
	// stock, when the world holds no memory the control needs, stores one
	// as setup, through the engine, as populate does: what the surface
	// cannot write itself (MCP remembers nothing restricted), or what
	// forgets have erased since.
	stock func(r *run)
}

// maxDraws bounds the requests drawn for one aimed operation; past it the
// last one drawn is performed, reaching the control or not.
const maxDraws = 100

func isAgent(c *caller) bool { return c.key.Role == memgate.RoleAgent }

// The aims of the controls that the random sequence misses now and then.
var (
	aimAgent   = &aim{caller: isAgent}
	aimGranted = &aim{caller: func(c *caller) bool { return isAgent(c) && claims(c.key, memgate.SourceUser) }}
	// An agent key granted source user, on a memory of the user's it may
	// update.
	aimGrantedUpdate = &aim{caller: aimGranted.caller, needs: userUpdatable, stock: stockUserMemory}
	// A key that may not claim the user's source, superseding a memory in
	// its reach from a source it may not claim (a user's, stocked when
	// none is left): the supersession must be refused.
	aimSupersedeUnclaimed = &aim{
		caller: func(c *caller) bool { return !claims(c.key, memgate.SourceUser) },
		needs: func(c *caller, s memgate.Scope, e *entry) bool {
			return e.in(s) && !claims(c.key, e.mem.Source) && e.mem.Status == memgate.StatusActive
		},
		stock: stockUserMemory,
	}
	// A user key, on a memory of its person's it may update.
	aimUserUpdate = &aim{caller: func(c *caller) bool { return c.key.Role == memgate.RoleUser }, needs: userUpdatable, stock: stockUserMemory}
	// An agent key reading where an active restricted memory lies: the
	// wider scope of the same binding reaches it.
	aimRestrictedNear = &aim{
		caller: isAgent,
		needs: func(_ *caller, s memgate.Scope, e *entry) bool {
			return restricted(e.mem) && e.mem.Status == memgate.StatusActive && e.in(wide(s))
		},
		stock: stockRestricted,
	}
	// An agent key naming a restricted memory of its binding.
	aimRestrictedHidden = &aim{
		caller: isAgent,
		needs:  func(_ *caller, s memgate.Scope, e *entry) bool { return restricted(e.mem) && e.in(wide(s)) && !e.in(s) },
		stock:  stockRestricted,
	}
	// An agent-bound key where a principal-wide memory lies: it reads it,
	// and may not change it.
	aimAgentBoundWide = &aim{
		caller: func(c *caller) bool { return c.key.Agent != "" },
		needs: func(_ *caller, s memgate.Scope, e *entry) bool {
			return e.owner.agent == "" && e.in(wide(s)) && !(s.HideRestricted && restricted(e.mem))
		},
	}
)

// userUpdatable reports whether e is a user's memory that c's update in
// scope s can change: in reach, from a source c may claim, pending or
// active.
func userUpdatable(c *caller, s memgate.Scope, e *entry) bool {
	return e.in(s) && e.mem.Source == memgate.SourceUser && claims(c.key, e.mem.Source) &&
		hasStatus(memgate.StatusActive, memgate.StatusPending)(e.mem)
}

// stockUserMemory stores an active memory from the user, of the first
// agent, not restricted (in the reach of every key of its principal but
// those bound to the second agent), when none is left. A restricted one
// does not count: no agent key reaches it.
func stockUserMemory(r *run) {
	r.restock("a user's memory of the first agent", func(e *entry) bool {
		return e.mem.Source == memgate.SourceUser && e.mem.Status == memgate.StatusActive && e.owner.agent == agents[0] && !restricted(e.mem)
	}, memgate.Memory{Agent: agents[0], Kind: memgate.KindMessage, Source: memgate.SourceUser})
}

// stockRestricted stores an active restricted memory, principal-wide (in
// the reach of every agent key of its principal), when none is left.
func stockRestricted(r *run) {
	r.restock("an active restricted memory", func(e *entry) bool {
		return restricted(e.mem) && e.mem.Status == memgate.StatusActive && e.owner.agent == ""
	}, memgate.Memory{Kind: memgate.KindMessage, Source: memgate.SourceUser, Sensitivity: memgate.SensitivityRestricted})
}

// restock stores like, in a tenant and principal of the universe picked
// at random and with new content, unless a live memory passes keep. It is
// setup between two operations, not under test: the shadow and the heads
// take it in at once, so the next operation is judged on its own changes.
func (r *run) restock(what string, keep func(*entry) bool, like memgate.Memory) {
	for _, e := range r.w.reg.alive {
		if keep(e) {
			return
		}
	}
	m := like
	m.Tenant, m.Principal, m.Content = pick(r, tenants), pick(r, principals), r.sentence()
	got, err := r.w.eng.Remember(r.w.ctx, engine.RememberRequest{Memory: m})
	if err != nil {
		r.w.fatalf("restock %s: remember: %v", what, err)
	}
	if stored := r.w.read(m.Tenant, got.Memory.ID); stored != nil {
		if why := r.w.reg.observe(stored); why != "" {
			r.w.fatalf("restock %s: %s", what, why)
		}
	}
	r.heads = r.w.heads()
	r.count("setup.restocked")
	r.history = append(r.history, fmt.Sprintf("(setup: %s stored, %s in %s/%s)", what, got.Memory.ID, m.Tenant, m.Principal))
}

// fits reports whether the operation drawn can reach the aim's control:
// allowed, by a key it wants, in a scope holding a memory it needs.
func (a *aim) fits(r *run, c *caller, s memgate.Scope, code string) bool {
	switch {
	case code != "":
		return false
	case a.caller != nil && !a.caller(c):
		return false
	case a.needs != nil:
		return r.w.reg.any(s.Tenant, func(e *entry) bool { return a.needs(c, s, e) })
	}
	return true
}
