package isolation

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// defaultOps is the number of operations per backend × surface in an
// ordinary run (CI): six combinations make 2,400 operations in all, which
// take about 45 s of CPU with -race and 15 s without (the two backends run
// side by side on two cores). A long run for the record passes a larger
// -isolation.ops.
const defaultOps = 400

var (
	seedFlag = flag.Uint64("isolation.seed", 0, "seed of TestIsolation's random operation sequences (0: one from the clock)")
	opsFlag  = flag.Int("isolation.ops", defaultOps, "operations per backend × surface combination in TestIsolation")
)

// Every censusEvery operations the whole store is compared with the shadow.
const censusEvery = 50

// minControlOps is the run length from which the populated controls are
// required (a shorter run only logs them).
const minControlOps = defaultOps

// maxViolations ends a combination: past it, more messages explain nothing.
const maxViolations = 20

// surface is one way in: which operations it offers, and what its answers
// show.
type surface struct {
	name string
	ops  []opKind
	// partial: answers show a memory's id, kind, source, status and content
	// only, never its owner (MCP), so the owner is judged from the registry.
	partial bool
	// listRecallable: a list takes no status and shows only what recall
	// could return (active, unexpired, valid now, standard), whatever the
	// key (MCP's list_memories).
	listRecallable bool
	// recallKinds, restricted: recall takes a kinds filter; memories can be
	// remembered restricted and recalled with include_restricted.
	recallKinds, restricted bool
	// preview: recall can be marked a preview.
	preview bool
	// tenantWide: an admin key may name no principal on list and export.
	tenantWide bool
	// roleRefusals: an operation the role may not perform can be asked
	// (MCP does not even list such tools).
	roleRefusals bool
	// idempotency: remember takes an idempotency key.
	idempotency bool
	// versionField is the field an approve naming no version is refused
	// with (invalid_argument).
	versionField string
	sources      []memgate.Source
	driver       func(*world) driver
}

// writers are the sources remember names, the unverified ones weighted.
var writers = []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceAssistant, memgate.SourceTool, memgate.SourceVerifiedTool, memgate.SourceSystem}

var everyOp = []opKind{opRemember, opBatch, opRecall, opList, opGet, opUpdate, opRevoke, opApprove, opDelete, opForget, opImport, opExport}

var surfaces = []surface{
	{
		name: "guard", ops: everyOp, recallKinds: true, restricted: true, preview: true, tenantWide: true, roleRefusals: true, idempotency: true,
		versionField: "version", sources: writers,
		driver: func(w *world) driver { return &guardDriver{w: w} },
	},
	{
		name: "http", ops: everyOp, recallKinds: true, restricted: true, preview: true, tenantWide: true, roleRefusals: true, idempotency: true,
		versionField: "If-Match", sources: writers,
		driver: func(w *world) driver { return newHTTPDriver(w) },
	},
	{
		name: "mcp", ops: []opKind{opRemember, opRecall, opList, opRevoke, opForget}, partial: true, listRecallable: true, idempotency: true,
		sources: []memgate.Source{memgate.SourceAssistant, memgate.SourceUser, memgate.SourceTool},
		driver:  func(w *world) driver { return newMCPDriver(w) },
	},
}

// TestIsolation runs the isolation property (see the package comment) on
// every backend × surface; -run 'TestIsolation$/sqlite/http' runs one alone.
func TestIsolation(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
		if seed == 0 {
			seed = 1
		}
	}
	ops := *opsFlag
	t.Logf("isolation: seed %d, %d operations per combination; replay with: go test ./internal/isolation -run 'TestIsolation$' -isolation.seed=%d -isolation.ops=%d", seed, ops, seed, ops)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel() // one waits on PostgreSQL while the other computes
			for _, surf := range surfaces {
				t.Run(surf.name, func(t *testing.T) {
					newRun(t, backend, surf, seed, ops).exercise()
				})
			}
		})
	}
}

