package isolation

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// The mutants below are surfaces with one isolation or trust bug each,
// made by wrapping the guard driver (or, for MCP's own rules, the MCP
// driver): where the bug is a check skipped or a scope widened, the
// wrapper does the guard's work itself, wrongly, and calls the engine.
// Like the product, a mutant reads the store, never the test's shadow or
// its written-down rules: each is a mistake the guard could make, not a
// judge told what to find. TestIsolationCatches runs the property against
// each and requires it to report a violation: the checks of TestIsolation
// can fail.

// leakyGet reads the whole tenant, whatever the key's binding.
type leakyGet struct{ *guardDriver }

func (d leakyGet) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.w.eng.Get(d.w.ctx, privileged(c.key.Tenant), id)
	return m, guardError(err)
}

// engineList lists every page of s through the engine, as the guard
// driver lists through a session.
func (d *guardDriver) engineList(s memgate.Scope, in listIn) ([]*memgate.Memory, error) {
	f := engine.ListRequest{Kinds: in.Kinds, Text: in.Text, Limit: store.MaxPageSize}
	if in.Status != "" {
		f.Statuses = []memgate.Status{in.Status}
	}
	var out []*memgate.Memory
	for {
		p, err := d.w.eng.List(d.w.ctx, s, f)
		if err != nil {
			return nil, guardError(err)
		}
		out = append(out, p.Memories...)
		if p.NextCursor == "" {
			return out, nil
		}
		f.Cursor = p.NextCursor
	}
}

// agentBlindList drops the agent narrowing of the key and request.
type agentBlindList struct{ *guardDriver }

func (d agentBlindList) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	r.Agent = ""
	s, err := d.scope(c, auth.OpList, r)
	if err != nil {
		return nil, err
	}
	s.Agent = ""
	return d.engineList(s, in)
}

// neighbourForget erases the next principal of the tenant too.
type neighbourForget struct{ *guardDriver }

func (d neighbourForget) forget(c *caller, r scopeReq) (int64, error) {
	n, err := d.guardDriver.forget(c, r)
	if err != nil {
		return n, err
	}
	s, _ := d.scope(c, auth.OpForget, r)
	for i, p := range principals {
		if p == s.Principal {
			d.w.eng.Forget(d.w.ctx, memgate.Scope{Tenant: s.Tenant, Principal: principals[(i+1)%len(principals)]})
		}
	}
	return n, nil
}

// crossTenantImport stores an import in the next tenant.
type crossTenantImport struct{ *guardDriver }

func (d crossTenantImport) importJSONL(c *caller, r scopeReq, body []byte) (int, error) {
	if _, err := d.scope(c, auth.OpImport, r); err != nil {
		return 0, err
	}
	next := nextTenant(c.key.Tenant)
	body = bytes.ReplaceAll(body, []byte(`"tenant":"`+c.key.Tenant+`"`), []byte(`"tenant":"`+next+`"`))
	res, err := d.w.eng.Import(d.w.ctx, engine.ImportRequest{Tenant: next}, bytes.NewReader(body))
	return res.Imported, guardError(err)
}

// nextTenant is the tenant after t in the universe.
func nextTenant(t string) string {
	for i, x := range tenants {
		if x == t {
			return tenants[(i+1)%len(tenants)]
		}
	}
	return tenants[0]
}

// tellingNotFound answers a foreign id that exists elsewhere (looked up,
// to explain, in every tenant) with another message than a missing one.
type tellingNotFound struct{ *guardDriver }

func (d tellingNotFound) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.guardDriver.get(c, r, id)
	if codeOf(err) == memgate.ENOTFOUND {
		for _, t := range tenants {
			if d.w.read(t, id) != nil {
				return nil, &apiError{Code: memgate.ENOTFOUND, Message: "memory not found in this scope"}
			}
		}
	}
	return m, err
}

// crossTenantRevoke revokes the memory in whichever tenant holds the id.
type crossTenantRevoke struct{ *guardDriver }

func (d crossTenantRevoke) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.guardDriver.revoke(c, r, id)
	if codeOf(err) != memgate.ENOTFOUND {
		return m, err
	}
	for _, t := range tenants {
		if o := d.w.read(t, id); o != nil {
			m, err := d.w.eng.Revoke(engine.WithActor(d.w.ctx, c.key.ID), o.Scope(), id, "mutant")
			return m, guardError(err)
		}
	}
	return m, err
}

