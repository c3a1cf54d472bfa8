package isolation

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

type opKind int

const (
	opRemember opKind = iota
	opBatch
	opRecall
	opList
	opGet
	opUpdate
	opRevoke
	opApprove
	opDelete
	opForget
	opImport
	opExport
	numOps
)

var opInfo = [numOps]struct {
	name string
	// weight per role (0: the role may not): admin, agent, user. Admins
	// are few and the only ones to approve, import and export, so those
	// weigh more for them.
	admin, agent, user int
}{
	opRemember: {"remember", 12, 30, 12},
	opBatch:    {"batch", 4, 8, 4},
	opRecall:   {"recall", 8, 20, 20},
	opList:     {"list", 8, 12, 15},
	opGet:      {"get", 6, 12, 15},
	opUpdate:   {"update", 6, 12, 10},
	opRevoke:   {"revoke", 6, 10, 15},
	opApprove:  {"approve", 24, 0, 0},
	opDelete:   {"delete", 6, 0, 12},
	opForget:   {"forget", 4, 0, 5},
	opImport:   {"import", 16, 0, 0},
	opExport:   {"export", 8, 0, 0},
}

// allows is the permission table, written here from key.go's role
// comments and DESIGN.md rather than taken from package auth (a user key
// remembers and updates what its person says).
func allows(role memgate.Role, op opKind) bool {
	switch role {
	case memgate.RoleAdmin:
		return opInfo[op].admin > 0
	case memgate.RoleAgent:
		return opInfo[op].agent > 0
	case memgate.RoleUser:
		return opInfo[op].user > 0
	}
	return false
}

func weight(role memgate.Role, op opKind) int {
	switch role {
	case memgate.RoleAdmin:
		return opInfo[op].admin
	case memgate.RoleAgent:
		return opInfo[op].agent
	}
	return opInfo[op].user
}

func pick[T any](r *run, xs []T) T { return xs[r.rng.IntN(len(xs))] }

// defaultSources are the sources a key granted none at creation may
// claim, written here from key.go and DESIGN.md rather than taken from
// package auth: an agent what it concluded or a tool returned, a person
// what they say, an admin anything.
var defaultSources = map[memgate.Role][]memgate.Source{
	memgate.RoleAdmin: memgate.Sources,
	memgate.RoleAgent: {memgate.SourceAssistant, memgate.SourceTool},
	memgate.RoleUser:  {memgate.SourceUser},
}

// grantOf is the sources key k may claim.
func grantOf(k *memgate.Key) []memgate.Source {
	if len(k.Sources) > 0 {
		return k.Sources
	}
	return defaultSources[k.Role]
}

// claims reports whether key k may write a memory attributed to src, or
// rewrite or supersede one that is: the sources granted at its creation,
// else its role's default.
func claims(k *memgate.Key, src memgate.Source) bool {
	return slices.Contains(grantOf(k), src)
}

// source picks the source of a memory c remembers: half the time one of
// the surface's that c may claim (if any), otherwise any of them.
func (r *run) source(c *caller) memgate.Source {
	if r.rng.IntN(2) == 0 {
		var ok []memgate.Source
		for _, src := range r.surf.sources {
			if claims(c.key, src) {
				ok = append(ok, src)
			}
		}
		if len(ok) > 0 {
			return pick(r, ok)
		}
	}
	return pick(r, r.surf.sources)
}

