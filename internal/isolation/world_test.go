package isolation

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/mcpserver"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// The universe every run works in. Principal names repeat across tenants,
// so a query that loses its tenant finds someone of the same name; and in
// every dimension the names differ only in case or by a LIKE wildcard
// ("a_me" matches "acme" and, folding case, "ACME"), so a comparison that
// folds case or matches patterns reaches a neighbour.
var (
	tenants       = []string{"acme", "ACME", "a_me"}
	principals    = []string{"alice", "ALICE", "al_ce"}
	agents        = []string{"planner", "plan_er"}
	conversations = []string{"c1", "c_"}
)

// partition is (tenant, principal): what a change sequence counts.
type partition struct{ tenant, principal string }

func (p partition) String() string { return p.tenant + "/" + p.principal }

// partitions lists every partition of the universe, in a fixed order.
func allPartitions() []partition {
	var ps []partition
	for _, t := range tenants {
		for _, p := range principals {
			ps = append(ps, partition{t, p})
		}
	}
	return ps
}

// caller is one API key: its secret (what every driver presents) and its
// stored record (what the oracle judges by).
type caller struct {
	name   string
	secret string
	key    *memgate.Key
}

// world is one backend with an engine over it, the guard over the engine,
// and a test server serving the REST API and /mcp through that guard; the
// keys of every caller, and the shadow registry of every memory the run
// has seen.
type world struct {
	t       *testing.T
	ctx     context.Context
	backend string
	db      store.Store
	eng     *engine.Engine
	g       *guard.Guard
	url     string
	callers []*caller
	reg     *registry
	// populated is set once the world holds its seed memories.
	populated bool
	// replay says how to replay the run using the world, for failures.
	replay string
}

// fatalf ends the test on a failure of the harness (not a violation),
// with the seed and the command that replays the run.
func (w *world) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf(format+"\n  %s", append(args, w.replay)...)
}

func openStore(t *testing.T, backend string) store.Store {
	t.Helper()
	ctx := context.Background()
	switch backend {
	case "sqlite":
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "isolation.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	case "postgres":
		schema := pgtest.NewSchema(t) // skips without a database, fails in CI
		db, err := postgres.Open(ctx, postgres.Config{URL: pgtest.URL(t), Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() }) // before the schema is dropped
		return db
	}
	t.Fatalf("unknown backend %q", backend)
	return nil
}

func newWorld(t *testing.T, backend string) *world {
	t.Helper()
	db := openStore(t, backend)
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	mh, err := mcpserver.NewHTTPHandler(mcpserver.HTTPConfig{Guard: g, AllowForget: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mh)
	mux.Handle("/", api)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
	})
	w := &world{t: t, ctx: context.Background(), backend: backend, db: db, eng: eng, g: g, url: srv.URL, reg: newRegistry()}
	w.mintKeys()
	return w
}

// granted is the sources some agent keys are granted at creation: their
// role's default (assistant, tool) and what the person says (user), which
// an agent key claims only by such a grant.
var granted = []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceTool}