// leakyRecall recalls the principal of the same name in the next tenant
// too (an index looked up by principal alone), and merges the results.
type leakyRecall struct{ *guardDriver }

func (d leakyRecall) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	ms, err := d.guardDriver.recall(c, r, in)
	if err != nil {
		return ms, err
	}
	s, _ := d.scope(c, auth.OpRecall, r)
	s.Tenant = nextTenant(s.Tenant)
	res, err := d.w.eng.Recall(engine.WithActor(d.w.ctx, c.key.ID), engine.RecallRequest{Scope: s, Query: in.Query, K: in.K, Kinds: in.Kinds, IncludeRestricted: in.IncludeRestricted})
	if err != nil {
		return ms, nil
	}
	for _, h := range res.Results {
		ms = append(ms, h.Memory)
	}
	return ms, nil
}

// sharedKeys keeps idempotency keys across partitions: a key used once
// replays its memory to whoever sends it again.
type sharedKeys struct {
	*guardDriver
	seen map[string]*memgate.Memory
}

func (d sharedKeys) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	if m := d.seen[in.IdempotencyKey]; m != nil {
		return m, true, nil
	}
	m, replayed, err := d.guardDriver.remember(c, r, in)
	if err == nil && in.IdempotencyKey != "" {
		d.seen[in.IdempotencyKey] = m
	}
	return m, replayed, err
}

// keylessSupersede drops a supersession's idempotency key: a retry
// supersedes anew (a conflict, the old memory being superseded by now, or
// a second pending memory), and no record is written.
type keylessSupersede struct{ *guardDriver }

func (d keylessSupersede) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	if in.Supersedes != "" {
		in.IdempotencyKey = ""
	}
	return d.guardDriver.remember(c, r, in)
}

// callerFiledKeys files a supersession's idempotency record in the
// caller's scope partition instead of the new memory's; the two differ
// when the scope names no agent or conversation and the old memory does
// (otherwise it leaves the supersession to the engine). It keeps those
// records itself and supersedes without the key; a remember whose key
// such a record holds in its scope partition is answered from it, as a
// store sharing its records between the two would.
type callerFiledKeys struct {
	*guardDriver
	recs map[idemKey]*idemRecord
}

func (d callerFiledKeys) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	s, err := d.scope(c, auth.OpRemember, r)
	if err != nil || in.IdempotencyKey == "" || s.AllPrincipals || s.Principal == "" || !d.session(c).MayClaim(in.Source) {
		return d.guardDriver.remember(c, r, in)
	}
	k := idemKey{owner{s.Tenant, s.Principal, s.Agent, s.Conversation}, in.IdempotencyKey}
	if rec := d.recs[k]; rec != nil {
		m := d.w.read(s.Tenant, rec.id)
		if rec.in != in || m == nil {
			return nil, false, &apiError{Code: memgate.ECONFLICT, Field: "idempotency_key", Message: "was used for another request"}
		}
		return m, true, nil
	}
	if in.Supersedes == "" {
		return d.guardDriver.remember(c, r, in)
	}
	old, err := d.w.db.Get(d.w.ctx, s, in.Supersedes)
	if err != nil || (s.Agent != "" || old.Agent == "") && (s.Conversation != "" || old.Conversation == "") {
		return d.guardDriver.remember(c, r, in) // not found, or the two partitions are one
	}
	keyed := in
	in.IdempotencyKey = ""
	m, replayed, err := d.guardDriver.remember(c, r, in)
	if err == nil {
		d.recs[k] = &idemRecord{in: keyed, id: m.ID}
	}
	return m, replayed, err
}

// ownerless answers recall as MCP does: without the memories' owners.
type ownerless struct{ leakyRecall }

func (d ownerless) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	ms, err := d.leakyRecall.recall(c, r, in)
	var out []*memgate.Memory
	for _, m := range ms {
		out = append(out, &memgate.Memory{ID: m.ID, Kind: m.Kind, Source: m.Source, Content: m.Content})
	}
	return out, err
}