// Content is made of a small vocabulary, so that recall finds memories,
// the same content lands in many partitions, and dedup happens.
var (
	verbs   = []string{"prefers", "asked about", "booked", "mentioned", "is planning", "cancelled"}
	objects = []string{"green tea", "espresso", "the Porto trip", "a window seat", "the quarterly report", "vegetarian meals",
		"the Lyon office", "morning meetings", "the blue notebook", "jazz concerts", "the dentist appointment", "hiking boots",
		"the budget review", "Italian lessons"}
	tails     = []string{"", " on Mondays", " before noon", " with the team", " next week", " every spring"}
	listWords = []string{"tea", "porto", "report", "office", "notebook", "jazz", "boots", "budget", "lessons", "Meetings"}
	kinds     = memgate.Kinds
	// Remembered facts and preferences from an assistant or a tool are
	// held pending (the default policy): weighted so approvals have work.
	rememberKinds = []memgate.Kind{memgate.KindMessage, memgate.KindFact, memgate.KindFact, memgate.KindPreference, memgate.KindPreference, memgate.KindTask, memgate.KindSummary}
	statuses      = []memgate.Status{memgate.StatusActive, memgate.StatusPending, memgate.StatusRevoked, memgate.StatusSuperseded}
)

func (r *run) sentence() string {
	return "The customer " + pick(r, verbs) + " " + pick(r, objects) + pick(r, tails) + "."
}

// content is new text, or (sometimes) the text of a memory in scope, which
// may fold into it, or of a memory anywhere, which must not.
func (r *run) content(s memgate.Scope) string {
	switch x := r.rng.IntN(10); {
	case x < 2:
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(s) }); len(es) > 0 {
			return pick(r, es).mem.Content
		}
	case x < 3:
		if len(r.w.reg.alive) > 0 {
			return pick(r, r.w.reg.alive).mem.Content
		}
	}
	return r.sentence()
}

// query is what a recall asks: the content of a memory in scope; that of
// one only a key of the same binding trusted more reaches (a restricted
// memory, for an agent key), the surest probe of a leak; or words of the
// vocabulary.
func (r *run) query(s memgate.Scope) string {
	switch x := r.rng.IntN(8); {
	case x < 2:
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(s) }); len(es) > 0 {
			return pick(r, es).mem.Content
		}
	case x == 2:
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(wide(s)) && !e.in(s) }); len(es) > 0 {
			return pick(r, es).mem.Content
		}
	case x < 5:
		return "What about " + pick(r, objects) + "?"
	}
	return pick(r, verbs) + " " + pick(r, objects)
}

// populate seeds every partition through the engine (setup, not under
// test): memories at every level of agent and conversation, some pending
// and some restricted; then part of the first tenant's export imported
// into the second, so the same ids live in two tenants.
func (r *run) populate() {
	w := r.w
	if w.populated {
		return
	}
	w.populated = true
	for _, t := range tenants {
		for _, p := range principals {
			for range 4 {
				// An assistant's facts and preferences are held pending.
				m := memgate.Memory{Tenant: t, Principal: p, Kind: pick(r, kinds), Source: pick(r, []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceTool}), Content: r.sentence()}
				if r.rng.IntN(2) == 0 {
					m.Agent = pick(r, agents)
				}
				if r.rng.IntN(2) == 0 {
					m.Conversation = pick(r, conversations)
				}
				if r.rng.IntN(6) == 0 {
					m.Sensitivity = memgate.SensitivityRestricted
				}
				if _, err := w.eng.Remember(w.ctx, engine.RememberRequest{Memory: m}); err != nil {
					r.w.fatalf("populate: remember: %v", err)
				}
			}
		}
	}
	from, to := tenants[0], tenants[1]
	var buf bytes.Buffer
	if _, err := w.eng.Export(w.ctx, privileged(from), &buf); err != nil {
		r.w.fatalf("populate: export: %v", err)
	}
	_, lines, err := parseJSONL(buf.Bytes())
	if err != nil {
		r.w.fatalf("populate: %v", err)
	}
	r.exports[from] = lines
	var half bytes.Buffer
	for i, l := range lines {
		if i%2 == 0 {
			half.Write(bytes.Replace(l, []byte(`"tenant":"`+from+`"`), []byte(`"tenant":"`+to+`"`), 1))
			half.WriteByte('\n')
		}
	}
	if _, err := w.eng.Import(w.ctx, engine.ImportRequest{Tenant: to}, &half); err != nil {
		r.w.fatalf("populate: import: %v", err)
	}
	w.sync()
}

