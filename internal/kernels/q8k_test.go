package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeQ8KMatchesReference: QuantizeQ8K gives quantizeQ8KRef's
// codes, scales and sums on blocks of random magnitudes, blocks whose
// largest magnitude appears with both signs (the first one wins), all-zero
// blocks, blocks with NaNs, infinities, subnormal maxima and values at
// rounding ties.
func TestQuantizeQ8KMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	for trial := range 400 {
		nb := 1 + r.IntN(4)
		x := make([]float32, 256*nb)
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(20)-10))
		}
		b := r.IntN(nb) * 256
		switch trial % 8 {
		case 1:
			i, j := b+r.IntN(256), b+r.IntN(256)
			m := float32(1e3)
			x[i], x[j] = -m, m
		case 2:
			clear(x[b : b+256])
		case 3:
			x[b+r.IntN(256)] = float32(math.NaN())
		case 4:
			x[b+r.IntN(256)] = float32(math.Inf(-1 + 2*r.IntN(2)))
		case 5:
			for i := b; i < b+256; i++ {
				x[i] = math.Float32frombits(uint32(r.IntN(8))) // 0 and tiny subnormals
			}
		case 6:
			// Halves after scaling: max 127 makes iscale −1 (or 1).
			x[b] = 127
			for i := b + 1; i < b+256; i++ {
				x[i] = float32(r.IntN(254)-127) + 0.5
			}
		case 7:
			for i := b; i < b+256; i++ {
				x[i] = float32(math.Ldexp(r.NormFloat64(), 100+r.IntN(20)))
			}
		}
		q, d, bs := make([]int8, len(x)), make([]float32, nb), make([]int16, 16*nb)
		qr, dr, bsr := make([]int8, len(x)), make([]float32, nb), make([]int16, 16*nb)
		QuantizeQ8K(q, d, bs, x)
		quantizeQ8KRef(qr, dr, bsr, x)
		for i := range q {
			if q[i] != qr[i] {
				t.Fatalf("trial %d: code %d: %d, reference %d (x %v)", trial, i, q[i], qr[i], x[i])
			}
		}
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(dr[i]) && !(d[i] != d[i] && dr[i] != dr[i]) {
				t.Fatalf("trial %d: scale %d: %v, reference %v", trial, i, d[i], dr[i])
			}
		}
		for i := range bs {
			if bs[i] != bsr[i] {
				t.Fatalf("trial %d: bsum %d: %d, reference %d", trial, i, bs[i], bsr[i])
			}
		}
	}
}

// BenchmarkQuantizeQ8K: one 2560-element activation row (the 2B-4T hidden
// size), the kernel beside its reference.
func BenchmarkQuantizeQ8K(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 18))
	x := make([]float32, 2560)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q, d, bs := make([]int8, len(x)), make([]float32, len(x)/256), make([]int16, len(x)/16)
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			QuantizeQ8K(q, d, bs, x)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			quantizeQ8KRef(q, d, bs, x)
		}
	})
}
