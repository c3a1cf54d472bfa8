package index

import (
	"math/rand/v2"
	"testing"
)

// TestSlotMapIsAMap holds slotMap to a Go map over steps of every size,
// reusing one table as a search's scratch does: slots clustered and
// spread, repeats, and slots far past the table's size.
func TestSlotMapIsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m slotMap
	for step, n := range []int{0, 1, 7, 8, 9, 300, 2, 5000, 40, 1} {
		m.reset(n)
		want := map[int32]int32{}
		spread := int32(1 + rng.IntN(1<<20))
		for len(want) < n {
			sl := rng.Int32N(spread)
			if step%2 == 0 {
				sl = rng.Int32N(int32(2*n + 1)) // dense: neighbouring slots
			}
			v := rng.Int32()
			_, had := want[sl]
			if added := m.add(sl, v); added == had {
				t.Fatalf("step %d: add(%d) = %v, the map had it: %v", step, sl, added, had)
			}
			if !had {
				want[sl] = v
			}
		}
		for sl, v := range want {
			if got, ok := m.get(sl); !ok || got != v {
				t.Fatalf("step %d: get(%d) = %d, %v; want %d, true", step, sl, got, ok, v)
			}
		}
		// The control: slots never added are absent, the table being full
		// to its bound.
		for range 1000 {
			sl := rng.Int32N(1 << 30)
			if _, had := want[sl]; had {
				continue
			}
			if _, ok := m.get(sl); ok {
				t.Fatalf("step %d: get(%d) found a slot never added", step, sl)
			}
		}
	}
}
