//go:build windows

package osx

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// anonMemory commits n bytes of zeroed memory with VirtualAlloc; memory
// the system refuses is an error, not Go's fatal out-of-memory.
func anonMemory(n int) ([]byte, func(), error) {
	if n <= 0 {
		return nil, nil, windows.ERROR_INVALID_PARAMETER
	}
	addr, err := windows.VirtualAlloc(0, uintptr(n), windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_READWRITE)
	if err != nil {
		return nil, nil, os.NewSyscallError("VirtualAlloc", err)
	}
	// As in mmap_windows.go: memory the OS owns, read through a
	// pointer-typed copy of its address.
	b := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), n)
	return b, func() { _ = windows.VirtualFree(addr, 0, windows.MEM_RELEASE) }, nil
}
