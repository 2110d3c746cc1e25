//go:build linux

package osx

import (
	"math"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the x86-64 and arm64 transparent huge page size.
const hugePageSize = 2 << 20

// hugeBuffer maps n bytes rounded up to whole huge pages, starting on a huge
// page boundary (one huge page more is mapped to find it), and advises
// MADV_HUGEPAGE. Buffers below half a huge page are left to the Go heap.
func hugeBuffer(n int) ([]byte, func(), bool) {
	if n < hugePageSize/2 || n > math.MaxInt-2*hugePageSize {
		return nil, nil, false
	}
	size := (n + hugePageSize - 1) &^ (hugePageSize - 1)
	m, err := unix.Mmap(-1, 0, size+hugePageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(m))) % hugePageSize); r != 0 {
		off = hugePageSize - r
	}
	_ = unix.Madvise(m[off:off+size], unix.MADV_HUGEPAGE) // advice only
	return m[off : off+n : off+n], func() { _ = unix.Munmap(m) }, true
}
