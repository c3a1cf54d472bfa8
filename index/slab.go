package index

import (
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Full row chunks in huge pages
//
// A full row chunk (chunkRows rows, a few MB), and every chunk after a
// partition's first, is not allocated on the Go heap but as a block of a
// slab: memory mapped apart, in regions aligned to 2 MB that the kernel
// is advised to back with huge pages (slab_linux.go). A small partition's
// one chunk stays on the heap.
// A cold load writes a partition's vectors into memory the process has
// never touched, and each 4 kB page faults on its first write. On the
// virtual machines memgate runs on a fault costs 5–12 µs, so the 25 MB of
// a 10k-row partition spent 40–80 ms faulting: most of a cold recall, and
// its tail. In huge pages the same memory faults a dozen times. The Go heap
// cannot be asked for that: the runtime maps its arenas without advice,
// and kernels set to grant huge pages only when advised give it none.
//
// A block holds numbers only (no Go pointers), so the collector never
// scans it. It is owned by its handle (slabRef), which the chunk keeps; it
// returns to the slab once the handle is unreachable (runtime.AddCleanup).
// Every reader of a chunk's arrays holds the partition for as long as it
// reads them (searches, writes and the trainers run under its lock and
// reach the arrays through it), so no array is read after its handle dies.
// A block is zeroed when it returns. Free blocks are reused by the next
// chunk of their size; once the free blocks pass slabKeepBytes, the
// regions whose blocks are all free are unmapped, so the memory a dropped
// partition held goes back to the system, apart from a bounded reserve
// for the next load.

// slabRegionBytes is about the size of a region: as many blocks as fit in
// it, or one.
const slabRegionBytes = 32 << 20

// hugePageBytes is the alignment of a region: the size of a huge page.
const hugePageBytes = 2 << 20

// slabKeepBytes bounds the free blocks kept mapped for the next load.
const slabKeepBytes = 64 << 20

// slabBlock is a block of a region.
type slabBlock struct {
	base unsafe.Pointer // outside the Go heap
	reg  *slabRegion
}

// slabRef owns a block until it is unreachable.
type slabRef struct{ b slabBlock }

// slabRegion is one mapping, cut into blocks of one size from its start.
type slabRegion struct {
	mem  []byte // the aligned part of the mapping
	raw  []byte // the whole mapping, to unmap
	next int    // bytes cut so far
	live int    // blocks in use
	size int    // of its blocks
}

// slab hands out blocks of any size, in regions of blocks of one size.
type slab struct {
	mu        sync.Mutex
	free      map[int][]slabBlock  // by block size
	cur       map[int]*slabRegion  // the region being cut, by block size
	freeBytes int                  // in free blocks
	handed    int64                // bytes of every block handed out, for tests
	regions   map[*slabRegion]bool // mapped
}

// slabs is the process's slab.
var slabs = newSlab()

func newSlab() *slab {
	return &slab{free: map[int][]slabBlock{}, cur: map[int]*slabRegion{}, regions: map[*slabRegion]bool{}}
}

// alloc returns a block of size bytes, or nil if none can be mapped (or
// the system has no such mappings): the caller allocates on the heap.
func (s *slab) alloc(size int) *slabRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b slabBlock
	if f := s.free[size]; len(f) > 0 {
		b = f[len(f)-1]
		s.free[size] = f[:len(f)-1]
		s.freeBytes -= size
	} else {
		r := s.cur[size]
		if r == nil || r.next+size > len(r.mem) {
			n := max(1, slabRegionBytes/size) // blocks in the region
			raw, mem, err := mapHuge(n * size)
			if err != nil {
				return nil
			}
			r = &slabRegion{mem: mem, raw: raw, size: size}
			s.cur[size], s.regions[r] = r, true
		}
		b = slabBlock{base: unsafe.Pointer(&r.mem[r.next]), reg: r}
		r.next += size
	}
	b.reg.live++
	s.handed += int64(size)
	ref := &slabRef{b}
	runtime.AddCleanup(ref, s.release, b)
	return ref
}

// release takes back a block whose handle died, zeroed: what a partition
// held is not left in memory for as long as the block is free, and a
// reused block starts as a new one.
func (s *slab) release(b slabBlock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := b.reg
	clear(unsafe.Slice((*byte)(b.base), r.size))
	r.live--
	s.free[r.size] = append(s.free[r.size], b)
	s.freeBytes += r.size
	if s.freeBytes <= slabKeepBytes {
		return
	}
	// The free blocks are more than the reserve: give back to the system
	// the regions whose blocks are all free, apart from those still being
	// cut.
	for g := range s.regions {
		if s.freeBytes <= slabKeepBytes {
			break
		}
		if g.live > 0 || s.cur[g.size] == g {
			continue
		}
		s.free[g.size] = slices.DeleteFunc(s.free[g.size], func(f slabBlock) bool { return f.reg == g })
		s.freeBytes -= g.next
		delete(s.regions, g)
		unmap(g.raw)
	}
}

// stats returns the regions mapped, the bytes in free blocks and the bytes
// of every block handed out so far.
func (s *slab) stats() (regions, freeBytes int, handed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.regions), s.freeBytes, s.handed
}

// align64 rounds n up to a multiple of 64 (a cache line).
func align64(n int) int { return (n + 63) &^ 63 }

// chunkBytes is the size of the block holding a chunk of n rows.
func chunkBytes(n, dim, stride int) int {
	return align64(8*n) + align64(4*n*dim) + 3*align64(4*n) + align64(n*stride)
}

// carve points c's arrays at the block ref (of chunkBytes(n, dim, stride)
// bytes), with capacity n rows, copying the rows c holds.
func (c *rowChunk) carve(ref *slabRef, n, dim, stride int) {
	base := ref.b.base
	off := 0
	cut := func(bytes int) unsafe.Pointer {
		p := unsafe.Add(base, off)
		off += align64(bytes)
		return p
	}
	rows := c.rows()
	norms := unsafe.Slice((*float64)(cut(8*n)), n)[:rows]
	vecs := unsafe.Slice((*float32)(cut(4*n*dim)), n*dim)[:rows*dim]
	scales := unsafe.Slice((*float32)(cut(4*n)), n)[:rows]
	resid := unsafe.Slice((*float32)(cut(4*n)), n)[:rows]
	rowSlot := unsafe.Slice((*int32)(cut(4*n)), n)[:rows]
	codes := unsafe.Slice((*int8)(cut(n*stride)), n*stride)[:len(c.codes)]
	copy(norms, c.norms)
	copy(vecs, c.vecs)
	copy(scales, c.scales)
	copy(resid, c.resid)
	copy(rowSlot, c.rowSlot)
	copy(codes, c.codes)
	c.norms, c.vecs, c.scales, c.resid, c.rowSlot, c.codes = norms, vecs, scales, resid, rowSlot, codes
	c.mem = ref
}
