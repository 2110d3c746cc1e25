//go:build linux

package osx

import (
	"math"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the x86-64 and arm64 transparent huge page size.
const hugePageSize = 2 << 20

// hugeBuffer is anonMemory for buffers of half a huge page or more;
// smaller ones, and a failed mapping, are left to the Go heap (false).
func hugeBuffer(n int) ([]byte, func(), bool) {
	if n < hugePageSize/2 {
		return nil, nil, false
	}
	b, free, err := anonMemory(n)
	return b, free, err == nil
}

// anonMemory maps n bytes of zeroed anonymous memory rounded up to whole
// huge pages, starting on a huge page boundary (one huge page more is
// mapped to find it), and advises MADV_HUGEPAGE, so the kernel may back it
// with 2 MiB pages. A mapping the kernel refuses is an error (no Go heap
// fallback: a failed heap allocation of that size would be fatal).
func anonMemory(n int) ([]byte, func(), error) {
	if n <= 0 || n > math.MaxInt-2*hugePageSize {
		return nil, nil, unix.EINVAL
	}
	size := (n + hugePageSize - 1) &^ (hugePageSize - 1)
	m, err := unix.Mmap(-1, 0, size+hugePageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(m))) % hugePageSize); r != 0 {
		off = hugePageSize - r
	}
	_ = unix.Madvise(m[off:off+size], unix.MADV_HUGEPAGE) // advice only
	return m[off : off+n : off+n], func() { _ = unix.Munmap(m) }, nil
}