// mintKeys creates, through auth, one key per binding auth allows in each
// tenant: the admin; users bound to each principal; agents bound to
// nothing, to each agent, to each principal, and to each (principal,
// agent); and, for agents bound to nothing, to the first agent and to
// each (principal, first agent), a second key granted the sources
// granted, so that a source outside an agent key's default is both
// refused (without the grant) and written (with it).
func (w *world) mintKeys() {
	mint := func(tenant string, role memgate.Role, principal, agent string, sources []memgate.Source) {
		secret, rec, err := auth.NewKey(memgate.Key{Tenant: tenant, Role: role, Principal: principal, Agent: agent, Sources: sources})
		if err != nil {
			w.fatalf("%v", err)
		}
		if err := w.db.CreateKey(w.ctx, rec); err != nil {
			w.fatalf("%v", err)
		}
		// The record as the guard authenticates it: what every surface sees.
		sess, err := w.g.Authenticate(w.ctx, "Bearer "+secret)
		if err != nil {
			w.fatalf("%v", err)
		}
		k := sess.Key()
		if !slices.Equal(k.Sources, sources) {
			w.fatalf("key %s was granted sources %v; authenticated, it holds %v", rec.ID, sources, k.Sources)
		}
		name := tenant + "/" + string(role)
		if principal != "" {
			name += ":p=" + principal
		}
		if agent != "" {
			name += ":a=" + agent
		}
		if len(sources) > 0 {
			name += fmt.Sprintf(":src=%v", sources)
		}
		w.callers = append(w.callers, &caller{name: name, secret: secret, key: &k})
	}
	for _, t := range tenants {
		mint(t, memgate.RoleAdmin, "", "", nil)
		mint(t, memgate.RoleAgent, "", "", nil)
		mint(t, memgate.RoleAgent, "", "", granted)
		for _, a := range agents {
			mint(t, memgate.RoleAgent, "", a, nil)
		}
		mint(t, memgate.RoleAgent, "", agents[0], granted)
		for _, p := range principals {
			mint(t, memgate.RoleUser, p, "", nil)
			mint(t, memgate.RoleAgent, p, "", nil)
			for _, a := range agents {
				mint(t, memgate.RoleAgent, p, a, nil)
			}
			mint(t, memgate.RoleAgent, p, agents[0], granted)
		}
	}
}

// privileged is a scope that reaches every memory of tenant: for the
// test's own reads, never for a driver.
func privileged(tenant string) memgate.Scope {
	return memgate.Scope{Tenant: tenant, AllPrincipals: true}
}

// read returns the memory id of tenant as stored, or nil when there is none.
func (w *world) read(tenant, id string) *memgate.Memory {
	m, err := w.db.Get(w.ctx, privileged(tenant), id)
	if memgate.ErrorCode(err) == memgate.ENOTFOUND {
		return nil
	}
	if err != nil {
		w.fatalf("privileged get %s/%s: %v", tenant, id, err)
	}
	return m
}

// readAll returns every memory of tenant as stored, any status.
func (w *world) readAll(tenant string) []*memgate.Memory {
	var all []*memgate.Memory
	f := store.Filter{Limit: store.MaxPageSize}
	for {
		p, err := w.db.List(w.ctx, privileged(tenant), f)
		if err != nil {
			w.fatalf("privileged list %s: %v", tenant, err)
		}
		all = append(all, p.Memories...)
		if p.NextCursor == "" {
			return all
		}
		f.Cursor = p.NextCursor
	}
}

// counts returns the number of memories of every partition that holds
// any, read with privilege (principals outside the universe included).
func (w *world) counts() map[partition]int64 {
	out := map[partition]int64{}
	for _, t := range tenants {
		cs, err := w.db.Counts(w.ctx, privileged(t), time.Time{})
		if err != nil {
			w.fatalf("privileged counts %s: %v", t, err)
		}
		for _, c := range cs {
			out[partition{t, c.Principal}] += c.N
		}
	}
	return out
}

// heads returns the change sequence of every partition of the universe.
func (w *world) heads() map[partition]int64 {
	out := map[partition]int64{}
	for _, p := range allPartitions() {
		h, err := w.db.PartitionHead(w.ctx, p.tenant, p.principal)
		if err != nil {
			w.fatalf("partition head %s: %v", p, err)
		}
		out[p] = h
	}
	return out
}

// changes returns what changed in p after the sequence since: memories in
// their current state, and the ids deleted. When the store cannot tell
// (Reset: the partition was forgotten, which leaves no tombstone of its
// memories, or it holds no head of its own and reads as its tenant's high
// mark, which a forget elsewhere in the tenant raises), it reloads the
// partition, as the port tells a reader to, and diffs it with the shadow:
// the memories stored that differ from it, and the ids it holds that the
// store no longer does. reset reports that it did.
func (w *world) changes(p partition, since int64) (ms []*memgate.Memory, del []string, reset bool) {
	for {
		ch, err := w.db.ChangesSince(w.ctx, p.tenant, p.principal, since, 1000)
		if err != nil {
			w.fatalf("changes of %s since %d: %v", p, since, err)
		}
		if ch.Reset {
			ms, del = w.reload(p)
			return ms, del, true
		}
		ms = append(ms, ch.Memories...)
		del = append(del, ch.Deleted...)
		if !ch.More {
			return ms, del, false
		}
		since = ch.Head
	}
}