// run is one combination's sequence of operations and what it observed.
type run struct {
	t      *testing.T
	w      *world
	surf   surface
	drv    driver
	rng    *rand.Rand
	seed   uint64
	ops    int
	replay string

	step  int
	extra int // operations aimed at controls after the random ones
	desc  string
	// cur is the caller of the operation under way (the one whose key
	// every change it makes must name, and whose trust it must fit).
	cur     *caller
	history []string
	heads   map[partition]int64
	exports map[string][][]byte // the last export lines seen, per tenant
	idem    map[idemKey]*idemRecord
	idemSeq int
	counts  map[string]int
	fails   int

	byRole map[memgate.Role][]*caller
	// roles and focus, when set, narrow the callers and operations picked
	// (TestIsolationCatches aims its mutants with them).
	roles []memgate.Role
	focus []opKind
	// aim, when set, narrows them further, to what can reach one control
	// (topUp).
	aim *aim
	// onFail, when set, receives violations instead of the test; until,
	// when set, ends the run early once it reports true.
	onFail func(msg string)
	until  func() bool
}

func newRun(t *testing.T, backend string, surf surface, seed uint64, ops int) *run {
	return newRunWith(t, newWorld(t, backend), surf, seed, ops, surf.driver)
}

// newRunWith makes a run in world w (whose tests helpers report to t from
// now on) through the driver drv makes.
func newRunWith(t *testing.T, w *world, surf surface, seed uint64, ops int, drv func(*world) driver) *run {
	backend := w.backend
	h := fnv.New64a()
	h.Write([]byte(backend + "/" + surf.name))
	r := &run{
		t: t, surf: surf, seed: seed, ops: ops,
		rng:     rand.New(rand.NewPCG(seed, h.Sum64())),
		replay:  fmt.Sprintf("go test ./internal/isolation -run '^TestIsolation$/^%s$/^%s$' -isolation.seed=%d -isolation.ops=%d -v", backend, surf.name, seed, ops),
		exports: map[string][][]byte{},
		idem:    map[idemKey]*idemRecord{},
		counts:  map[string]int{},
		byRole:  map[memgate.Role][]*caller{},
	}
	t.Logf("seed %d; replay: %s", seed, r.replay)
	w.t = t
	w.replay = fmt.Sprintf("seed %d; replay: %s", seed, r.replay)
	r.w = w
	r.drv = drv(r.w)
	for _, c := range r.w.callers {
		r.byRole[c.key.Role] = append(r.byRole[c.key.Role], c)
	}
	return r
}

// fail records a violation of the property, with what is needed to
// replay it.
func (r *run) fail(format string, args ...any) {
	r.t.Helper()
	r.fails++
	if r.onFail != nil {
		r.onFail(fmt.Sprintf(format, args...))
		return
	}
	r.t.Errorf("isolation violated at operation %d of %s/%s (seed %d):\n  %s\n  operation: %s\n  recent operations:\n    %s\n  replay: %s",
		r.step, r.w.backend, r.surf.name, r.seed, fmt.Sprintf(format, args...), r.desc, strings.Join(r.history, "\n    "), r.replay)
	if r.fails >= maxViolations {
		r.t.Fatalf("stopping after %d violations (seed %d); replay: %s", r.fails, r.seed, r.replay)
	}
}

func (r *run) count(name string) { r.counts[name]++ }

// exercise seeds the store, runs the operations, tops up the controls,
// and checks them.
func (r *run) exercise() {
	start := time.Now()
	r.operate()
	if r.ops >= minControlOps {
		r.topUp()
		r.desc = "final census"
		r.census()
	}
	r.controls()
	r.t.Logf("%d operations (and %d aimed at the controls) in %v, %d violations; seed %d",
		r.ops, r.extra, time.Since(start).Round(time.Millisecond), r.fails, r.seed)
	r.logCounts()
}

