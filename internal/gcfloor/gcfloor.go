// Package gcfloor keeps the Go collector from running before the heap
// has grown by at least a floor of bytes since the last collection.
//
// Why: the collector's goal is the live heap times 1 + GOGC/100, so a
// small live heap is collected often, whatever the allocation rate. A
// memgate server's live heap is small (its index lives outside the heap:
// package index, slab.go), about 16 MB with a 10,000-memory partition
// loaded, and a recall allocates about 300 kB: at GOGC 100 the collector
// ran every 50 recalls or so. A floor of 64 MB served a median 6 % more
// recalls a second over HTTP (BENCHMARKS.md, "A floor under the Go heap"),
// for a bounded cost in memory: the heap grows by at most the floor, or by GOGC
// percent of the live heap where that is more.
//
// After each collection (noticed by a finalizer, which the runtime runs
// after the collection that finds its object unreachable) the percent is
// set so that the next goal is max(live·(1+GOGC/100), live+floor). It
// never goes below the GOGC the process started with, and a memory limit
// (GOMEMLIMIT) still bounds the heap as the runtime enforces it.
//
// It must never be started where the operator chose GOGC: the caller
// decides (memgate serve does not when $GOGC is set).
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The metrics adjust reads: the heap the last collection found live, the
// roots it scanned (which the runtime counts in the goal too), and the
// percent in force.
const (
	liveMetric    = "/gc/heap/live:bytes"
	globalsMetric = "/gc/scan/globals:bytes"
	stacksMetric  = "/gc/scan/stack:bytes"
	gogcMetric    = "/gc/gogc:percent"
)

// heapMinimum is the runtime's least goal at GOGC 100, which it scales by
// GOGC/100 (runtime/mgcpacer.go, defaultHeapMinimum): a percent above
// (live+floor)/heapMinimum·100 would raise the goal past live+floor.
const heapMinimum = 4 << 20

// maxPercent bounds the percent the floor sets: a live heap of a few kB
// (a process that has just started) would otherwise ask for millions.
const maxPercent = 10000

// running guards against two floors at once: the percent is the
// process's.
var running atomic.Bool

// Start keeps the floor until the returned stop is called, which
// restores the percent found at Start. It returns a stop that does
// nothing when floor is not positive, when the collector is off
// (GOGC=off), or when a floor is already kept.
func Start(floor int64) (stop func()) {
	if floor <= 0 || !running.CompareAndSwap(false, true) {
		return func() {}
	}
	base := GOGC()
	if base < 0 {
		running.Store(false)
		return func() {}
	}
	k := &keeper{floor: uint64(floor), base: base, percent: base,
		sample: []metrics.Sample{{Name: liveMetric}, {Name: globalsMetric}, {Name: stacksMetric}}}
	k.adjust()
	k.arm()
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			k.stopped = true
			debug.SetGCPercent(k.base)
			k.mu.Unlock()
			running.Store(false)
		})
	}
}

type keeper struct {
	floor uint64
	base  int

	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
	percent int // the percent last set
}

// sentinel is the object whose finalizer runs after each collection. It
// holds a pointer so that it is never a tiny allocation, whose finalizer
// may never run.
type sentinel struct{ k *keeper }

// arm allocates the next sentinel and drops it: the next collection
// finds it unreachable and runs its finalizer, which adjusts and arms
// again.
func (k *keeper) arm() {
	s := &sentinel{k: k}
	runtime.SetFinalizer(s, func(s *sentinel) {
		if s.k.adjust() {
			s.k.arm()
		}
	})
}

// adjust sets the percent for the live heap the last collection found;
// it reports false once stopped.
func (k *keeper) adjust() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return false
	}
	metrics.Read(k.sample)
	var n [3]uint64
	for i, x := range k.sample {
		if x.Value.Kind() == metrics.KindUint64 {
			n[i] = x.Value.Uint64()
		}
	}
	p := percent(n[0], n[1]+n[2], k.floor, k.base)
	if p != k.percent {
		debug.SetGCPercent(p)
		k.percent = p
	}
	return true
}

// GOGC returns the percent in force, -1 when the collector is off.
func GOGC() int {
	s := []metrics.Sample{{Name: gogcMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	if p := s[0].Value.Uint64(); p <= math.MaxInt32 {
		return int(p)
	}
	return -1 // off reads as the largest uint64
}

// percent is the GOGC that makes the goal of a live heap of live bytes,
// with roots bytes of stacks and globals, about live+floor: at least
// that, never below base, and not more than the runtime's least goal
// (heapMinimum, scaled by the percent) allows. Before the first
// collection has measured the heap (live 0) it is base.
func percent(live, roots, floor uint64, base int) int {
	if live == 0 {
		return base
	}
	scanned := live + roots
	p := (floor*100 + scanned - 1) / scanned // ceil(floor/scanned·100)
	p = min(p, (live+floor)*100/heapMinimum, maxPercent)
	return max(base, int(p))
}
