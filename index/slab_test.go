package index

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/memgate/memgate"
)

// requireSlab skips a test of the slab where it maps nothing (outside
// Linux), and fails it in CI, which must run where it does.
func requireSlab(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "linux" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("the slab maps memory on Linux only: CI must run where it is tested")
	}
	t.Skip("the slab maps memory on Linux only")
}

// collectUntil runs the collector until cond holds (a block returns to
// the slab one cleanup after its handle dies), or fails after 10 s.
func collectUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s of collections: %s", what)
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// slabPartition builds a partition of n random rows of dimension dim.
func slabPartition(t *testing.T, n, dim int, seed uint64) (*Partition, [][]float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	p := NewPartition(Config{})
	vecs := make([][]float32, n)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = v
		if err := p.Upsert(Entry{ID: fmt.Sprintf("m%05d", i), Vector: v, Status: memgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	return p, vecs
}

// TestFullChunksLiveInTheSlab: a partition's full chunks, and every chunk
// after its first, are blocks of the slab, in memory advised to be backed
// by huge pages; a small partition's one chunk stays on the heap (the
// control). Their blocks return to the slab when the partition is
// unreachable, not before, and the next partition reuses them.
func TestFullChunksLiveInTheSlab(t *testing.T) {
	requireSlab(t)
	const dim = 76 // a size of block no other test allocates
	small, _ := slabPartition(t, chunkRows/2, dim, 1)
	if small.chunks[0].mem != nil {
		t.Fatalf("a partition of %d rows has its chunk in the slab, want it on the heap", chunkRows/2)
	}
	p, vecs := slabPartition(t, 2*chunkRows+chunkRows/3, dim, 2)
	for i, c := range p.chunks {
		if c.mem == nil {
			t.Fatalf("chunk %d of %d (%d rows) is on the heap, want a block of the slab", i, len(p.chunks), c.rows())
		}
	}
	path := "/sys/kernel/mm/transparent_hugepage/enabled"
	if strings.Contains(readFile(t, path), "[never]") && os.Getenv("CI") != "" {
		t.Fatal("transparent huge pages are off on this machine: CI must run where the slab's advice is checked")
	}
	if !strings.Contains(readFile(t, path), "[never]") {
		addr := uintptr(unsafe.Pointer(&p.chunks[1].vecs[0]))
		if got := smapsField(t, addr, "THPeligible:"); got != "1" {
			t.Fatalf("a block's memory is not eligible for huge pages (THPeligible %q)", got)
		}
		// The control: the heap gets huge pages only where the kernel
		// gives them unadvised.
		heap := uintptr(unsafe.Pointer(&small.chunks[0].vecs[0]))
		if got := smapsField(t, heap, "THPeligible:"); strings.Contains(readFile(t, path), "[madvise]") && got != "0" {
			t.Fatalf("the heap chunk's memory: THPeligible %q, want 0 (the control)", got)
		}
	}
	// The rows read back from the blocks, and a search finds an exact row.
	for _, r := range []int{0, chunkRows - 1, chunkRows, 2 * chunkRows, p.rows - 1} {
		sl := p.slotOfRow(r)
		want := vecs[int(sl)]
		if got := p.vec(r); !slices.Equal(got, want) {
			t.Fatalf("row %d: the block holds another vector", r)
		}
	}
	res, err := p.Search(Query{Vector: vecs[chunkRows+7], K: 1, Filter: Filter{Now: time.Now()}})
	if err != nil || len(res.Candidates) == 0 || res.Candidates[0].ID != fmt.Sprintf("m%05d", chunkRows+7) {
		t.Fatalf("search of a row in a block: %+v, %v", res, err)
	}

	// Alive, its blocks stay its own: collections hand none back.
	own := make([]slabBlock, len(p.chunks))
	for i, c := range p.chunks {
		own[i] = c.mem.b
	}
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if n := slabs.freeOf(own); n > 0 {
		t.Fatalf("%d blocks of a live partition were handed back", n)
	}
	runtime.KeepAlive(p)
	p = nil
	collectUntil(t, "the blocks of an unreachable partition did not return to the slab", func() bool {
		return slabs.freeOf(own) == len(own)
	})
	if n := slabs.nonZero(own); n > 0 {
		t.Fatalf("%d bytes of the returned blocks are not zero", n)
	}
	size := chunkBytes(chunkRows, dim, alignStride(dim))
	regions, _, handed := slabs.stats()
	q, _ := slabPartition(t, 2*chunkRows, dim, 3)
	// Fewer regions may be mapped (an earlier test's blocks can return
	// meanwhile, and regions past the reserve go), never more; and every
	// block of the new partition is one the first gave back.
	if got, _, h := slabs.stats(); got > regions || h-handed != int64(len(q.chunks)*size) {
		t.Fatalf("a new partition mapped %d regions (had %d) for %d bytes of blocks, want the freed blocks reused", got, regions, h-handed)
	}
	for i, c := range q.chunks {
		if !slices.Contains(own, c.mem.b) {
			t.Fatalf("chunk %d of the new partition is a new block, want one of the %d freed", i, len(own))
		}
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(q)
}

// TestSlabGivesBackRegions: once the free blocks pass slabKeepBytes, the
// regions whose blocks are all free are unmapped; up to it they are kept
// for the next load (the control).
func TestSlabGivesBackRegions(t *testing.T) {
	requireSlab(t)
	s := newSlab()
	const size = 8 << 20 // four blocks a region; nothing is touched
	perRegion := slabRegionBytes / size
	hold := func(n int) []*slabRef {
		refs := make([]*slabRef, n)
		for i := range refs {
			if refs[i] = s.alloc(size); refs[i] == nil {
				t.Fatal("no block mapped")
			}
		}
		return refs
	}
	// Within the reserve: two regions' worth freed, both kept.
	refs := hold(2 * perRegion)
	if got, _, _ := s.stats(); got != 2 {
		t.Fatalf("%d blocks of %d bytes mapped %d regions, want 2", len(refs), size, got)
	}
	refs = nil
	collectUntil(t, "freed blocks did not return", func() bool { _, free, _ := s.stats(); return free == 2*perRegion*size })
	if got, _, _ := s.stats(); got != 2 {
		t.Fatalf("within the reserve, %d regions stay mapped, want 2", got)
	}
	// Past it: twenty regions' worth freed, all but the reserve's given back.
	refs = hold(20 * perRegion)
	regions, _, _ := s.stats()
	if regions != 20 {
		t.Fatalf("%d blocks mapped %d regions, want 20 (the 2 free reused)", len(refs), regions)
	}
	runtime.KeepAlive(refs)
	refs = nil
	collectUntil(t, "freed regions past the reserve stay mapped", func() bool {
		got, free, _ := s.stats()
		return got <= slabKeepBytes/slabRegionBytes+1 && free <= slabKeepBytes+slabRegionBytes
	})
}

// freeOf returns how many of bs are free blocks of s.
func (s *slab) freeOf(bs []slabBlock) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range bs {
		if slices.Contains(s.free[b.reg.size], b) {
			n++
		}
	}
	return n
}

// nonZero returns the bytes of the free blocks among bs that are not
// zero.
func (s *slab) nonZero(bs []slabBlock) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range bs {
		if !slices.Contains(s.free[b.reg.size], b) {
			continue // reused or unmapped since
		}
		for _, x := range unsafe.Slice((*byte)(b.base), b.reg.size) {
			if x != 0 {
				n++
			}
		}
	}
	return n
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// smapsField returns the value of field in /proc/self/smaps for the
// mapping holding addr, "" if none holds it.
func smapsField(t *testing.T, addr uintptr, field string) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, field) {
			return strings.TrimSpace(strings.TrimPrefix(line, field))
		}
	}
	return ""
}