// operate seeds the store and runs the operations, with a census every
// censusEvery operations and at the end.
func (r *run) operate() {
	r.populate()
	r.heads = r.w.heads()
	for r.step = 1; r.step <= r.ops; r.step++ {
		r.one()
		if r.until != nil && r.until() {
			return
		}
		if r.step%censusEvery == 0 {
			r.census()
		}
		if r.step%5000 == 0 {
			r.t.Logf("%d operations done, %d violations", r.step, r.fails)
		}
		if r.t.Failed() && r.fails == 0 {
			r.t.Fatalf("harness failure at operation %d (seed %d); replay: %s", r.step, r.seed, r.replay)
		}
	}
	r.step = r.ops
	r.desc = "final census"
	r.census()
}

func (r *run) census() {
	for _, p := range r.w.census() {
		r.fail("%s", p)
	}
}

// logCounts logs the counters, sorted.
func (r *run) logCounts() {
	var names []string
	for k := range r.counts {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", k, r.counts[k])
	}
	r.t.Logf("counters: %s", b.String())
}

// has reports whether any of the counters is above zero.
func (r *run) has(names ...string) bool {
	for _, k := range names {
		if r.counts[k] > 0 {
			return true
		}
	}
	return false
}

// control is a populated control a run must reach: what it shows, and
// how topUp aims operations at it when the random ones did not.
type control struct {
	what string
	aim  *aim
}

// missing returns the populated controls op has not reached: the checks
// can only fail if operations reached memories, so a run must show that
// in-binding operations returned and changed memories, and that attempts
// outside the binding were made, for every operation the surface offers.
func (r *run) missing(op opKind) []control {
	var out []control
	need := func(ok bool, what string, a ...*aim) {
		if !ok {
			c := control{what: what}
			if len(a) > 0 {
				c.aim = a[0]
			}
			out = append(out, c)
		}
	}
	name := opInfo[op].name
	need(r.has(name+".attempt"), name+" attempted")
	switch op {
	case opRemember:
		need(r.has("remember.ok"), "remember stored")
		if r.surf.idempotency {
			need(r.has("remember.replayed"), "a remember retried with its idempotency key replayed")
			need(r.has("supersede.key.replayed"), "a supersession retried with its idempotency key replayed")
		}
		need(r.has("remember.cross.scope", "remember.cross.tenant"), "remember superseding a memory outside the binding")
		need(r.has("source.refused"), "a remember naming a source its key may not claim was refused")
		need(r.has("source.granted"), "an agent key granted source user remembered as the user", aimGranted)
		need(r.has("supersedes.source.refused"), "a supersession of a memory whose source the key may not claim was refused", aimSupersedeUnclaimed)
		need(r.has("user.remember.ok"), "a user key remembered")
		need(r.has("written.checked"), "a memory written was checked against its writer's sources")
	case opBatch:
		need(r.has("batch.ok"), "a batch stored memories")
		need(r.has("batch.source.refused"), "a batch with a source its key may not claim was refused")
	case opRecall:
		need(r.has("recall.nonempty"), "a recall returned memories")
		need(r.has("recall.restricted.present"), "an agent key recalled while a restricted memory lay in its reach", aimRestrictedNear)
		if r.surf.restricted {
			need(r.has("recall.restricted.refused"), "an agent key asking for restricted memories was refused", aimAgent)
		}
		if r.surf.preview {
			need(r.has("recall.preview.refused"), "an agent key asking for a preview was refused", aimAgent)
		}
	case opList:
		need(r.has("list.nonempty"), "a list returned memories")
		need(r.has("list.restricted.present"), "an agent key listed while a restricted memory lay in its reach", aimRestrictedNear)
		need(r.has("agentbound.read.wide"), "an agent-bound key was shown a principal-wide memory", aimAgentBoundWide)
		if r.surf.listRecallable {
			need(r.has("list.unrecallable.left"), "a memory recall could not return (pending, revoked, superseded or restricted) was in the reach of a list")
		}
	case opUpdate:
		need(r.has("update.ok"), "update succeeded in binding")
		need(r.has("update.cross.scope", "update.cross.tenant"), "update of a memory outside the binding")
		need(r.has("update.source.refused"), "an update of a memory whose source the key may not claim was refused")
		need(r.has("update.granted"), "an agent key granted source user updated a user's memory", aimGrantedUpdate)
		need(r.has("user.update.ok"), "a user key updated", aimUserUpdate)
	case opRevoke:
		need(r.has("revoke.ok"), "revoke succeeded in binding")
		need(r.has("revoke.cross.scope", "revoke.cross.tenant"), "revoke of a memory outside the binding")
		need(r.has("restricted.hidden"), "an agent key naming a restricted memory in its binding was answered as for a missing one", aimRestrictedHidden)
		need(r.has("agentbound.target.wide"), "an agent-bound key writing a principal-wide memory was answered as for a missing one", aimAgentBoundWide)
	case opApprove:
		need(r.has("approve.ok"), "approve succeeded in binding")
		need(r.has("approve.cross.scope", "approve.cross.tenant"), "approve of a memory outside the binding")
		need(r.has("approve.stale.refused"), "an approve naming a stale version was a conflict")
		need(r.has("approve.unversioned"), "an approve naming no version was refused")
	case opExport:
		need(r.has("export.nonempty"), "an export returned memories")
	case opForget:
		need(r.has("forget.erased"), "a forget erased memories")
		need(r.has("partition.reset"), "a change feed behind a forget was reset and reloaded")
	case opImport:
		need(r.has("import.ok"), "an import stored memories")
		need(r.has("import.refused"), "an import naming another tenant was refused")
	default: // the operations on one id
		need(r.has(name+".ok"), name+" succeeded in binding")
		need(r.has(name+".cross.scope", name+".cross.tenant"), name+" of a memory outside the binding")
	}
	return out
}

