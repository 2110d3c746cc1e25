package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// attnCase fills one AttnKQIK/AttnPVIK case from rng: F16 keys/values of
// moderate size (special holds the share of NaN/Inf/subnormal/−0 codes),
// f32 queries and probabilities.
func attnF16(rng *rand.Rand, n int, special float64) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		switch r := rng.Float64(); {
		case r < special/4:
			h[i] = []uint16{0x7c00, 0xfc00, 0x7e01, 0xfd00}[rng.IntN(4)]
		case r < special/2:
			h[i] = []uint16{0x8000, 0x0000, 0x0001, 0x83ff}[rng.IntN(4)]
		default:
			h[i] = uint16(rng.IntN(0x7800)) | uint16(rng.IntN(2))<<15
		}
	}
	return h
}

func attnF32(rng *rand.Rand, n int, special float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r := rng.Float64(); {
		case r < special/4:
			x[i] = []float32{float32(math.Inf(1)), float32(math.NaN()), -0, 1e-40}[rng.IntN(4)]
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	return x
}

// checkAttnIK compares AttnKQIK and AttnPVIK with their references on one
// shape.
func checkAttnIK(t *testing.T, rng *rand.Rand, g, hd, n, pad int, special float64) {
	t.Helper()
	stride := g*hd + pad
	k := attnF16(rng, max(n-1, 0)*stride+hd+pad*stride, special)
	q := attnF32(rng, g*hd, special)
	sStride := n + pad
	s0 := attnF32(rng, 2*g*sStride+3, 0)
	got, want := append([]float32(nil), s0...), append([]float32(nil), s0...)
	AttnKQIK(got, sStride, k, stride, n, q, g)
	attnKQIKRef(want, sStride, k, stride, n, q, g)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("AttnKQIK g=%d hd=%d n=%d pad=%d: s[%d] %x, reference %x", g, hd, n, pad, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
	}
	vStride := n + pad
	v := attnF16(rng, hd*vStride+pad, special)
	pStride := n + pad
	p := attnF32(rng, g*pStride, special)
	for i := range p {
		p[i] = float32(math.Abs(float64(p[i]))) / 4
	}
	out0 := attnF32(rng, g*hd, special/4)
	if special == 0 {
		out0[0] = float32(math.Copysign(0, -1))
	}
	gotO, wantO := append([]float32(nil), out0...), append([]float32(nil), out0...)
	AttnPVIK(gotO, v, vStride, p, pStride, n, g)
	attnPVIKRef(wantO, v, vStride, p, pStride, n, g)
	for i := range gotO {
		if math.Float32bits(gotO[i]) != math.Float32bits(wantO[i]) {
			t.Fatalf("AttnPVIK g=%d hd=%d n=%d pad=%d: out[%d] %x, reference %x", g, hd, n, pad, i, math.Float32bits(gotO[i]), math.Float32bits(wantO[i]))
		}
	}
}

// TestAttnIK: the flash-attention kernels equal their references bit for
// bit on every key count 0…40 (whole groups of eight and tails), one and
// two heads, several head sizes and strides, with and without special
// values (NaN, ±Inf, subnormals, −0).
func TestAttnIK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, special := range []float64{0, 0.002, 0.05} {
		for _, hd := range []int{8, 64, 128, 136} {
			for g := 1; g <= 2; g++ {
				for n := 0; n <= 40; n++ {
					checkAttnIK(t, rng, g, hd, n, n%3*4, special)
				}
			}
		}
	}
	checkAttnIK(t, rng, 2, 264, 13, 1, 0) // beyond the assembly's head size
}

// FuzzAttnIK: AttnKQIK and AttnPVIK equal their references for any seed,
// shape and share of special values.
func FuzzAttnIK(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(16), uint8(17), uint8(1), uint8(0))
	f.Add(uint64(7), uint8(1), uint8(8), uint8(8), uint8(0), uint8(40))
	f.Fuzz(func(t *testing.T, seed uint64, g, hd8, n, pad, special uint8) {
		rng := rand.New(rand.NewPCG(seed, 3))
		checkAttnIK(t, rng, 1+int(g%2), 8*(1+int(hd8%34)), int(n%72), int(pad%12), float64(special%128)/256)
	})
}
