package isolation

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
)

// The mutants below are surfaces with one isolation bug each, made by
// wrapping the engine driver. TestIsolationCatches runs the property
// against each and requires it to report a violation: the checks of
// TestIsolation can fail.

// leakyGet reads the whole tenant, whatever the key's binding.
type leakyGet struct{ *engineDriver }

func (d leakyGet) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.w.eng.Get(d.w.ctx, privileged(c.key.Tenant), id)
	return m, engineError(err)
}

// agentBlindList drops the agent narrowing of the key and request.
type agentBlindList struct{ *engineDriver }

func (d agentBlindList) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	k := *c.key
	k.Agent = ""
	r.Agent = ""
	return d.engineDriver.list(&caller{name: c.name, key: &k}, r, in)
}

// neighbourForget erases the next principal of the tenant too.
type neighbourForget struct{ *engineDriver }

func (d neighbourForget) forget(c *caller, r scopeReq) (int64, error) {
	n, err := d.engineDriver.forget(c, r)
	if err != nil {
		return n, err
	}
	s, _ := d.scope(c, "forget", r)
	for i, p := range principals {
		if p == s.Principal {
			d.w.eng.Forget(d.w.ctx, s.Tenant, principals[(i+1)%len(principals)])
		}
	}
	return n, nil
}

// crossTenantImport stores an import in the next tenant.
type crossTenantImport struct{ *engineDriver }

func (d crossTenantImport) importJSONL(c *caller, r scopeReq, body []byte) (int, error) {
	if _, err := d.scope(c, "import", r); err != nil {
		return 0, err
	}
	next := tenants[0]
	for i, t := range tenants {
		if t == c.key.Tenant {
			next = tenants[(i+1)%len(tenants)]
		}
	}
	body = bytes.ReplaceAll(body, []byte(`"tenant":"`+c.key.Tenant+`"`), []byte(`"tenant":"`+next+`"`))
	res, err := d.w.eng.Import(d.w.ctx, engine.ImportRequest{Tenant: next}, bytes.NewReader(body))
	return res.Imported, engineError(err)
}

// tellingNotFound answers a foreign id that exists elsewhere with another
// message than a missing one.
type tellingNotFound struct{ *engineDriver }

func (d tellingNotFound) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.engineDriver.get(c, r, id)
	if codeOf(err) == memgate.ENOTFOUND && len(d.w.reg.byID[id]) > 0 {
		return nil, &apiError{Code: memgate.ENOTFOUND, Message: "memory not found in this scope"}
	}
	return m, err
}

// crossTenantRevoke revokes the memory in whichever tenant holds the id.
type crossTenantRevoke struct{ *engineDriver }

func (d crossTenantRevoke) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	m, err := d.engineDriver.revoke(c, r, id)
	if codeOf(err) != memgate.ENOTFOUND {
		return m, err
	}
	for _, t := range tenants {
		if o := d.w.read(t, id); o != nil {
			m, err := d.w.eng.Revoke(d.w.ctx, o.Scope(), id, "mutant")
			return m, engineError(err)
		}
	}
	return m, err
}

// leakyRecall adds the same principal's memory of another tenant.
type leakyRecall struct{ *engineDriver }

func (d leakyRecall) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	ms, err := d.engineDriver.recall(c, r, in)
	if err != nil {
		return ms, err
	}
	s, _ := d.scope(c, "recall", r)
	for _, e := range d.w.reg.alive {
		if e.tenant != s.Tenant && e.owner.principal == s.Principal && e.mem.Status == memgate.StatusActive {
			return append(ms, e.mem), nil
		}
	}
	return ms, nil
}

// sharedKeys keeps idempotency keys across partitions: a key used once
// replays its memory to whoever sends it again.
type sharedKeys struct {
	*engineDriver
	seen map[string]*memgate.Memory
}

func (d sharedKeys) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	if m := d.seen[in.IdempotencyKey]; m != nil {
		return m, true, nil
	}
	m, replayed, err := d.engineDriver.remember(c, r, in)
	if err == nil && in.IdempotencyKey != "" {
		d.seen[in.IdempotencyKey] = m
	}
	return m, replayed, err
}

// keylessSupersede drops a supersession's idempotency key: a retry
// supersedes anew (a conflict, the old memory being superseded by now, or
// a second pending memory), and no record is written.
type keylessSupersede struct{ *engineDriver }

func (d keylessSupersede) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	if in.Supersedes != "" {
		in.IdempotencyKey = ""
	}
	return d.engineDriver.remember(c, r, in)
}

