//go:build !linux

package osx

// hugePageSize is the usual transparent huge page size (only Linux maps
// buffers with it; see buffer_linux.go).
const hugePageSize = 2 << 20

func hugeBuffer(int) ([]byte, func(), bool) { return nil, nil, false }
