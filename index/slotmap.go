package index

import "math/bits"

// slotMap maps slots to int32 values for one step of one search: an
// open-addressing table sized to what the step puts in it, so that it
// costs O(n) for n slots, whatever the partition's size (a sort of the n
// slots, which it replaces, took 4 % of a recall's CPU in
// BenchmarkRecallCPU/load-1k), and a table sized to the partition would
// cost 8 bytes a slot in every pooled scratch.
type slotMap struct {
	keys  []int32 // slot+1; 0 is empty
	vals  []int32
	shift uint8 // 32 - log2(len(keys)): a hash's top bits index the table
}

// probeTableSize is the size of an open-addressing table (slotMap,
// qtable) for up to n keys: a power of two, at least twice n and 16.
func probeTableSize(n int) int {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return size
}

// reset empties m and sizes it for up to n slots.
func (m *slotMap) reset(n int) {
	size := probeTableSize(n)
	if cap(m.keys) < size {
		m.keys, m.vals = make([]int32, size), make([]int32, size)
	} else {
		m.keys, m.vals = m.keys[:size], m.vals[:size]
		clear(m.keys)
	}
	m.shift = uint8(32 - bits.TrailingZeros(uint(size)))
}

// find returns the position of slot sl in m: its entry, or the empty one
// where it would go.
func (m *slotMap) find(sl int32) uint32 {
	mask := uint32(len(m.keys) - 1)
	i := (uint32(sl) * 0x9e3779b1) >> m.shift
	for m.keys[i] != 0 && m.keys[i] != sl+1 {
		i = (i + 1) & mask
	}
	return i
}

// get returns the value of slot sl, and whether m holds sl.
func (m *slotMap) get(sl int32) (int32, bool) {
	i := m.find(sl)
	return m.vals[i], m.keys[i] != 0
}

// add sets the value of sl to v unless m holds sl already, and reports
// whether it did. At most the n slots reset sized m for may be added.
func (m *slotMap) add(sl, v int32) bool {
	i := m.find(sl)
	if m.keys[i] != 0 {
		return false
	}
	m.keys[i], m.vals[i] = sl+1, v
	return true
}