// callerFiledKeys files a supersession's idempotency record in the
// caller's scope partition instead of the new memory's; the two differ
// when the scope names no agent or conversation and the old memory does
// (otherwise it leaves the supersession to the engine). It keeps those
// records itself and supersedes without the key; a remember whose key
// such a record holds in its scope partition is answered from it, as a
// store sharing its records between the two would.
type callerFiledKeys struct {
	*engineDriver
	recs map[idemKey]*idemRecord
}

func (d callerFiledKeys) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	s, err := d.scope(c, auth.OpRemember, r)
	if err != nil || in.IdempotencyKey == "" || onePrincipal(s) != nil {
		return d.engineDriver.remember(c, r, in)
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
		return d.engineDriver.remember(c, r, in)
	}
	old, err := d.w.db.Get(d.w.ctx, s, in.Supersedes)
	if err != nil || (s.Agent != "" || old.Agent == "") && (s.Conversation != "" || old.Conversation == "") {
		return d.engineDriver.remember(c, r, in) // not found, or the two partitions are one
	}
	keyed := in
	in.IdempotencyKey = ""
	m, replayed, err := d.engineDriver.remember(c, r, in)
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
	mutants := []struct {
		name  string
		roles []memgate.Role
		ops   []opKind
		wrap  func(*engineDriver) driver
		want  string
	}{
		{"get reads the whole tenant", []memgate.Role{agent, user}, []opKind{opGet}, func(d *engineDriver) driver { return leakyGet{d} }, "outside the binding succeeded"},
		{"list ignores the agent", []memgate.Role{agent}, []opKind{opList, opRemember}, func(d *engineDriver) driver { return agentBlindList{d} }, "outside scope"},
		{"forget erases a neighbour", []memgate.Role{admin, user}, []opKind{opForget}, func(d *engineDriver) driver { return neighbourForget{d} }, "forget of"},
		{"import lands in another tenant", []memgate.Role{admin}, []opKind{opImport}, func(d *engineDriver) driver { return crossTenantImport{d} }, "may change"},
		{"not_found tells foreign from missing", []memgate.Role{admin, agent, user}, []opKind{opGet}, func(d *engineDriver) driver { return tellingNotFound{d} }, "told apart from a missing one"},
		{"revoke crosses tenants", []memgate.Role{admin, agent, user}, []opKind{opRevoke}, func(d *engineDriver) driver { return crossTenantRevoke{d} }, "outside the binding succeeded"},
		{"recall leaks another tenant", []memgate.Role{admin, agent, user}, []opKind{opRecall}, func(d *engineDriver) driver { return leakyRecall{d} }, "to a caller of tenant"},
		{"idempotency keys shared across partitions", []memgate.Role{admin, agent}, []opKind{opRemember}, func(d *engineDriver) driver { return sharedKeys{d, map[string]*memgate.Memory{}} }, "showed memory"},
		{"a supersession ignores its idempotency key", []memgate.Role{admin, agent}, []opKind{opRemember}, func(d *engineDriver) driver { return keylessSupersede{d} }, "retry with the same idempotency key"},
		{"a supersession files its key in the caller's partition", []memgate.Role{admin, agent}, []opKind{opRemember}, func(d *engineDriver) driver { return callerFiledKeys{d, map[idemKey]*idemRecord{}} }, "idempotency record"},
		// As MCP answers: ids and content, no owner; the registry judges.
		{"recall leaks, answers without owners", []memgate.Role{admin, agent, user}, []opKind{opRecall}, func(d *engineDriver) driver { return ownerless{leakyRecall{d}} }, "does not hold"},
	}
	// One world for every mutant: the registry follows whatever a mutant
	// did to it, so the next starts from a known state.
	w := newWorld(t, "sqlite")
	for i, m := range mutants {
		t.Run(strings.ReplaceAll(m.name, " ", "_"), func(t *testing.T) {
			wrap := func(w *world) driver { return m.wrap(&engineDriver{w: w}) }
			surf := surfaces[0]
			surf.partial = strings.Contains(m.name, "without owners")
			// The run's shadow of the idempotency records starts empty: so
			// must the store's, which the runs before wrote to.
			if _, err := w.db.PruneIdempotency(w.ctx, time.Now().Add(time.Hour), math.MaxInt32); err != nil {
				t.Fatal(err)
			}
			r := newRunWith(t, w, surf, uint64(i+1), mutantOps, wrap)
			r.roles, r.focus = m.roles, m.ops
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
