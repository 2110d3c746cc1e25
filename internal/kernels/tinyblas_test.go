package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// tinyNaive is tinyBLAS<8>'s dot written element by element from its
// definition (lane (off+j) mod 8, FMA32 in ascending j, hsum), the
// reference the kernels and their pure-Go twins are checked against.
func tinyNaive(w, x []float32, off int) float32 {
	var l [8]float32
	for j := range x {
		l[(off+j)&7] = FMA32(l[(off+j)&7], w[j], x[j])
	}
	return TinyBLASHsum(&l)
}

// tinyEdgeF32 and tinyEdgeF16: zeros of both signs, subnormals, the
// smallest normal, values whose products land halfway between float32
// values or overflow, infinities.
var (
	tinyEdgeF32 = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1p-149, -0x1p-149, 0x1p-126, 0x1p-24, 1 + 0x1p-23,
		-(1 + 0x1p-23), 3, 0.1, 65504, 1e30, -1e30, 3e38, float32(math.Inf(1)), float32(math.Inf(-1))}
	tinyEdgeF16 = []uint16{0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x8001, 0x0400, 0x3c01, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x1400, 0x2e66}
)

// tinyInputs returns n F16 weights, their float32 values and n float32
// activations: random normal values, with a fraction (edge in 0…1) drawn
// from the edge pools.
func tinyInputs(r *rand.Rand, n int, edge float64) ([]uint16, []float32, []float32) {
	h, wf, x := make([]uint16, n), make([]float32, n), make([]float32, n)
	for i := range h {
		if r.Float64() < edge {
			h[i] = tinyEdgeF16[r.IntN(len(tinyEdgeF16))]
		} else {
			h[i] = uint16(r.IntN(0x7800)) | uint16(r.IntN(2))<<15 // finite
		}
		wf[i] = f16Table[h[i]]
		if r.Float64() < edge {
			x[i] = tinyEdgeF32[r.IntN(len(tinyEdgeF32))]
		} else {
			x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(30)-15)))
		}
	}
	return h, wf, x
}

// TestTinyBLASDots: TinyBLASDotsF16/F32 (assembly where the CPU has it)
// equal tinyNaive on every row count the 8/4/1-row kernels split into,
// K from 0 to 1536, activation strides of K, more than K and 0, on random
// and edge inputs; the pure-Go twins too.
func TestTinyBLASDots(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 8))
	for _, k := range []int{0, 8, 16, 40, 96, 1536} {
		for n := 0; n <= 19; n++ {
			for _, xsPad := range []int{0, 8, -1} {
				for _, edge := range []float64{0, 0.3} {
					xs := k + xsPad
					if xsPad < 0 {
						xs = 0
					}
					h, wf, _ := tinyInputs(r, k, edge)
					_, _, x := tinyInputs(r, max(0, (n-1)*xs+k), edge)
					want := make([]float32, n)
					for i := range want {
						want[i] = tinyNaive(wf, x[i*xs:i*xs+k], 0)
					}
					for name, f := range map[string]func([]float32){
						"F16":    func(d []float32) { TinyBLASDotsF16(d, h, x, xs) },
						"F32":    func(d []float32) { TinyBLASDotsF32(d, wf, x, xs) },
						"F16Ref": func(d []float32) { tinyDotsF16Ref(d, h, x, xs) },
						"F32Ref": func(d []float32) { tinyDotsF32Ref(d, wf, x, xs) },
					} {
						got := make([]float32, n)
						f(got)
						for i := range got {
							if !sameF32(got[i], want[i]) {
								t.Fatalf("%s K=%d n=%d xs=%d edge=%v row %d: %v (%#x), want %v (%#x)", name, k, n, xs, edge, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				}
			}
		}
	}
}

// TestTinyBLASDotsOffF16: TinyBLASDotsOffF16 equals tinyNaive at every
// offset mod 8 (and beyond 8), lengths that leave a head, a body and a
// tail of any size, 1–19 rows at strides of n and more; and the pure-Go
// lanes twin gives the same accumulators as the kernel.
func TestTinyBLASDotsOffF16(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 9))
	for _, n := range []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 511} {
		for off := 0; off < 20; off++ {
			for _, nr := range []int{1, 3, 4, 5, 8, 12, 19} {
				wr := n + r.IntN(3)*8
				edge := float64(off%2) * 0.3
				h, wf, _ := tinyInputs(r, max(0, (nr-1)*wr+n), edge)
				_, _, x := tinyInputs(r, n, edge)
				got := make([]float32, nr)
				TinyBLASDotsOffF16(got, h, wr, x, off)
				for i := range got {
					if want := tinyNaive(wf[i*wr:i*wr+n], x, off); !sameF32(got[i], want) {
						t.Fatalf("n=%d off=%d rows=%d wr=%d row %d: %v, want %v", n, off, nr, wr, i, got[i], want)
					}
				}
			}
		}
	}
	for nr := 1; nr <= 8; nr++ {
		k, wr := 64, 72
		h, _, x := tinyInputs(r, (nr-1)*wr+k, 0.3)
		_, l0, _ := tinyInputs(r, 8*nr, 0)
		got, want := append([]float32(nil), l0...), append([]float32(nil), l0...)
		tinyLanesF16(got, h, wr, x[:k], nr)
		tinyLanesF16Ref(want, h, wr, x[:k], nr)
		for i := range got {
			if !sameF32(got[i], want[i]) {
				t.Fatalf("lanes, %d rows: lane %d %v, want %v", nr, i, got[i], want[i])
			}
		}
	}
}