// pickCaller picks a role, then a key of that role (one the aim wants, if
// any).
func (r *run) pickCaller() *caller {
	if r.aim != nil && r.aim.caller != nil {
		roles := r.roles
		if len(roles) == 0 {
			roles = memgate.Roles
		}
		var cs []*caller
		for _, role := range roles {
			for _, c := range r.byRole[role] {
				if r.aim.caller(c) {
					cs = append(cs, c)
				}
			}
		}
		if len(cs) > 0 {
			return pick(r, cs)
		}
	}
	if len(r.roles) > 0 {
		return pick(r, r.byRole[pick(r, r.roles)])
	}
	role := memgate.RoleAgent
	switch x := r.rng.IntN(100); {
	case x < 40:
		role = memgate.RoleAdmin
	case x < 65:
		role = memgate.RoleUser
	}
	return pick(r, r.byRole[role])
}

// pickOp picks an operation the surface offers: one the role may perform,
// by weight, or now and then (where the surface can be asked) one it may
// not.
func (r *run) pickOp(c *caller) opKind {
	if len(r.focus) > 0 {
		var ok []opKind
		for _, op := range r.focus {
			if allows(c.key.Role, op) {
				ok = append(ok, op)
			}
		}
		if len(ok) > 0 {
			return pick(r, ok)
		}
		return pick(r, r.focus)
	}
	if r.surf.roleRefusals && r.rng.IntN(100) < 3 {
		var no []opKind
		for _, op := range r.surf.ops {
			if !allows(c.key.Role, op) {
				no = append(no, op)
			}
		}
		if len(no) > 0 {
			return pick(r, no)
		}
	}
	total := 0
	for _, op := range r.surf.ops {
		total += weight(c.key.Role, op)
	}
	x := r.rng.IntN(total)
	for _, op := range r.surf.ops {
		if x -= weight(c.key.Role, op); x < 0 {
			return op
		}
	}
	panic("unreachable")
}

// request makes the narrowing fields of a request: within the key's
// binding as a well-behaved caller would send them, or, now and then,
// naming a tenant, principal or agent the key does not reach.
func (r *run) request(c *caller, op opKind) scopeReq {
	k := c.key
	var q scopeReq
	if r.rng.IntN(10) == 0 {
		q.Tenant = k.Tenant // repeating the key's own tenant is fine
	}
	switch {
	case op == opImport:
	case k.Principal != "":
		if r.rng.IntN(3) == 0 {
			q.Principal = k.Principal
		}
	default:
		q.Principal = pick(r, principals)
		if k.Role == memgate.RoleAdmin && (op == opList || op == opExport) && r.surf.tenantWide && r.rng.IntN(3) == 0 {
			q.Principal = "" // the whole tenant
		}
	}
	if op != opImport && op != opForget {
		if k.Agent != "" {
			if r.rng.IntN(3) == 0 {
				q.Agent = k.Agent
			}
		} else if r.rng.IntN(2) == 0 {
			q.Agent = pick(r, agents)
		}
		if r.rng.IntN(5) < 2 {
			q.Conversation = pick(r, conversations)
		}
	}
	if r.rng.IntN(100) < 5 {
		over := []string{"tenant"}
		if k.Principal != "" && op != opImport {
			over = append(over, "principal")
		}
		if k.Agent != "" && op != opImport && op != opForget {
			over = append(over, "agent")
		}
		switch pick(r, over) {
		case "tenant":
			q.Tenant = pick(r, others(tenants, k.Tenant))
		case "principal":
			q.Principal = pick(r, others(principals, k.Principal))
		case "agent":
			q.Agent = pick(r, others(agents, k.Agent))
		}
	}
	return q
}