// reload reads partition p with privilege, any status, and diffs it with
// the shadow (see changes).
func (w *world) reload(p partition) (ms []*memgate.Memory, del []string) {
	held := map[string]bool{}
	f := store.Filter{Limit: store.MaxPageSize}
	for {
		pg, err := w.db.List(w.ctx, memgate.Scope{Tenant: p.tenant, Principal: p.principal}, f)
		if err != nil {
			w.fatalf("privileged list %s: %v", p, err)
		}
		for _, m := range pg.Memories {
			held[m.ID] = true
			if e := w.reg.get(m.Tenant, m.ID); e == nil || fingerprint(e.mem) != fingerprint(m) {
				ms = append(ms, m)
			}
		}
		if pg.NextCursor == "" {
			break
		}
		f.Cursor = pg.NextCursor
	}
	for _, e := range w.reg.alive {
		if e.tenant == p.tenant && e.owner.principal == p.principal && !held[e.id] {
			del = append(del, e.id)
		}
	}
	return ms, del
}

// fingerprint is what must not change on a memory an operation may not
// touch: version, status, content hash, seen count, feedback, update time.
func fingerprint(m *memgate.Memory) string {
	if m == nil {
		return "absent"
	}
	return fmt.Sprintf("v%d %s %s seen=%d fb=%d/%g at=%s", m.Version, m.Status, m.ContentSHA256, m.SeenCount,
		m.Feedback.Count, m.Feedback.Sum, m.UpdatedAt.Format(time.RFC3339Nano))
}

// owner is where a memory lives; it never changes for an id of a tenant.
type owner struct{ tenant, principal, agent, conversation string }

func ownerOf(m *memgate.Memory) owner {
	return owner{m.Tenant, m.Principal, m.Agent, m.Conversation}
}

// visible is the scope rule on owners, written here from DESIGN.md rather
// than taken from the product: tenant and principal bound ownership; a set
// agent or conversation narrows, and memories stored at the wider level
// (empty agent or conversation) stay visible from every narrower one,
// except that a scope of one agent's memories only (ExactAgent: an
// agent-bound key's writes) holds none of the wider level. Sensitivity is
// the entry's (entry.in).
func visible(s memgate.Scope, o owner) bool {
	switch {
	case o.tenant != s.Tenant:
		return false
	case !s.AllPrincipals && o.principal != s.Principal:
		return false
	case s.Agent != "" && o.agent != "" && o.agent != s.Agent:
		return false
	case s.ExactAgent && o.agent != s.Agent:
		return false
	case s.Conversation != "" && o.conversation != "" && o.conversation != s.Conversation:
		return false
	}
	return true
}

func restricted(m *memgate.Memory) bool { return m.Sensitivity == memgate.SensitivityRestricted }

// in reports whether the live memory e lies in scope s: its owner is
// visible, and it is not restricted where s hides restricted memories (an
// agent key's scope).
func (e *entry) in(s memgate.Scope) bool {
	return e.alive() && visible(s, e.owner) && !(s.HideRestricted && restricted(e.mem))
}

// wide is s without the narrowing a key's role and agent binding add
// (ExactAgent, HideRestricted): what the same request would reach from a
// key bound the same way but trusted more. A memory in wide and not in s
// must answer like a missing one.
func wide(s memgate.Scope) memgate.Scope {
	s.ExactAgent, s.HideRestricted = false, false
	return s
}

// ref names a memory: ids are unique per tenant only, and the test makes
// the same id exist in two tenants on purpose (an export of one imported
// into another).
type ref struct{ tenant, id string }

// entry is the shadow of one (tenant, id): its owner and its last state
// read with privilege (nil once deleted).
type entry struct {
	ref
	owner owner
	mem   *memgate.Memory
	pos   int // index in registry.alive, -1 when deleted
}

