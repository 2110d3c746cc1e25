package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// checkQ8_0 compares QuantizeQ8_0 on x with quantizeQ8_0Ref: every code
// and every scale's bits.
func checkQ8_0(t *testing.T, x []float32) {
	t.Helper()
	nb := len(x) / 32
	q, d := make([]int8, 32*nb), make([]float32, nb)
	qr, dr := make([]int8, 32*nb), make([]float32, nb)
	QuantizeQ8_0(q, d, x[:32*nb])
	quantizeQ8_0Ref(qr, dr, x[:32*nb])
	for b := range d {
		if math.Float32bits(d[b]) != math.Float32bits(dr[b]) {
			t.Fatalf("block %d of %d: d %x, reference %x", b, nb, math.Float32bits(d[b]), math.Float32bits(dr[b]))
		}
	}
	for i := range q {
		if q[i] != qr[i] {
			t.Fatalf("code %d (block %d, x %v): %d, reference %d", i, i/32, x[i], q[i], qr[i])
		}
	}
}

// TestQuantizeQ8_0: the assembly's codes and scales equal the reference's
// on random rows of several magnitudes, on codes exactly halfway between
// two integers (ties to even), zero blocks, subnormal blocks and blocks
// with a NaN or an infinity (the reference's in the middle of a row).
func TestQuantizeQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(80, 80))
	for _, scale := range []float64{1e-30, 1e-6, 1, 37, 1e6, 1e30} {
		x := make([]float32, 32*97)
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
		}
		checkQ8_0(t, x)
	}
	// Ties: amax 127 gives id 1, so x = k + 0.5 lands halfway.
	tie := make([]float32, 64)
	for i := range tie {
		tie[i] = float32(i%32-16) + 0.5
	}
	tie[0], tie[32] = 127, -127
	checkQ8_0(t, tie)
	x := make([]float32, 32*8)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	clear(x[32:64])                  // zero block
	x[70] = float32(math.NaN())      // NaN block
	x[100] = float32(math.Inf(-1))   // infinite block
	x[130] = math.Float32frombits(1) // tiny values
	for i := 160; i < 192; i++ {     // subnormal block
		x[i] = math.Float32frombits(uint32(r.IntN(1 << 23)))
	}
	x[200] = math.MaxFloat32
	checkQ8_0(t, x)
}

// FuzzQuantizeQ8_0: QuantizeQ8_0 equals its reference on any row: the
// input's 32-bit words are the values, cut to whole blocks.
func FuzzQuantizeQ8_0(f *testing.F) {
	seed := make([]byte, 4*64)
	for i := range 64 {
		binary.LittleEndian.PutUint32(seed[4*i:], math.Float32bits(float32(i-20)/3))
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		x := make([]float32, len(data)/4/32*32)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkQ8_0(t, x)
	})
}
