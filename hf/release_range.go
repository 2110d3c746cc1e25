package hf

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReleaseRange is Release for the bytes Raw[lo:hi] only: converters that
// stream one large tensor in chunks call it after each chunk, so even a
// single tensor's input pages do not all stay resident. Out-of-range bounds
// are clipped; errors are ignored (it is only advice).
func (d *TensorData) ReleaseRange(lo, hi int) {
	lo, hi = max(lo, 0), min(hi, len(d.Raw))
	if hi <= lo {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafePointer(d.Raw))
	a := (start + uintptr(lo) + page - 1) &^ (page - 1)
	b := (start + uintptr(hi)) &^ (page - 1)
	if b <= a {
		return
	}
	_ = unix.Madvise(d.Raw[a-start:b-start], unix.MADV_DONTNEED)
}