// TestFmaFast: fmaFast is FMA32 on random operands, on sums that land
// halfway between two float32 values, and on subnormal, zero and
// infinite results.
func TestFmaFast(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		if got, want := fmaFast(a, b, c), FMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmaFast(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for i := 0; i < 200_000; i++ {
		a := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		check(a, b, c)
		check(a, 0x1p-24*float32(1+r.IntN(4)), a)
	}
	for _, v := range [][3]float32{
		{1, 0x1p-24, 1}, {1 + 0x1p-23, -0x1p-24, 1 + 0x1p-40},
		{0, 0, 0}, {0, float32(math.Copysign(0, -1)), 1}, {1e-38, 1e-10, 1e-10}, {0x1p-149, 1, 0},
		{float32(math.Inf(1)), 1, 1}, {3e38, 3e38, 3e38}, {-1, 1, 1},
	} {
		check(v[0], v[1], v[2])
	}
}

// FuzzTinyBLAS: F16 weights and float32 activations read from the input
// (any bits, NaNs and infinities included); TinyBLASDotsF16/F32 over three
// rows and TinyBLASDotsOffF16 at an offset from the input equal tinyNaive.
func FuzzTinyBLAS(f *testing.F) {
	f.Add([]byte{3, 0x00, 0x3c, 0x00, 0x00, 0x80, 0x3f})
	f.Add(make([]byte, 6*40+1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		off := int(data[0])
		data = data[1:]
		n := len(data) / 6
		h, wf, x := make([]uint16, n), make([]float32, n), make([]float32, n)
		for i := range h {
			h[i] = binary.LittleEndian.Uint16(data[2*i:])
			wf[i] = f16Table[h[i]]
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[2*n+4*i:]))
		}
		got := make([]float32, 2)
		TinyBLASDotsOffF16(got, h, 0, x, off)
		if want := tinyNaive(wf, x, off); !sameF32(got[0], want) || !sameF32(got[1], want) {
			t.Fatalf("n=%d off=%d: DotsOff %v %v, want %v", n, off, got[0], got[1], want)
		}
		k := n &^ 7
		xs := make([]float32, 3*k)
		for i := range 3 {
			copy(xs[i*k:], x[:k])
			for j := range k {
				xs[i*k+j] *= float32(i + 1)
			}
		}
		d16, d32 := make([]float32, 3), make([]float32, 3)
		TinyBLASDotsF16(d16, h[:k], xs, k)
		TinyBLASDotsF32(d32, wf[:k], xs, k)
		for i := range 3 {
			want := tinyNaive(wf[:k], xs[i*k:(i+1)*k], 0)
			if !sameF32(d16[i], want) || !sameF32(d32[i], want) {
				t.Fatalf("K=%d row %d: F16 %v, F32 %v, want %v", k, i, d16[i], d32[i], want)
			}
		}
	})
}
