package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDotI2S: the kernel equals the reference on any packed row and
// activation (the input's first quarter-ish is the row, rounded down to
// whole 32-byte blocks; the activation repeats the rest).
func FuzzDotI2S(f *testing.F) {
	f.Add([]byte{0xaa, 0x55, 0x01, 0xff, 0x80, 0x7f})
	f.Add(make([]byte, 32*33+5))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		nb := len(data) / 160
		row := data[:32*nb]
		q := make([]int8, 128*nb)
		for i := range q {
			q[i] = int8(data[(32*nb+i)%len(data)])
		}
		if got, want := DotI2S(row, q), dotI2SRef(row, q); got != want {
			t.Fatalf("nb=%d: kernel %d, reference %d", nb, got, want)
		}
	})
}

// FuzzDotF16: pairs of (F16 weight, float32 activation) from the input.
func FuzzDotF16(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 0x00, 0x00, 0x80, 0x3f})
	f.Add(make([]byte, 6*40))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 6
		w := make([]uint16, n)
		x := make([]float32, n)
		for i := range w {
			w[i] = binary.LittleEndian.Uint16(data[6*i:])
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[6*i+2:]))
		}
		if got, want := DotF16(w, x), dotF16Ref(w, x); !sameFloat(got, want) {
			t.Fatalf("n=%d: kernel %v, reference %v", n, got, want)
		}
	})
}

// FuzzQuantizeI8S: any float32 row, NaNs and infinities included.
func FuzzQuantizeI8S(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0x3f, 0, 0, 0x80, 0xbf})
	f.Add(make([]byte, 4*70))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkQuantize(t, "fuzz", x)
	})
}
