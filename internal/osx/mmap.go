package osx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"
)

// ReadFallbackLimit is the largest file Map reads into memory when it cannot
// map it (256 MiB): enough for tokenizers, configs and tiny models; larger
// files fail with the mapping error instead of exhausting memory.
const ReadFallbackLimit = 256 << 20

// Mapping is a read-only view of a whole file: a memory map, or, where
// mapping is not possible, the file's bytes read into memory (see Map).
type Mapping struct {
	data   []byte
	mapped bool
	unmap  func() error
}

// Map returns a read-only view of the first size bytes of f (size is the
// file's size, from Stat). name is used in errors only. A size of zero, or
// one that does not fit in an int on this build, is an error naming name.
// The view stays valid after f is closed, until Mapping.Close.
func Map(f *os.File, size int64, name string) (*Mapping, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%s: cannot map an empty file", name)
	}
	n, err := Int(uint64(size), name)
	if err != nil {
		return nil, err
	}
	data, unmap, err := mmap(f, n)
	if err == nil {
		noteMapping(data, name)
		return &Mapping{data: data, mapped: true, unmap: unmap}, nil
	}
	if size > ReadFallbackLimit {
		return nil, fmt.Errorf("%s: cannot map its %d bytes into memory: %w", name, size, err)
	}
	return ReadAll(f, size, name)
}

// ReadAll is Map's fallback: it reads size bytes of f from offset 0 with
// ReadAt into a new buffer. Errors name name; a file shorter than size is
// io.ErrUnexpectedEOF.
func ReadAll(f *os.File, size int64, name string) (*Mapping, error) {
	n, err := Int(uint64(size), name)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return &Mapping{data: buf}, nil
}

// ErrNoMemory is wrapped by ReadIn's errors when the file does not fit in
// the memory the system reports available, or the memory cannot be had.
var ErrNoMemory = errors.New("not enough memory")

// ReadIn reads the first size bytes of f into anonymous memory (on Linux a
// mapping advised MADV_HUGEPAGE, so the bytes may sit in 2 MiB pages
// whatever the page cache made of the file) and returns them as a Mapping
// that is not mapped (Release does nothing; Close frees the memory). It is
// llama.cpp's --no-mmap: the weights' pages no longer depend on how the
// page cache holds the file. A size above the memory the system reports
// available (AvailableMemory: MemAvailable, and a cgroup's limit), or
// memory the kernel refuses to map, is an error wrapping ErrNoMemory and
// naming name before anything is read; a file shorter than size is
// io.ErrUnexpectedEOF.
func ReadIn(f *os.File, size int64, name string) (*Mapping, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%s: cannot read an empty file into memory", name)
	}
	n, err := Int(uint64(size), name)
	if err != nil {
		return nil, err
	}
	if avail, ok := availableMemory(); ok && uint64(size) > avail {
		return nil, fmt.Errorf("%s: its %s do not fit in the %s of available memory: %w", name, gib(uint64(size)), gib(avail), ErrNoMemory)
	}
	b, free, err := anonMemory(n)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot have %s of memory for it (%v): %w", name, gib(uint64(size)), err, ErrNoMemory)
	}
	if _, err := f.ReadAt(b, 0); err != nil {
		free()
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return &Mapping{data: b, unmap: func() error { free(); return nil }}, nil
}

// gib formats a byte count in GiB with two decimals (MiB below 1 GiB,
// bytes below 1 MiB).
func gib(b uint64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d bytes", b)
	}
	if b < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// availableMemory is AvailableMemory, a variable for the tests.
var availableMemory = AvailableMemory

// Bytes returns the file's bytes. They must not be written to, and must not
// be used after Close.
func (m *Mapping) Bytes() []byte { return m.data }

// Mapped reports whether the view is a memory map (false: the ReadAt
// fallback).
func (m *Mapping) Mapped() bool { return m.mapped }

// Close releases the view. It is safe to call twice.
func (m *Mapping) Close() error {
	unmap := m.unmap
	m.data, m.unmap, m.mapped = nil, nil, false
	if unmap == nil {
		return nil
	}
	return unmap()
}

// Release tells the OS that the pages wholly inside b, a sub-slice of
// Bytes, are not needed for now (see the package doc). Pages shared with
// bytes outside b are kept; b outside the mapping, or a ReadAt fallback, is
// left alone. The bytes stay readable. It is only advice: errors are
// ignored.
func (m *Mapping) Release(b []byte) {
	if m == nil || !m.mapped || len(b) == 0 || len(m.data) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if start < base || start-base > uintptr(len(m.data)) || uintptr(len(b)) > uintptr(len(m.data))-(start-base) {
		return
	}
	lo, hi, ok := pageInterior(start, uintptr(len(b)), uintptr(os.Getpagesize()))
	if !ok {
		return
	}
	release(m.data[lo-base : hi-base])
}

// pageInterior returns the page-aligned [lo, hi) inside [start, start+n),
// and false when no whole page lies inside.
func pageInterior(start, n, page uintptr) (lo, hi uintptr, ok bool) {
	lo = (start + page - 1) &^ (page - 1)
	hi = (start + n) &^ (page - 1)
	return lo, hi, hi > lo
}

// Int returns n as an int, or a one-line error naming what when n does not
// fit this build's int (only possible on 32-bit targets, where int has 31
// bits of magnitude).
func Int(n uint64, what string) (int, error) { return intWithMax(n, math.MaxInt, what) }

// intWithMax is Int for a given largest int, so that tests on 64-bit hosts
// check the 32-bit behaviour too.
func intWithMax(n uint64, maxInt uint64, what string) (int, error) {
	if n > maxInt {
		return 0, fmt.Errorf("%s: size %d does not fit in this %d-bit build (largest %d); use a 64-bit build of bitnet-convert", what, n, bitsOf(maxInt), maxInt)
	}
	return int(n), nil
}

// bitsOf names the word size whose largest int is maxInt.
func bitsOf(maxInt uint64) int {
	if maxInt <= math.MaxInt32 {
		return 32
	}
	return 64
}
