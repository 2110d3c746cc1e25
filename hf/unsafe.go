package hf

import "unsafe"

// unsafePointer returns the address of b's first byte (len(b) > 0).
func unsafePointer(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