// maxTopUp bounds the extra operations spent on one operation's controls.
const maxTopUp = 200

// topUp runs extra operations aimed at each operation whose controls the
// random sequence did not reach (rare at defaultOps; the rates are tuned
// for it), so that a CI run never passes without them nor fails for want
// of luck: the operation and the roles that may perform it, and, taking
// the missing controls in turn, the keys, requests and targets that can
// reach each (its aim). They are checked like every other operation.
func (r *run) topUp() {
	for _, op := range r.surf.ops {
		var roles []memgate.Role
		for _, role := range memgate.Roles {
			if allows(role, op) {
				roles = append(roles, role)
			}
		}
		r.roles, r.focus = roles, []opKind{op}
		for n := 0; n < maxTopUp; n++ {
			ms := r.missing(op)
			if len(ms) == 0 {
				break
			}
			r.aim = ms[n%len(ms)].aim
			if r.aim != nil && r.aim.stock != nil {
				r.aim.stock(r)
			}
			r.step++
			r.extra++
			r.one()
		}
	}
	r.roles, r.focus, r.aim = nil, nil, nil
}

// controls fails the run when a populated control was not reached.
func (r *run) controls() {
	var missing []string
	for _, op := range r.surf.ops {
		for _, c := range r.missing(op) {
			missing = append(missing, c.what)
		}
	}
	if !r.has("overreach") {
		missing = append(missing, "a request naming something outside its key was refused")
	}
	if !r.has("ghost.compared") {
		missing = append(missing, "a foreign id compared with a missing one")
	}
	crossTenant := false
	for k, n := range r.counts {
		if strings.HasSuffix(k, ".cross.tenant") && n > 0 {
			crossTenant = true
		}
	}
	if !crossTenant {
		missing = append(missing, "an operation on another tenant's memory")
	}
	if len(missing) == 0 {
		return
	}
	if r.ops < minControlOps {
		r.t.Logf("controls not reached in %d operations (required from %d): %s", r.ops, minControlOps, strings.Join(missing, "; "))
		return
	}
	r.t.Errorf("populated controls not reached in %d operations and %d aimed ones (seed %d), so the run proves little: %s\n  replay: %s",
		r.ops, r.extra, r.seed, strings.Join(missing, "; "), r.replay)
}
