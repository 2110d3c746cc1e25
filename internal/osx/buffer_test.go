package osx

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestBuffer: NewBuffer gives n zeroed, writable bytes for small and large n
// (large ones start on a 2 MiB boundary on Linux, where they are mapped);
// Grow keeps a long enough buffer and replaces a short one; Free is safe
// twice and on nil.
func TestBuffer(t *testing.T) {
	for _, n := range []int{0, 1, 4096, hugePageSize / 2, hugePageSize + 5, 3*hugePageSize - 1} {
		b := NewBuffer(n)
		got := b.Bytes()
		if len(got) != n {
			t.Fatalf("NewBuffer(%d): %d bytes", n, len(got))
		}
		for i := 0; i < n; i += 4093 {
			if got[i] != 0 {
				t.Fatalf("NewBuffer(%d): byte %d is %d", n, i, got[i])
			}
			got[i] = byte(i)
		}
		if n > 0 {
			got[n-1] = 7
		}
		if runtime.GOOS == "linux" && n >= hugePageSize/2 && uintptr(unsafe.Pointer(unsafe.SliceData(got)))%hugePageSize != 0 {
			t.Errorf("NewBuffer(%d) does not start on a huge page", n)
		}
		b.Grow(n / 2)
		if len(b.Bytes()) != n || n > 0 && b.Bytes()[n-1] != 7 {
			t.Errorf("Grow(%d) of a %d-byte buffer changed it", n/2, n)
		}
		b.Grow(n + 1)
		if len(b.Bytes()) != n+1 || b.Bytes()[n] != 0 {
			t.Errorf("Grow(%d): %d bytes", n+1, len(b.Bytes()))
		}
		b.Free()
		b.Free()
		if b.Bytes() != nil {
			t.Errorf("bytes after Free")
		}
	}
	var nb *Buffer
	nb.Free()
	(&Buffer{}).Free()
}