func others(xs []string, x string) []string {
	var out []string
	for _, v := range xs {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

func tenantWideOp(op opKind) bool { return op == opList || op == opExport || op == opImport }

// expect is what the key and request allow, written from DESIGN.md and
// key.go independently of auth.ScopeFor: the scope the operation must act
// in, or the error code it must be refused with. The scope's tenant is the
// key's even when refused.
func (r *run) expect(c *caller, op opKind, q scopeReq) (memgate.Scope, string) {
	k := c.key
	s := memgate.Scope{Tenant: k.Tenant, Conversation: q.Conversation}
	if !allows(k.Role, op) {
		return s, memgate.EFORBIDDEN
	}
	if q.Tenant != "" && q.Tenant != k.Tenant {
		return s, memgate.EFORBIDDEN
	}
	switch {
	case k.Principal != "":
		if q.Principal != "" && q.Principal != k.Principal {
			return s, memgate.EFORBIDDEN
		}
		s.Principal = k.Principal
	case q.Principal != "":
		s.Principal = q.Principal
	case k.Role == memgate.RoleAdmin && tenantWideOp(op) && (r.surf.tenantWide || op == opImport):
		s.AllPrincipals = true
	default:
		return s, memgate.EINVALID
	}
	if k.Agent != "" {
		if q.Agent != "" && q.Agent != k.Agent {
			return s, memgate.EFORBIDDEN
		}
		s.Agent = k.Agent
	} else {
		s.Agent = q.Agent
	}
	if op == opImport && !s.AllPrincipals {
		return s, memgate.EFORBIDDEN // lines name their principals: only a tenant-wide key may import
	}
	// An agent key never reads a restricted memory; one bound to an agent
	// changes only that agent's own memories (not principal-wide ones).
	s.HideRestricted = k.Role == memgate.RoleAgent
	s.ExactAgent = k.Agent != "" && changesExisting(op)
	return s, ""
}

// changesExisting reports whether op changes memories that exist already
// (remember through its supersedes).
func changesExisting(op opKind) bool {
	switch op {
	case opRemember, opUpdate, opRevoke, opApprove, opDelete:
		return true
	}
	return false
}

// effect says which changes an operation may make: partitions whose
// sequence may move, and which changed or deleted memories are allowed.
// The zero effect allows nothing.
type effect struct {
	what string
	part func(partition) bool
	row  func(m *memgate.Memory, isNew bool) string
	del  func(e *entry) string
	post func() // checks that need the registry brought up to date
	// claimed: the memories the operation writes (stores, rewrites or
	// supersedes) are attributed to their source on its caller's word, so
	// the caller's key must be able to claim it. one sets it for every
	// remember, batch and update, refused or not.
	claimed bool
	// forgot: the partition the operation erased. Its change feed, and that
	// of every partition of its tenant holding no memory (which reads as
	// the tenant's high mark, raised past the erased partition's head), may
	// reset: a forget leaves no tombstone to tell a reader what went. No
	// other feed may, since nothing is pruned in this test.
	forgot *partition
}

// onlyEntries allows changes to the given memories and nothing else.
func onlyEntries(what string, es ...*entry) effect {
	set := map[ref]bool{}
	parts := map[partition]bool{}
	for _, e := range es {
		set[e.ref] = true
		parts[partition{e.tenant, e.owner.principal}] = true
	}
	return effect{
		what: what,
		part: func(p partition) bool { return parts[p] },
		row: func(m *memgate.Memory, isNew bool) string {
			if !set[ref{m.Tenant, m.ID}] {
				return "changed a memory other than the one named"
			}
			if isNew {
				return "stored a memory"
			}
			return ""
		},
		del: func(e *entry) string { return "deleted a memory" },
	}
}

// draw picks the caller, operation and request of the next operation,
// and what they must be: the scope it acts in, or the code it is refused
// with. Aimed at a control (r.aim), it draws again until the operation can
// reach it (maxDraws at most).
func (r *run) draw() (c *caller, op opKind, q scopeReq, s memgate.Scope, code string) {
	for n := 1; ; n++ {
		c = r.pickCaller()
		op = r.pickOp(c)
		q = r.request(c, op)
		s, code = r.expect(c, op, q)
		if r.aim == nil || n == maxDraws || r.aim.fits(r, c, s, code) {
			return c, op, q, s, code
		}
	}
}

// one performs one random operation and checks everything it did.
func (r *run) one() {
	c, op, q, s, code := r.draw()
	r.cur = c
	r.desc = fmt.Sprintf("#%d %s by %s with %+v", r.step, opInfo[op].name, c.name, q)
	if code != "" {
		r.desc += " (must be refused: " + code + ")"
	}
	r.count(opInfo[op].name + ".attempt")
	if c.key.Role == memgate.RoleUser && (op == opRemember || op == opUpdate) {
		r.count("user." + opInfo[op].name + ".attempt")
	}
	if code == memgate.EFORBIDDEN {
		r.count("overreach")
	}
	before := r.heads
	var eff effect
	switch op {
	case opRemember:
		eff = r.remember(c, q, s, code)
	case opBatch:
		eff = r.batch(c, q, s, code)
	case opRecall:
		eff = r.recall(c, q, s, code)
	case opList:
		eff = r.list(c, q, s, code)
	case opExport:
		eff = r.export(c, q, s, code)
	case opGet, opUpdate, opRevoke, opApprove, opDelete:
		eff = r.idOp(op, c, q, s, code)
	case opForget:
		eff = r.forget(c, q, s, code)
	case opImport:
		eff = r.importLines(c, q, s, code)
	}
	switch op {
	case opRemember, opBatch, opUpdate:
		// Even one that should have been refused: whatever it wrote
		// anyway must at least be its key's to claim.
		eff.claimed = true
	}
	after := r.w.heads()
	r.apply(eff, before, after)
	r.heads = after
	if eff.post != nil {
		eff.post()
	}
	r.history = append(r.history, r.desc)
	if len(r.history) > 12 {
		r.history = r.history[1:]
	}
}

// apply reads every change the operation made, partition by partition,
// judges each against the effect, and brings the registry up to date.
func (r *run) apply(eff effect, before, after map[partition]int64) {
	what := eff.what
	if what == "" {
		what = "nothing"
	}
	for _, p := range allPartitions() {
		if after[p] == before[p] {
			continue
		}
		if after[p] < before[p] {
			r.fail("partition %s went back from change %d to %d", p, before[p], after[p])
			continue
		}
		allowed := eff.part != nil && eff.part(p)
		ms, del, reset := r.w.changes(p, before[p])
		if reset {
			r.count("partition.reset")
			if eff.forgot == nil || eff.forgot.tenant != p.tenant {
				r.fail("the change feed of %s reset after change %d, though nothing of its tenant was forgotten: a reader must reload it for nothing (what changed: %d memories, %d deleted)", p, before[p], len(ms), len(del))
			}
			if len(ms)+len(del) == 0 {
				continue // the head moved (the tenant's high mark), nothing else
			}
		}
		var changed []string
		for _, m := range ms {
			changed = append(changed, m.ID)
			if m.Tenant != p.tenant || m.Principal != p.principal {
				r.fail("changes of %s returned %s of %s/%s", p, m.ID, m.Tenant, m.Principal)
			}
			prev := r.w.reg.get(m.Tenant, m.ID)
			isNew := prev == nil || !prev.alive()
			if allowed && eff.row != nil {
				if why := eff.row(m, isNew); why != "" {
					r.fail("%s (may change: %s): memory %s/%s owned by %+v, now %s", why, what, m.Tenant, m.ID, ownerOf(m), fingerprint(m))
				}
			}
			// A fold (one more sighting: seen count and time) leaves the
			// version, and who wrote the memory, as they were.
			if isNew || prev.mem.Version != m.Version {
				r.written(eff, m, isNew)
			}
			r.agentBound(m.Tenant, m.ID, m.Agent)
			if why := r.w.reg.observe(m); why != "" {
				r.fail("%s", why)
			}
		}
		for _, id := range del {
			changed = append(changed, "-"+id)
			e := r.w.reg.get(p.tenant, id)
			if e == nil || !e.alive() {
				r.fail("partition %s reports %s deleted, an id it did not hold", p, id)
				continue
			}
			if allowed && eff.del != nil {
				if why := eff.del(e); why != "" {
					r.fail("%s (may change: %s): memory %s/%s owned by %+v", why, what, e.tenant, e.id, e.owner)
				}
			}
			r.agentBound(e.tenant, e.id, e.owner.agent)
			r.w.reg.gone(e)
		}
		if !allowed {
			r.fail("partition %s changed (sequence %d → %d: %v) though the operation may change %s", p, before[p], after[p], changed, what)
		}
	}
}

// written checks a memory the operation stored or changed (its version
// raised): it names the caller's key as its last writer (updated_by) and,
// new, as its author (created_by, an import's too: the line's is only its
// receipt, imported_created_by); and where the operation writes on the caller's word (claimed),
// the caller's key may claim its source.
func (r *run) written(eff effect, m *memgate.Memory, isNew bool) {
	r.t.Helper()
	k := r.cur.key
	if m.UpdatedBy != k.ID {
		r.fail("memory %s/%s, which the operation by %s changed, records updated_by %q, not its key %s", m.Tenant, m.ID, r.cur.name, m.UpdatedBy, k.ID)
	}
	if isNew && m.CreatedBy != k.ID {
		r.fail("memory %s/%s, which the operation by %s stored, records created_by %q, not its key %s", m.Tenant, m.ID, r.cur.name, m.CreatedBy, k.ID)
	}
	if !eff.claimed {
		return
	}
	r.count("written.checked")
	if !claims(k, m.Source) {
		r.fail("memory %s/%s, written by %s, is attributed to source %s, which its key may not claim", m.Tenant, m.ID, r.cur.name, m.Source)
	}
}

// agentBound checks a memory the operation changed or deleted against the
// caller's agent binding: a key bound to an agent changes that agent's own
// memories only, never a principal-wide one or another agent's.
func (r *run) agentBound(tenant, id, agent string) {
	r.t.Helper()
	k := r.cur.key
	if k.Agent == "" {
		return
	}
	r.count("agentbound.writes.checked")
	if agent != k.Agent {
		r.fail("an agent-bound key (%s) changed memory %s/%s of agent %q", r.cur.name, tenant, id, agent)
	}
}

// apiErr returns err as the surface answered it.
func apiErr(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	if err != nil {
		return &apiError{Code: "?", Message: err.Error()}
	}
	return nil
}

// refusedNaming checks that a request was refused with code, naming
// field.
func (r *run) refusedNaming(err error, code, field string) {
	r.t.Helper()
	if e := apiErr(err); e == nil || e.Code != code || e.Field != field {
		r.fail("the request was answered %v, want %s naming %q", orOK(err), code, field)
	}
}

// refusedSource checks that a write claiming a source outside the grant of
// its key (what says which) was refused: forbidden, naming field.
func (r *run) refusedSource(err error, field, what string) {
	r.t.Helper()
	if e := apiErr(err); e == nil || e.Code != memgate.EFORBIDDEN || e.Field != field {
		r.fail("%s, outside what its key may claim (%v), was answered %v; want forbidden naming %q", what, grantOf(r.cur.key), orOK(err), field)
	}
}

// refused checks that a request outside the key's binding (or the role's
// permissions) was refused with code.
func (r *run) refused(err error, code string) {
	r.t.Helper()
	if got := codeOf(err); got != code {
		r.fail("a request the key does not allow was answered %v, want code %s", orOK(err), code)
	}
}

func orOK(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

// notFoundLikeMissing checks the answer to an operation on a memory the
// caller may not reach: not_found, and the very answer the same request
// gets for an id that never existed.
func (r *run) notFoundLikeMissing(err error, again func(ghost string) error) {
	r.t.Helper()
	got := apiErr(err)
	if got == nil {
		r.fail("an operation on a memory outside the binding succeeded")
		return
	}
	if got.Code != memgate.ENOTFOUND {
		r.fail("an operation on a memory outside the binding was answered %v, want not_found", got)
	}
	ghost := apiErr(again(memgate.NewID(time.Now())))
	switch {
	case ghost == nil:
		r.fail("the same operation on an id that never existed succeeded")
	case *ghost != *got:
		r.fail("a memory outside the binding is told apart from a missing one: %v, and for a missing id %v", got, ghost)
	default:
		r.count("ghost.compared")
	}
}

// reachable returns the memory id that scope s reaches, or nil.
func (r *run) reachable(s memgate.Scope, id string) *entry {
	e := r.w.reg.get(s.Tenant, id)
	if e == nil || !e.in(s) {
		return nil
	}
	return e
}

// hidden counts an attempt on a memory the same request would reach from
// a key of the same binding trusted more (wide): a restricted memory named
// by an agent key, a principal-wide one an agent-bound key would change;
// and one of another agent of the principal, which an agent-bound key
// does not even read. Each must answer like a missing memory.
func (r *run) hidden(op string, s memgate.Scope, id string) {
	e := r.w.reg.get(s.Tenant, id)
	if e == nil || !e.alive() || e.in(s) {
		return
	}
	if e.in(wide(s)) {
		if s.HideRestricted && restricted(e.mem) {
			r.count("restricted.hidden")
			r.count(op + ".restricted.hidden")
		}
		if s.ExactAgent && e.owner.agent != s.Agent {
			r.count("agentbound.target.wide")
			r.count(op + ".agentbound.target.wide")
		}
		return
	}
	if s.ExactAgent && e.owner.principal == s.Principal && e.owner.agent != "" && e.owner.agent != s.Agent {
		r.count(op + ".agentbound.target.other")
	}
}

// crossKind counts an attempt on id that s does not reach: a live memory
// of the same tenant outside the scope, one of another tenant, a deleted
// one, or one that never existed.
func (r *run) crossKind(op string, s memgate.Scope, id string) {
	if e := r.w.reg.get(s.Tenant, id); e != nil && e.alive() {
		r.count(op + ".cross.scope")
		return
	}
	for _, e := range r.w.reg.byID[id] {
		if e.alive() {
			r.count(op + ".cross.tenant")
			return
		}
	}
	if r.w.reg.get(s.Tenant, id) != nil {
		r.count(op + ".deleted")
		return
	}
	r.count(op + ".never")
}

// pickTarget picks the id an operation names: aimed at a control, nine
// times in ten one the aim needs; otherwise inScope percent of the time
// one the scope reaches (preferring a state where the operation does
// something), otherwise another tenant's, one of the same tenant outside
// the scope, any id ever seen (deleted ones too), or one that never
// existed.
func (r *run) pickTarget(s memgate.Scope, inScope int, prefer func(*memgate.Memory) bool) string {
	reg := r.w.reg
	if r.aim != nil && r.aim.needs != nil && r.rng.IntN(10) < 9 {
		if es := reg.aliveIn(s.Tenant, func(e *entry) bool { return r.aim.needs(r.cur, s, e) }); len(es) > 0 {
			return pick(r, es).id
		}
	}
	if (s.ExactAgent || s.HideRestricted) && r.rng.IntN(100) < 15 {
		// A memory only a key trusted more would reach: restricted for an
		// agent key, principal-wide for an agent-bound key's write.
		if es := reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(wide(s)) && !e.in(s) }); len(es) > 0 {
			return pick(r, es).id
		}
	}
	x := r.rng.IntN(100)
	if x < inScope {
		x = 0
	} else {
		x = 50 + (x-inScope)*50/(100-inScope)
	}
	switch {
	case x < 50:
		es := reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(s) })
		if prefer != nil && r.rng.IntN(10) < 8 {
			var pref []*entry
			for _, e := range es {
				if prefer(e.mem) {
					pref = append(pref, e)
				}
			}
			if len(pref) > 0 {
				es = pref
			}
		}
		if len(es) > 0 {
			return pick(r, es).id
		}
	case x < 68:
		var es []*entry
		for _, e := range reg.alive {
			if e.tenant != s.Tenant {
				es = append(es, e)
			}
		}
		if len(es) > 0 {
			return pick(r, es).id
		}
	case x < 84:
		if es := reg.aliveIn(s.Tenant, func(e *entry) bool { return !e.in(s) }); len(es) > 0 {
			return pick(r, es).id
		}
	case x < 94:
		if len(reg.all) > 0 {
			return pick(r, reg.all).id
		}
	}
	return memgate.NewID(time.Now())
}

