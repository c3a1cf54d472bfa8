package index

import (
	"hash/maphash"
	"slices"
	"unsafe"
)

// Storage without growth copies
//
// A partition's vectors and entries live in chunks of fixed capacity
// (chunkRows rows, chunkSlots slots) rather than in one slice per field
// that append doubles: growing one big slice keeps the old and the new
// array alive together (2.25× at Go's 1.25 growth factor, more until the
// collector runs), which made a partition's peak memory 2.5–3.6 times its
// steady size. The first chunk grows by 1.5× up to its capacity, so a small
// partition stays small; every later chunk is allocated whole, so growing
// a large partition makes no garbage at all, and its spare capacity is
// bounded by one chunk (2 MB for 384 dimensions). A partition loaded in
// bulk gives back the spare capacity of its last chunk (trim).

// chunkRows is the capacity of a row chunk: a multiple of blockRows, so no
// block of the scan straddles two chunks.
const chunkRows = 4 * blockRows

// chunkSlots is the capacity of a slot chunk.
const chunkSlots = 1024

// rowChunk holds rows [i·chunkRows, (i+1)·chunkRows) of a partition: the
// vectors as given, their float64 norms, the quantized directions (int8
// codes, scale, residual bound) and the slot of each row.
type rowChunk struct {
	vecs    []float32 // rows × dim
	norms   []float64
	codes   []int8 // rows × stride
	scales  []float32
	resid   []float32
	rowSlot []int32
	// mem owns the block the arrays are in, for a full chunk (slab.go);
	// nil when they are on the heap.
	mem *slabRef
}

// rowBytesOf is the memory of one row of capacity: exact, these are flat
// arrays.
func rowBytesOf(dim, stride int) int64 { return int64(4*dim + stride + 8 + 4 + 4 + 4) }

func (c *rowChunk) rows() int { return len(c.rowSlot) }

// grow makes room for one more row in c, the chunk of the given index,
// returning the change in capacity (rows). A load that expects rows (see
// Partition.reserve) sizes each chunk for the expected rows it will hold,
// so that a count that holds copies nothing; past it (or without one) the
// first chunk grows by half its capacity, or four times over in a bulk
// load, which trims it after (trim): growing it by halves to a full chunk
// allocated and copied three chunks' worth, a tenth of a 10k load's
// allocations.
func (c *rowChunk) grow(index, dim, stride int, bulk bool, expect int) int {
	old := cap(c.rowSlot)
	if len(c.rowSlot) < old {
		return 0
	}
	n := chunkRows
	if index == 0 {
		step := old / 2
		if bulk {
			step = 3 * old
		}
		n = min(chunkRows, max(16, old+step))
	}
	if want := expect - index*chunkRows; want > old {
		n = min(chunkRows, want)
	}
	// A full chunk, and any chunk after the first, is a block of the slab
	// where one can be had (slab.go): the last chunk of a load may hold
	// fewer rows than a block, but only the first chunk of a small
	// partition is kept small.
	if n == chunkRows || index > 0 {
		if ref := slabs.alloc(chunkBytes(chunkRows, dim, stride)); ref != nil {
			c.carve(ref, chunkRows, dim, stride)
			return chunkRows - old
		}
	}
	c.resize(n, dim, stride)
	return n - old
}

// resize reallocates c's arrays on the heap with capacity n rows
// (n ≥ c.rows()).
func (c *rowChunk) resize(n, dim, stride int) {
	c.vecs = append(make([]float32, 0, n*dim), c.vecs...)
	c.norms = append(make([]float64, 0, n), c.norms...)
	c.codes = append(make([]int8, 0, n*stride), c.codes...)
	c.scales = append(make([]float32, 0, n), c.scales...)
	c.resid = append(make([]float32, 0, n), c.resid...)
	c.rowSlot = append(make([]int32, 0, n), c.rowSlot...)
	c.mem = nil // after the copies: the block may be reused once its handle dies
}

// row returns the chunk and the offset of row r.
func (p *Partition) row(r int) (*rowChunk, int) {
	return &p.chunks[r/chunkRows], r % chunkRows
}

// vec returns the vector of row r.
func (p *Partition) vec(r int) []float32 {
	c, i := p.row(r)
	return c.vecs[i*p.dim : (i+1)*p.dim : (i+1)*p.dim]
}

// normOf returns the norm of row r.
func (p *Partition) normOf(r int) float64 {
	c, i := p.row(r)
	return c.norms[i]
}

// slotOfRow returns the slot of row r.
func (p *Partition) slotOfRow(r int) int32 {
	c, i := p.row(r)
	return c.rowSlot[i]
}

// slot returns the entry at slot sl.
func (p *Partition) sl(sl int32) *slot {
	return &p.slotChunks[sl/chunkSlots][sl%chunkSlots]
}

// slotSize is the memory of one slot of capacity.
const slotSize = int64(unsafe.Sizeof(slot{}))

// newSlot appends an empty slot and returns its number and the change in
// slot capacity.
func (p *Partition) newSlot() (int32, int) {
	sl := int32(p.nslots)
	ci := p.nslots / chunkSlots
	if ci == len(p.slotChunks) {
		p.slotChunks = append(p.slotChunks, nil)
	}
	c := &p.slotChunks[ci]
	grown := 0
	if len(*c) == cap(*c) {
		old := cap(*c)
		n := chunkSlots
		if ci == 0 {
			n = min(chunkSlots, max(16, old+old/2))
		}
		if want := p.expect - ci*chunkSlots; want > old {
			n = min(chunkSlots, want)
		}
		*c = append(make([]slot, 0, n), *c...)
		grown = n - old
	}
	*c = append(*c, slot{})
	p.nslots++
	if len(p.docLen) == cap(p.docLen) {
		old := cap(p.docLen)
		p.docLen = slices.Grow(p.docLen, max(1, p.expect-len(p.docLen)))
		p.bytes += 4 * int64(cap(p.docLen)-old)
	}
	p.docLen = append(p.docLen, 0)
	if len(p.idKey) == cap(p.idKey) {
		old := cap(p.idKey)
		p.idKey = slices.Grow(p.idKey, max(1, p.expect-len(p.idKey)))
		p.bytes += 8 * int64(cap(p.idKey)-old)
	}
	p.idKey = append(p.idKey, 0)
	return sl, grown
}