// sourceBlindRemember stores a remember without checking that the key may
// claim its source (the engine stores what it is given).
type sourceBlindRemember struct{ *guardDriver }

func (d sourceBlindRemember) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	s, err := d.scope(c, auth.OpRemember, r)
	if err != nil || in.Supersedes != "" || s.AllPrincipals || s.Principal == "" {
		return d.guardDriver.remember(c, r, in)
	}
	req := in.request(r)
	req.Memory.Tenant, req.Memory.Principal, req.Memory.Agent, req.Memory.Conversation = s.Tenant, s.Principal, s.Agent, s.Conversation
	m, err := d.w.eng.Remember(engine.WithActor(d.w.ctx, c.key.ID), req)
	if err != nil {
		return nil, false, guardError(err)
	}
	return m.Memory, m.Replayed, nil
}

// sourceBlindSupersede lets a key supersede a memory whose source it may
// not claim: it checks the new memory's source only.
type sourceBlindSupersede struct{ *guardDriver }

func (d sourceBlindSupersede) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	s, err := d.scope(c, auth.OpRemember, r)
	if err != nil || in.Supersedes == "" || s.AllPrincipals || s.Principal == "" || !d.session(c).MayClaim(in.Source) {
		return d.guardDriver.remember(c, r, in)
	}
	req := in.request(r)
	req.Memory.Tenant, req.Memory.Principal, req.Memory.Agent, req.Memory.Conversation = s.Tenant, s.Principal, s.Agent, s.Conversation
	req.ExactAgent, req.HideRestricted = s.ExactAgent, s.HideRestricted
	m, err := d.w.eng.Remember(engine.WithActor(d.w.ctx, c.key.ID), req)
	if err != nil {
		return nil, false, guardError(err)
	}
	return m.Memory, m.Replayed, nil
}

// sourceBlindUpdate rewrites a memory whose source the key may not claim.
type sourceBlindUpdate struct{ *guardDriver }

func (d sourceBlindUpdate) update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpUpdate, r)
	if err != nil {
		return nil, err
	}
	m, err := d.w.eng.Update(engine.WithActor(d.w.ctx, c.key.ID), s, id, version, in.patch())
	return m, guardError(err)
}

// sourceRewritingBatch stores a batch with every source the key may not
// claim replaced by one it may: nothing unclaimable is stored, but the
// request it should refuse succeeds.
type sourceRewritingBatch struct{ *guardDriver }

func (d sourceRewritingBatch) rememberBatch(c *caller, r scopeReq, ins []rememberIn) ([]*memgate.Memory, error) {
	sess := d.session(c)
	ins = slices.Clone(ins)
	for i := range ins {
		if !sess.MayClaim(ins[i].Source) {
			ins[i].Source = sess.Grant().Sources[0]
		}
	}
	return d.guardDriver.rememberBatch(c, r, ins)
}

// restrictedGet reads restricted memories for an agent key.
type restrictedGet struct{ *guardDriver }

func (d restrictedGet) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpGet, r)
	if err != nil {
		return nil, err
	}
	s.HideRestricted = false
	m, err := d.w.eng.Get(d.w.ctx, s, id)
	return m, guardError(err)
}

// restrictedList lists restricted memories for an agent key.
type restrictedList struct{ *guardDriver }

func (d restrictedList) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpList, r)
	if err != nil {
		return nil, err
	}
	s.HideRestricted = false
	return d.engineList(s, in)
}

// tellingRestricted answers an agent key's get of a restricted memory in
// its binding with another message than a missing id's.
type tellingRestricted struct{ *guardDriver }

func (d tellingRestricted) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.guardDriver.get(c, r, id)
	if s, serr := d.scope(c, auth.OpGet, r); codeOf(err) == memgate.ENOTFOUND && serr == nil {
		s.HideRestricted = false
		if o, gerr := d.w.db.Get(d.w.ctx, s, id); gerr == nil && restricted(o) {
			return nil, &apiError{Code: memgate.ENOTFOUND, Message: "memory not found for this key"}
		}
	}
	return m, err
}

// wideRevoke lets an agent-bound key revoke principal-wide memories (the
// scope of its reads, not of its writes).
type wideRevoke struct{ *guardDriver }