func (e *entry) alive() bool { return e.mem != nil }

// registry is the shadow of the store: every (tenant, id) ever seen, with
// its owner partition. Orders are deterministic (discovery order, and
// swap-removal from alive), so a seed replays the same choices.
type registry struct {
	byRef map[ref]*entry
	byID  map[string][]*entry
	all   []*entry
	alive []*entry
}

func newRegistry() *registry {
	return &registry{byRef: map[ref]*entry{}, byID: map[string][]*entry{}}
}

func (r *registry) get(tenant, id string) *entry { return r.byRef[ref{tenant, id}] }

// observe records m as it now stands. It returns a violation when m's
// owner differs from the one its live id had.
func (r *registry) observe(m *memgate.Memory) string {
	k := ref{m.Tenant, m.ID}
	e := r.byRef[k]
	if e == nil {
		e = &entry{ref: k, owner: ownerOf(m), pos: -1}
		r.byRef[k] = e
		r.byID[m.ID] = append(r.byID[m.ID], e)
		r.all = append(r.all, e)
	}
	var problem string
	if e.alive() && e.owner != ownerOf(m) {
		problem = fmt.Sprintf("memory %s/%s changed owner from %+v to %+v", m.Tenant, m.ID, e.owner, ownerOf(m))
	}
	e.owner = ownerOf(m)
	e.mem = m
	if e.pos < 0 {
		e.pos = len(r.alive)
		r.alive = append(r.alive, e)
	}
	return problem
}

// gone records that (tenant, id) was deleted.
func (r *registry) gone(e *entry) {
	if !e.alive() {
		return
	}
	e.mem = nil
	last := r.alive[len(r.alive)-1]
	r.alive[e.pos] = last
	last.pos = e.pos
	r.alive = r.alive[:len(r.alive)-1]
	e.pos = -1
}

// aliveIn returns the live entries of tenant that pass keep, in registry
// order.
func (r *registry) aliveIn(tenant string, keep func(*entry) bool) []*entry {
	var out []*entry
	for _, e := range r.alive {
		if e.tenant == tenant && keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// any reports whether a live entry of tenant passes keep.
func (r *registry) any(tenant string, keep func(*entry) bool) bool {
	for _, e := range r.alive {
		if e.tenant == tenant && keep(e) {
			return true
		}
	}
	return false
}

// census compares the whole store, read with privilege, with the shadow:
// same ids in each tenant, same owners, same states. A difference is a
// change no partition sequence announced, or a memory outside the
// universe's principals.
func (w *world) census() []string {
	var problems []string
	for _, t := range tenants {
		seen := map[string]bool{}
		for _, m := range w.readAll(t) {
			seen[m.ID] = true
			e := w.reg.get(t, m.ID)
			switch {
			case !slices.Contains(principals, m.Principal):
				problems = append(problems, fmt.Sprintf("census: %s/%s belongs to principal %q, outside the universe", t, m.ID, m.Principal))
			case e == nil || !e.alive():
				problems = append(problems, fmt.Sprintf("census: %s/%s is stored but no change sequence announced it", t, m.ID))
			case e.owner != ownerOf(m):
				problems = append(problems, fmt.Sprintf("census: %s/%s owner %+v, shadow says %+v", t, m.ID, ownerOf(m), e.owner))
			case fingerprint(e.mem) != fingerprint(m):
				problems = append(problems, fmt.Sprintf("census: %s/%s is %s, shadow says %s (a change no sequence announced)", t, m.ID, fingerprint(m), fingerprint(e.mem)))
			}
		}
		for _, e := range w.reg.alive {
			if e.tenant == t && !seen[e.id] {
				problems = append(problems, fmt.Sprintf("census: %s/%s is gone but no change sequence announced its deletion", t, e.id))
			}
		}
	}
	return problems
}

// sync registers every memory of the store (after seeding).
func (w *world) sync() {
	for _, t := range tenants {
		for _, m := range w.readAll(t) {
			if p := w.reg.observe(m); p != "" {
				w.fatalf("%s", p)
			}
		}
	}
}