// reserve sizes the partition, empty and loading, for n entries with
// vectors: the id table and the lengths at once, the slot and row chunks
// as they are needed (grow, newSlot), so that a load of n entries copies
// nothing and has nothing to trim. A load of more entries grows past n as
// any load does; one of fewer trims what it did not use (trim). n is
// clamped so that what is allocated at once (about 15 bytes an entry) is a
// few percent of the budget at most: a wrong count costs little, and
// cannot make a partition that fits look too large.
func (p *Partition) reserve(n int) {
	if p.nslots > 0 || !p.loading {
		return
	}
	n = int(min(int64(n), p.cfg.MaxBytes/(4*slotSize)))
	if n <= 0 {
		return
	}
	p.expect = n
	if cells := tableCells(n); cells > len(p.ids.cells) {
		p.ids.seed = maphash.MakeSeed()
		p.bytes += 4 * int64(cells-len(p.ids.cells))
		p.ids.cells = make([]int32, cells)
	}
}

// tableCells is the size of an id table for n ids: a power of two at
// which n ids are a load of at most 3/4.
func tableCells(n int) int {
	cells := 16
	for 3*cells < 4*n {
		cells *= 2
	}
	return cells
}

// trim gives back the spare capacity of the last row and slot chunks, after
// a bulk load.
func (p *Partition) trim() {
	p.loading, p.refSlab, p.idSlab, p.expect = false, nil, nil, 0
	if n := len(p.chunks); n > 0 {
		c := &p.chunks[n-1]
		// A block is not trimmed: its memory is the slab's.
		if spare := cap(c.rowSlot) - c.rows(); spare > 0 && c.mem == nil {
			c.resize(c.rows(), p.dim, p.stride)
			p.bytes -= int64(spare) * rowBytesOf(p.dim, p.stride)
		}
	}
	if n := len(p.slotChunks); n > 0 {
		c := &p.slotChunks[n-1]
		if spare := cap(*c) - len(*c); spare > 0 {
			*c = append(make([]slot, 0, len(*c)), *c...)
			p.bytes -= int64(spare) * slotSize
		}
	}
	if spare := cap(p.docLen) - len(p.docLen); spare > 0 {
		p.docLen = slices.Clip(slices.Clone(p.docLen))
		p.bytes -= 4 * int64(spare)
	}
	if spare := cap(p.idKey) - len(p.idKey); spare > 0 {
		p.idKey = slices.Clip(slices.Clone(p.idKey))
		p.bytes -= 8 * int64(spare)
	}
	// An id table made for a count far above what came (reserve) is made
	// again at the size of what did.
	if t := &p.ids; len(t.cells) > 16 && len(t.cells) > 4*tableCells(t.n) {
		old := t.cells
		t.cells = make([]int32, tableCells(t.n))
		p.bytes -= 4 * int64(len(old)-len(t.cells))
		for _, c := range old {
			if c != 0 {
				t.place(p.sl(c-1).id, c)
			}
		}
	}
}

// idTable maps ids to slots: open addressing with linear probing over the
// slots themselves (an id is read from its slot), 4 bytes a cell at a load
// of at most 3/4, against about 40 bytes an entry for a map[string]int32.
type idTable struct {
	seed  maphash.Seed
	cells []int32 // slot+1; 0 is empty
	n     int
}

func (t *idTable) home(id string) int {
	return int(maphash.String(t.seed, id) & uint64(len(t.cells)-1))
}

// find returns the slot of id.
func (p *Partition) findID(id string) (int32, bool) {
	t := &p.ids
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.cells) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		c := t.cells[i]
		if c == 0 {
			return 0, false
		}
		if p.sl(c-1).id == id {
			return c - 1, true
		}
	}
}

// insertID records that id (not present) is at slot sl, and returns the
// change in the table's memory.
func (p *Partition) insertID(id string, sl int32) int64 {
	t := &p.ids
	var grown int64
	if 4*(t.n+1) > 3*len(t.cells) {
		old := t.cells
		if len(old) == 0 {
			t.seed = maphash.MakeSeed()
		}
		t.cells = make([]int32, max(16, 2*len(old)))
		grown = 4 * int64(len(t.cells)-len(old))
		for _, c := range old {
			if c != 0 {
				t.place(p.sl(c-1).id, c)
			}
		}
	}
	t.place(id, sl+1)
	t.n++
	return grown
}

func (t *idTable) place(id string, c int32) {
	mask := len(t.cells) - 1
	i := t.home(id)
	for t.cells[i] != 0 {
		i = (i + 1) & mask
	}
	t.cells[i] = c
}

// deleteID removes id, which is at slot sl; the slot still holds the id.
// Backward-shift deletion keeps every probe sequence unbroken, with no
// tombstones.
func (p *Partition) deleteID(id string, sl int32) {
	t := &p.ids
	mask := len(t.cells) - 1
	i := t.home(id)
	for t.cells[i] != sl+1 {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.cells[j] != 0; j = (j + 1) & mask {
		// The cell at j may move to the hole at i if its home is not in
		// (i, j] (cyclically).
		h := t.home(p.sl(t.cells[j] - 1).id)
		if (j-h)&mask >= (j-i)&mask {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = 0
	t.n--
}