func (d wideRevoke) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpRevoke, r)
	if err != nil {
		return nil, err
	}
	s.ExactAgent = false
	m, err := d.w.eng.Revoke(engine.WithActor(d.w.ctx, c.key.ID), s, id, "mutant")
	return m, guardError(err)
}

// versionBlindApprove approves whatever version the memory has now, not
// the one the request names.
type versionBlindApprove struct{ *guardDriver }

func (d versionBlindApprove) approve(c *caller, r scopeReq, id string, version int64) (*memgate.Memory, error) {
	if m := d.w.read(c.key.Tenant, id); m != nil {
		version = m.Version
	}
	return d.guardDriver.approve(c, r, id, version)
}

// unrecallableList is MCP's list_memories asking the guard for the
// caller's memories without the status filter and the recallable check:
// it shows what recall could not return (held, revoked, superseded, and,
// to the person's own or an admin key, restricted), as a list tool
// forgetting that a model is not the person would. It answers what the
// real tool refuses as the tool does.
type unrecallableList struct{ *mcpDriver }

func (d unrecallableList) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	if _, err := d.mcpDriver.list(c, r, in); err != nil {
		return nil, err
	}
	ms, err := (&guardDriver{w: d.w}).list(c, r, in)
	var out []*memgate.Memory
	for _, m := range ms {
		out = append(out, &memgate.Memory{ID: m.ID, Kind: m.Kind, Source: m.Source, Status: m.Status, Content: m.Content})
	}
	return out, err
}

// restrictedRecall builds an agent key's recall scope by hand (tenant and
// principal as auth.ScopeFor gives them, the rest dropped) and passes
// include_restricted through, unchecked: it recalls restricted memories
// for an agent key.
type restrictedRecall struct{ *guardDriver }

func (d restrictedRecall) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpRecall, r)
	if err != nil || in.Preview || s.AllPrincipals || s.Principal == "" {
		return d.guardDriver.recall(c, r, in)
	}
	s.HideRestricted = false
	res, err := d.w.eng.Recall(engine.WithActor(d.w.ctx, c.key.ID), engine.RecallRequest{Scope: s, Query: in.Query, K: in.K, Kinds: in.Kinds, IncludeRestricted: in.IncludeRestricted})
	if err != nil {
		return nil, guardError(err)
	}
	var out []*memgate.Memory
	for _, h := range res.Results {
		out = append(out, h.Memory)
	}
	return out, nil
}

// actorlessRevoke revokes without naming the key as the engine's actor:
// the memory records no writer.
type actorlessRevoke struct{ *guardDriver }

func (d actorlessRevoke) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	s, err := d.scope(c, auth.OpRevoke, r)
	if err != nil {
		return nil, err
	}
	m, err := d.w.eng.Revoke(d.w.ctx, s, id, "mutant")
	return m, guardError(err)
}

// otherAgentForbidden looks the memory an agent-bound key revokes up in
// the scope of its reads and, when it belongs to another agent (or to
// none), refuses as forbidden: right that it may not, wrong that it tells
// the memory exists.
type otherAgentForbidden struct{ *guardDriver }

func (d otherAgentForbidden) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.guardDriver.revoke(c, r, id)
	s, serr := d.scope(c, auth.OpGet, r)
	if codeOf(err) == memgate.ENOTFOUND && serr == nil && c.key.Agent != "" {
		if o, gerr := d.w.eng.Get(d.w.ctx, s, id); gerr == nil && o.Agent != c.key.Agent {
			return nil, &apiError{Code: memgate.EFORBIDDEN, Message: "memory belongs to another agent"}
		}
	}
	return m, err
}

// deletingForget erases a principal by deleting its memories one by one:
// each leaves a tombstone naming its id in the change feed, where a
// forget leaves none.
type deletingForget struct{ *guardDriver }

func (d deletingForget) forget(c *caller, r scopeReq) (int64, error) {
	s, err := d.scope(c, auth.OpForget, scopeReq{Tenant: r.Tenant, Principal: r.Principal})
	if err != nil || s.AllPrincipals || s.Principal == "" {
		return d.guardDriver.forget(c, r) // refused as the guard refuses
	}
	ms, err := d.engineList(memgate.Scope{Tenant: s.Tenant, Principal: s.Principal}, listIn{})
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		if err := d.w.eng.Delete(engine.WithActor(d.w.ctx, c.key.ID), m.Scope(), m.ID); err != nil {
			return 0, guardError(err)
		}
	}
	return int64(len(ms)), nil
}