func hasStatus(ss ...memgate.Status) func(*memgate.Memory) bool {
	return func(m *memgate.Memory) bool { return slices.Contains(ss, m.Status) }
}

// snapshot is the state of every memory with id, in any tenant (and in
// tenant, whether the registry knows it or not), before an operation. It
// is taken from the shadow, which is the store as last read with
// privilege (the census holds the two equal).
func (r *run) snapshot(tenant, id string) map[ref]string {
	snap := map[ref]string{{tenant, id}: fingerprint(nil)}
	for _, e := range r.w.reg.byID[id] {
		snap[e.ref] = fingerprint(e.mem)
	}
	return snap
}

// unchanged checks, reading with privilege, that every memory of snap but
// except is as it was.
func (r *run) unchanged(snap map[ref]string, except ref) {
	var keys []ref
	for k := range snap {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b ref) int { return strings.Compare(a.tenant+"/"+a.id, b.tenant+"/"+b.id) })
	for _, k := range keys {
		if k == except {
			continue
		}
		if now := fingerprint(r.w.read(k.tenant, k.id)); now != snap[k] {
			r.fail("memory %s/%s, which the operation may not touch, changed: %s → %s", k.tenant, k.id, snap[k], now)
		}
	}
}

// shown checks a memory an answer showed: it is the caller's tenant's
// memory of that id, alive, in scope s (so never restricted for an agent
// key, whose scope hides them), and (where the surface shows them) its
// owner, source and content are the stored ones. It returns the registry
// entry.
func (r *run) shown(what string, m *memgate.Memory, s memgate.Scope) *entry {
	r.t.Helper()
	if m == nil {
		r.fail("%s answered a null memory", what)
		return nil
	}
	if !r.surf.partial && m.Tenant != s.Tenant {
		r.fail("%s showed memory %s of tenant %q to a caller of tenant %q", what, m.ID, m.Tenant, s.Tenant)
		return nil
	}
	e := r.w.reg.get(s.Tenant, m.ID)
	if e == nil || !e.alive() {
		var where []string
		for _, o := range r.w.reg.byID[m.ID] {
			if o.alive() {
				where = append(where, fmt.Sprintf("%+v", o.owner))
			}
		}
		r.fail("%s showed memory %s, which tenant %s does not hold (held by: %v)", what, m.ID, s.Tenant, where)
		return nil
	}
	if s.HideRestricted && restricted(e.mem) {
		r.fail("%s showed the restricted memory %s to an agent key (%s)", what, m.ID, r.cur.name)
		return nil
	}
	if !e.in(s) {
		r.fail("%s showed memory %s owned by %+v, outside scope %+v", what, m.ID, e.owner, s)
		return nil
	}
	if !r.surf.partial && ownerOf(m) != e.owner {
		r.fail("%s showed memory %s as owned by %+v; it is %+v", what, m.ID, ownerOf(m), e.owner)
	}
	if m.Content != "" && m.Content != e.mem.Content {
		r.fail("%s showed memory %s with content other than the stored one (another tenant's copy?)", what, m.ID)
	}
	if m.Source != "" && m.Source != e.mem.Source {
		r.fail("%s showed memory %s as from source %s; it is %s", what, m.ID, m.Source, e.mem.Source)
	}
	return e
}
