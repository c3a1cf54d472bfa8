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
	opRemember: {"remember", 12, 30, 0},
	opRecall:   {"recall", 8, 20, 20},
	opList:     {"list", 8, 12, 15},
	opGet:      {"get", 6, 12, 15},
	opUpdate:   {"update", 6, 12, 0},
	opRevoke:   {"revoke", 6, 10, 15},
	opApprove:  {"approve", 24, 0, 0},
	opDelete:   {"delete", 6, 0, 12},
	opForget:   {"forget", 4, 0, 5},
	opImport:   {"import", 16, 0, 0},
	opExport:   {"export", 8, 0, 0},
}

// allows is the permission table, written here from key.go's role
// comments rather than taken from package auth.
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
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return visible(s, e.owner) }); len(es) > 0 {
			return pick(r, es).mem.Content
		}
	case x < 3:
		if len(r.w.reg.alive) > 0 {
			return pick(r, r.w.reg.alive).mem.Content
		}
	}
	return r.sentence()
}

func (r *run) query(s memgate.Scope) string {
	switch x := r.rng.IntN(4); {
	case x == 0:
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return visible(s, e.owner) }); len(es) > 0 {
			return pick(r, es).mem.Content
		}
	case x == 1:
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
				m := memgate.Memory{Tenant: t, Principal: p, Kind: pick(r, kinds), Source: pick(r, []memgate.Source{memgate.SourceUser, memgate.SourceAssistant}), Content: r.sentence()}
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

// pickCaller picks a role, then a key of that role.
func (r *run) pickCaller() *caller {
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
	return s, ""
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

// one performs one random operation and checks everything it did.
func (r *run) one() {
	c := r.pickCaller()
	op := r.pickOp(c)
	q := r.request(c, op)
	s, code := r.expect(c, op, q)
	r.desc = fmt.Sprintf("#%d %s by %s with %+v", r.step, opInfo[op].name, c.name, q)
	if code != "" {
		r.desc += " (must be refused: " + code + ")"
	}
	r.count(opInfo[op].name + ".attempt")
	if code == memgate.EFORBIDDEN {
		r.count("overreach")
	}
	before := r.heads
	var eff effect
	switch op {
	case opRemember:
		eff = r.remember(c, q, s, code)
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
		ms, del := r.w.changes(p, before[p])
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
			r.w.reg.gone(e)
		}
		if !allowed {
			r.fail("partition %s changed (sequence %d → %d: %v) though the operation may change %s", p, before[p], after[p], changed, what)
		}
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
	if e == nil || !e.alive() || !visible(s, e.owner) {
		return nil
	}
	return e
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

// pickTarget picks the id an operation names: inScope percent of the time
// one the scope reaches (preferring a state where the operation does
// something), otherwise another tenant's, one of the same tenant outside
// the scope, any id ever seen (deleted ones too), or one that never
// existed.
func (r *run) pickTarget(s memgate.Scope, inScope int, prefer func(*memgate.Memory) bool) string {
	reg := r.w.reg
	x := r.rng.IntN(100)
	if x < inScope {
		x = 0
	} else {
		x = 50 + (x-inScope)*50/(100-inScope)
	}
	switch {
	case x < 50:
		es := reg.aliveIn(s.Tenant, func(e *entry) bool { return visible(s, e.owner) })
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
		if es := reg.aliveIn(s.Tenant, func(e *entry) bool { return !visible(s, e.owner) }); len(es) > 0 {
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
// memory of that id, alive, in scope s, and (where the surface shows them)
// its owner and content are the stored ones. It returns the registry entry.
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
	if !visible(s, e.owner) {
		r.fail("%s showed memory %s owned by %+v, outside scope %+v", what, m.ID, e.owner, s)
		return nil
	}
	if !r.surf.partial && ownerOf(m) != e.owner {
		r.fail("%s showed memory %s as owned by %+v; it is %+v", what, m.ID, ownerOf(m), e.owner)
	}
	if m.Content != "" && m.Content != e.mem.Content {
		r.fail("%s showed memory %s with content other than the stored one (another tenant's copy?)", what, m.ID)
	}
	return e
}