// mutantOps bounds each mutant's run, which stops once it is caught: most
// within a few operations; the idempotency mutants need a keyed request
// and then a retry or a reuse of it (a key filed in the caller's partition
// needs a supersession into a narrower partition first), and took up to
// 140 operations over 120 seeds, so the bound leaves a margin.
const mutantOps = 400

// TestIsolationCatches runs the property against surfaces with planted
// isolation bugs, each aimed at the operations that reveal it, and
// requires a violation report naming the bug.
func TestIsolationCatches(t *testing.T) {
	admin, agent, user := memgate.RoleAdmin, memgate.RoleAgent, memgate.RoleUser
	g := func(wrap func(*guardDriver) driver) func(*world) driver {
		return func(w *world) driver { return wrap(&guardDriver{w: w}) }
	}
	const guardSurface, mcpSurface = 0, 2
	mutants := []struct {
		name  string
		surf  int // index in surfaces
		roles []memgate.Role
		ops   []opKind
		wrap  func(*world) driver
		want  string
	}{
		{"get reads the whole tenant", guardSurface, []memgate.Role{agent, user}, []opKind{opGet}, g(func(d *guardDriver) driver { return leakyGet{d} }), "outside the binding succeeded"},
		{"list ignores the agent", guardSurface, []memgate.Role{agent}, []opKind{opList, opRemember}, g(func(d *guardDriver) driver { return agentBlindList{d} }), "outside scope"},
		{"forget erases a neighbour", guardSurface, []memgate.Role{admin, user}, []opKind{opForget}, g(func(d *guardDriver) driver { return neighbourForget{d} }), "forget of"},
		{"import lands in another tenant", guardSurface, []memgate.Role{admin}, []opKind{opImport}, g(func(d *guardDriver) driver { return crossTenantImport{d} }), "may change"},
		{"not_found tells foreign from missing", guardSurface, []memgate.Role{admin, agent, user}, []opKind{opGet}, g(func(d *guardDriver) driver { return tellingNotFound{d} }), "told apart from a missing one"},
		{"revoke crosses tenants", guardSurface, []memgate.Role{admin, agent, user}, []opKind{opRevoke}, g(func(d *guardDriver) driver { return crossTenantRevoke{d} }), "outside the binding succeeded"},
		{"recall leaks another tenant", guardSurface, []memgate.Role{admin, agent, user}, []opKind{opRecall}, g(func(d *guardDriver) driver { return leakyRecall{d} }), "to a caller of tenant"},
		{"idempotency keys shared across partitions", guardSurface, []memgate.Role{admin, agent}, []opKind{opRemember}, g(func(d *guardDriver) driver { return sharedKeys{d, map[string]*memgate.Memory{}} }), "showed memory"},
		{"a supersession ignores its idempotency key", guardSurface, []memgate.Role{admin, agent}, []opKind{opRemember}, g(func(d *guardDriver) driver { return keylessSupersede{d} }), "retry with the same idempotency key"},
		{"a supersession files its key in the caller's partition", guardSurface, []memgate.Role{admin, agent}, []opKind{opRemember}, g(func(d *guardDriver) driver { return callerFiledKeys{d, map[idemKey]*idemRecord{}} }), "idempotency record"},
		// As MCP answers: ids and content, no owner; the registry judges.
		{"recall leaks, answers without owners", guardSurface, []memgate.Role{admin, agent, user}, []opKind{opRecall}, g(func(d *guardDriver) driver { return ownerless{leakyRecall{d}} }), "does not hold"},
		// Trust: sources, restricted memories, agent bindings, versions.
		{"remember takes any source", guardSurface, []memgate.Role{agent, user}, []opKind{opRemember}, g(func(d *guardDriver) driver { return sourceBlindRemember{d} }), "which its key may not claim"},
		{"a supersession ignores the old memory's source", guardSurface, []memgate.Role{agent, user}, []opKind{opRemember}, g(func(d *guardDriver) driver { return sourceBlindSupersede{d} }), `naming "supersedes"`},
		{"update rewrites any source", guardSurface, []memgate.Role{agent, user}, []opKind{opUpdate}, g(func(d *guardDriver) driver { return sourceBlindUpdate{d} }), "which its key may not claim"},
		{"a batch rewrites the sources it may not claim", guardSurface, []memgate.Role{agent, user}, []opKind{opBatch}, g(func(d *guardDriver) driver { return sourceRewritingBatch{d} }), `].source"`},
		{"get shows an agent key a restricted memory", guardSurface, []memgate.Role{agent}, []opKind{opGet}, g(func(d *guardDriver) driver { return restrictedGet{d} }), "outside the binding succeeded"},
		{"list shows an agent key restricted memories", guardSurface, []memgate.Role{agent}, []opKind{opList}, g(func(d *guardDriver) driver { return restrictedList{d} }), "showed the restricted memory"},
		{"not_found tells restricted from missing", guardSurface, []memgate.Role{agent}, []opKind{opGet}, g(func(d *guardDriver) driver { return tellingRestricted{d} }), "told apart from a missing one"},
		{"an agent-bound key revokes principal-wide memories", guardSurface, []memgate.Role{agent}, []opKind{opRevoke}, g(func(d *guardDriver) driver { return wideRevoke{d} }), "an agent-bound key"},
		{"approve ignores the version reviewed", guardSurface, []memgate.Role{admin}, []opKind{opApprove}, g(func(d *guardDriver) driver { return versionBlindApprove{d} }), `conflict naming "If-Match"`},
		{"recall shows an agent key restricted memories", guardSurface, []memgate.Role{agent}, []opKind{opRecall}, g(func(d *guardDriver) driver { return restrictedRecall{d} }), "showed the restricted memory"},
		{"an agent-bound key's revoke tells another agent's memory from a missing one", guardSurface, []memgate.Role{agent}, []opKind{opRevoke}, g(func(d *guardDriver) driver { return otherAgentForbidden{d} }), "outside the binding was answered"},
		{"revoke records no writer", guardSurface, []memgate.Role{admin, agent, user}, []opKind{opRevoke}, g(func(d *guardDriver) driver { return actorlessRevoke{d} }), "records updated_by"},
		{"forget deletes one by one", guardSurface, []memgate.Role{admin, user}, []opKind{opForget}, g(func(d *guardDriver) driver { return deletingForget{d} }), "change feed from the start still names"},
		{"list_memories shows what recall could not return", mcpSurface, []memgate.Role{admin, agent, user}, []opKind{opList}, func(w *world) driver { return unrecallableList{newMCPDriver(w)} }, "which recall could not return"},
	}
	// The mutants whose operations are rare at random are aimed further:
	// an agent key's recall where a restricted memory lies.
	aimed := map[string]*aim{"recall shows an agent key restricted memories": aimRestrictedNear}
	// One world for every mutant: the registry follows whatever a mutant
	// did to it, so the next starts from a known state.
	w := newWorld(t, "sqlite")
	for i, m := range mutants {
		t.Run(strings.ReplaceAll(m.name, " ", "_"), func(t *testing.T) {
			surf := surfaces[m.surf]
			surf.partial = surf.partial || strings.Contains(m.name, "without owners")
			// The run's shadow of the idempotency records starts empty: so
			// must the store's, which the runs before wrote to.
			if _, err := w.db.PruneIdempotency(w.ctx, time.Now().Add(time.Hour), math.MaxInt32); err != nil {
				t.Fatal(err)
			}
			r := newRunWith(t, w, surf, uint64(i+1), mutantOps, m.wrap)
			r.roles, r.focus, r.aim = m.roles, m.ops, aimed[m.name]
			var got []string
			first := 0
			r.onFail = func(msg string) {
				got = append(got, msg)
				if first == 0 && strings.Contains(msg, m.want) {
					first = r.step
				}
			}
			r.until = func() bool { return first > 0 }
			r.operate()
			for _, g := range got {
				if strings.Contains(g, m.want) {
					t.Logf("caught at operation %d: %s", first, g)
					return
				}
			}
			t.Errorf("the property missed the planted bug (want a report containing %q); reports: %q", m.want, got)
		})
	}
}
