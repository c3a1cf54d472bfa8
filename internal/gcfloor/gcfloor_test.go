package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name               string
		live, roots, floor uint64
		base, want         int
	}{
		{"a small heap gets the floor", 16 * mb, 0, 64 * mb, 100, 400},
		{"roots count in the goal", 14 * mb, 2 * mb, 64 * mb, 100, 400},
		{"rounded up", 48 * mb, 0, 64 * mb, 100, 134},
		{"the runtime's least goal bounds a small heap", 3 * mb, 0, 64 * mb, 100, 1675},
		{"the runtime's least goal bounds a tiny heap", 128 << 10, 200 << 10, 64 * mb, 100, 1603},
		{"a heap larger than the floor keeps GOGC", 256 * mb, 0, 64 * mb, 100, 100},
		{"never below the operator's percent", 16 * mb, 0, 64 * mb, 800, 800},
		{"bounded by maxPercent", 1 * mb, 0, 1 << 40, 100, maxPercent},
		{"nothing measured yet", 0, 0, 64 * mb, 100, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := percent(c.live, c.roots, c.floor, c.base); got != c.want {
				t.Fatalf("percent(%d, %d, %d, %d) = %d, want %d", c.live, c.roots, c.floor, c.base, got, c.want)
			}
		})
	}
}

// sink keeps the allocations from being optimized away.
var sink []byte

// collections allocates n bytes of garbage in 64 kB pieces, with little
// live, and returns how many collections ran meanwhile.
func collections(n int) uint32 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
	sink = nil
	runtime.ReadMemStats(&ms)
	return ms.NumGC - before
}

// TestFloorSpacesCollections allocates 512 MB of garbage with a live heap
// of a few MB: with a floor of 64 MB the collector runs about every 64 MB
// of it; without (the control) about every 4 MB, the runtime's least goal.
// Stopping restores the percent found at Start.
func TestFloorSpacesCollections(t *testing.T) {
	const total = 512 << 20
	base := GOGC()
	if base < 0 {
		t.Fatal("the collector is off in this test process")
	}
	without := collections(total)

	stop := Start(64 << 20)
	runtime.GC() // the finalizer adjusts after the collection
	runtime.GC()
	if p := GOGC(); p <= base {
		stop()
		t.Fatalf("GOGC %d with the floor, %d without: the floor set nothing", p, base)
	}
	if again := Start(1 << 30); GOGC() > maxPercent {
		t.Fatal("a second floor took over")
	} else {
		again()
	}
	with := collections(total)
	stop()
	t.Logf("collections for %d MB of garbage: %d without the floor, %d with 64 MB", total>>20, without, with)
	if with < total/(64<<20)/2 || with > total/(64<<20)+4 {
		t.Errorf("%d collections with a 64 MB floor for %d MB of garbage", with, total>>20)
	}
	if without < 4*with {
		t.Errorf("%d collections without the floor against %d with it: the control shows no difference", without, with)
	}
	if p := GOGC(); p != base {
		t.Fatalf("GOGC %d after stop, want %d", p, base)
	}
	// Stopped, the finalizer chain ends: later collections leave the
	// percent alone.
	debug.SetGCPercent(base + 1)
	runtime.GC()
	runtime.GC()
	if p := GOGC(); p != base+1 {
		t.Fatalf("GOGC %d after stop and two collections, want %d", p, base+1)
	}
	debug.SetGCPercent(base)
}

func TestStartDoesNothingWithoutAFloorOrACollector(t *testing.T) {
	base := GOGC()
	Start(0)()
	if p := GOGC(); p != base {
		t.Fatalf("Start(0) changed GOGC to %d", p)
	}
	debug.SetGCPercent(-1)
	defer debug.SetGCPercent(base)
	stop := Start(64 << 20)
	runtime.GC()
	if p := GOGC(); p != -1 {
		t.Fatalf("with the collector off, Start turned it on (GOGC %d)", p)
	}
	stop()
	// Control: with the collector on, the same floor sets a percent.
	debug.SetGCPercent(base)
	stop = Start(64 << 20)
	defer stop()
	runtime.GC()
	runtime.GC()
	if p := GOGC(); p <= base {
		t.Fatalf("GOGC %d with a floor of 64 MB over a test's heap", p)
	}
}
