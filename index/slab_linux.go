package index

import (
	"syscall"
	"unsafe"
)

// mapHuge maps size bytes of anonymous memory, rounded up to huge pages
// and aligned to one. The huge pages size fills are advised to be backed
// by huge pages; the one size ends in, partly used, would be backed whole
// by its first write, so it is advised against. It returns the whole
// mapping (to unmap) and its aligned part. Nothing is touched: a page is
// backed on its first write.
func mapHuge(size int) (raw, mem []byte, err error) {
	whole := size &^ (hugePageBytes - 1)
	size = (size + hugePageBytes - 1) &^ (hugePageBytes - 1)
	raw, err = syscall.Mmap(-1, 0, size+hugePageBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	if a := uintptr(unsafe.Pointer(&raw[0])) % hugePageBytes; a != 0 {
		off = hugePageBytes - int(a)
	}
	mem = raw[off : off+size : off+size]
	// Advice only: where the kernel grants no huge pages, the region is
	// ordinary memory.
	if whole > 0 {
		_ = syscall.Madvise(mem[:whole], syscall.MADV_HUGEPAGE)
	}
	if whole < size {
		_ = syscall.Madvise(mem[whole:], syscall.MADV_NOHUGEPAGE)
	}
	return raw, mem, nil
}

func unmap(raw []byte) { _ = syscall.Munmap(raw) }
