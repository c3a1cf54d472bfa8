package index

import (
	"syscall"
	"unsafe"
)

// mapHuge maps size bytes (rounded up to huge pages) of anonymous memory
// aligned to a huge page, advised to be backed by huge pages up to used
// bytes: the huge page that used ends in would be backed whole by the
// first write to it, so it, and what follows, is advised against. It
// returns the whole mapping (to unmap) and its aligned part. Nothing is
// touched: a page is backed on its first write.
func mapHuge(size, used int) (raw, mem []byte, err error) {
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
	whole := used &^ (hugePageBytes - 1)
	if whole > 0 {
		_ = syscall.Madvise(mem[:whole], syscall.MADV_HUGEPAGE)
	}
	if whole < size {
		_ = syscall.Madvise(mem[whole:], syscall.MADV_NOHUGEPAGE)
	}
	return raw, mem, nil
}

func unmap(raw []byte) { _ = syscall.Munmap(raw) }
