package osx

// Buffer is a large reusable scratch buffer (see NewBuffer).
type Buffer struct {
	b    []byte
	free func()
}

// NewBuffer returns an n-byte zeroed buffer for data that is rewritten many
// times (a converter's per-tensor scratch). On Linux it is an anonymous
// mapping advised MADV_HUGEPAGE, so the kernel may back it with 2 MiB pages:
// fewer page faults when it is first filled and fewer TLB misses each time
// it is refilled; elsewhere, or when mapping fails, it is an ordinary Go
// slice. Free releases it; the bytes must not be used afterwards.
func NewBuffer(n int) *Buffer {
	if n <= 0 {
		return &Buffer{}
	}
	if b, free, ok := hugeBuffer(n); ok {
		return &Buffer{b: b, free: free}
	}
	return &Buffer{b: make([]byte, n)}
}

// Grow makes the buffer at least n bytes long: a shorter one is freed and
// replaced by a new zeroed one (its bytes are not kept); a long enough one
// is left as it is.
func (b *Buffer) Grow(n int) {
	if len(b.b) >= n {
		return
	}
	b.Free()
	*b = *NewBuffer(n)
}

// Bytes returns the buffer's bytes.
func (b *Buffer) Bytes() []byte { return b.b }

// Free releases the buffer. It is safe to call on a nil Buffer and twice.
func (b *Buffer) Free() {
	if b == nil {
		return
	}
	if b.free != nil {
		b.free()
	}
	b.b, b.free = nil, nil
}
