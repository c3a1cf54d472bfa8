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
// take about 25 s of CPU with -race (the two backends run side by side on
// two cores). A long run for the record passes a larger -isolation.ops.
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
	// listActive: a list without a status shows active memories only.
	listActive bool
	// recallKinds, restricted: recall takes a kinds filter; memories can be
	// remembered restricted and recalled with include_restricted.
	recallKinds, restricted bool
	// tenantWide: an admin key may name no principal on list and export.
	tenantWide bool
	// roleRefusals: an operation the role may not perform can be asked
	// (MCP does not even list such tools).
	roleRefusals bool
	// idempotency: remember takes an idempotency key.
	idempotency bool
	sources     []memgate.Source
	driver      func(*world) driver
}

// writers are the sources remember names, the unverified ones weighted.
var writers = []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceAssistant, memgate.SourceTool, memgate.SourceVerifiedTool, memgate.SourceSystem}

var everyOp = []opKind{opRemember, opRecall, opList, opGet, opUpdate, opRevoke, opApprove, opDelete, opForget, opImport, opExport}

var surfaces = []surface{
	{
		name: "engine", ops: everyOp, recallKinds: true, restricted: true, tenantWide: true, roleRefusals: true, idempotency: true,
		sources: writers,
		driver:  func(w *world) driver { return &engineDriver{w: w} },
	},
	{
		name: "http", ops: everyOp, recallKinds: true, restricted: true, tenantWide: true, roleRefusals: true, idempotency: true,
		sources: writers,
		driver:  func(w *world) driver { return newHTTPDriver(w) },
	},
	{
		name: "mcp", ops: []opKind{opRemember, opRecall, opList, opRevoke, opForget}, partial: true, listActive: true, idempotency: true,
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

	step    int
	extra   int // operations aimed at controls after the random ones
	desc    string
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

// missing returns the populated controls op has not reached: the checks
// can only fail if operations reached memories, so a run must show that
// in-binding operations returned and changed memories, and that attempts
// outside the binding were made, for every operation the surface offers.
func (r *run) missing(op opKind) []string {
	var out []string
	need := func(ok bool, what string) {
		if !ok {
			out = append(out, what)
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
	case opRecall:
		need(r.has("recall.nonempty"), "a recall returned memories")
	case opList:
		need(r.has("list.nonempty"), "a list returned memories")
	case opExport:
		need(r.has("export.nonempty"), "an export returned memories")
	case opForget:
		need(r.has("forget.erased"), "a forget erased memories")
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
// of luck. They are checked like every other operation.
func (r *run) topUp() {
	for _, op := range r.surf.ops {
		var roles []memgate.Role
		for _, role := range memgate.Roles {
			if allows(role, op) {
				roles = append(roles, role)
			}
		}
		r.roles, r.focus = roles, []opKind{op}
		for n := 0; n < maxTopUp && len(r.missing(op)) > 0; n++ {
			r.step++
			r.extra++
			r.one()
		}
	}
	r.roles, r.focus = nil, nil
}

// controls fails the run when a populated control was not reached.
func (r *run) controls() {
	var missing []string
	for _, op := range r.surf.ops {
		missing = append(missing, r.missing(op)...)
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
