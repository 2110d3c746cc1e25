package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// checkQ8K64 compares QuantizeQ8K64 with quantizeQ8K64Ref on x.
func checkQ8K64(t *testing.T, x []float32) {
	t.Helper()
	q, qr := make([]int8, len(x)), make([]int8, len(x))
	var d, m, dr, mr [4]float32
	QuantizeQ8K64(q, &d, &m, x)
	quantizeQ8K64Ref(qr, &dr, &mr, x)
	for g := range d {
		if math.Float32bits(d[g]) != math.Float32bits(dr[g]) || math.Float32bits(m[g]) != math.Float32bits(mr[g]) {
			t.Fatalf("len %d group %d: d %v minus %v, reference %v %v", len(x), g, d[g], m[g], dr[g], mr[g])
		}
	}
	for e := range q {
		if q[e] != qr[e] {
			t.Fatalf("len %d element %d (%v): code %d, reference %d", len(x), e, x[e], q[e], qr[e])
		}
	}
}

// TestQuantizeQ8K64: the assembly path equals the reference on random
// rows of every length 16…1024 (whole groups of 32 and a last 16), with
// ties of the rounding (halves of the scale), all-zero groups, groups of
// tiny subnormals, and rows with NaN or ±Inf.
func TestQuantizeQ8K64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 16; n <= 1024; n += 16 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		checkQ8K64(t, x)
		// Halves: with max 127, codes are x rounded to even.
		for i := range x {
			x[i] = float32(rng.IntN(255)-127) / 2
		}
		x[0], x[5], x[10], x[15] = 127, -127, 127, -127
		checkQ8K64(t, x)
		for i := range x { // group 1 zero, group 2 -0
			switch i % 16 / 4 {
			case 1:
				x[i] = 0
			case 2:
				x[i] = float32(math.Copysign(0, -1))
			}
		}
		checkQ8K64(t, x)
		for i := range x { // subnormal maxima: d 0 or 1/d infinite
			x[i] = math.Float32frombits(uint32(rng.IntN(1 << 12)))
		}
		checkQ8K64(t, x)
		for i := range x {
			x[i] = math.Float32frombits(uint32(rng.IntN(1<<23)) | 0x00800000*uint32(rng.IntN(3)))
		}
		checkQ8K64(t, x)
		for _, s := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
			y := append([]float32(nil), x...)
			y[rng.IntN(n)] = s
			checkQ8K64(t, y)
		}
	}
}

// FuzzQuantizeQ8K64: QuantizeQ8K64 equals its reference on any row (the
// input's 32-bit words, cut to a multiple of 16).
func FuzzQuantizeQ8K64(f *testing.F) {
	f.Add(make([]byte, 4*48))
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 0, 0, 0, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 4 &^ 15
		x := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkQ8K64(t, x)
	})
}

// BenchmarkQuantizeQ8K64: one 2560-element row (the 2B model's width),
// the kernel path against the pure-Go reference.
func BenchmarkQuantizeQ8K64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 2560)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	q := make([]int8, len(x))
	var d, m [4]float32
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			QuantizeQ8K64(q, &d, &m, x)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			quantizeQ8K64Ref(q, &d, &m, x)
		}
	})
}

// TestMulScaled: MulScaled and ScaleMul equal their references bit for bit
// (NaN payloads included where the assembly runs; in pure Go the payload of
// a product of two NaNs follows the compiler's operand order at each call
// site, as f16acc_test.go notes, and this seed never multiplies two) on
// every length 0…70, with NaNs, infinities, zeros and subnormals among x, w
// and the scale, in place too.
func TestMulScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	special := []float32{float32(math.NaN()), math.Float32frombits(0x7fc12345), math.Float32frombits(0xffa00001), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-45, 3e38}
	pick := func() float32 {
		if rng.IntN(10) == 0 {
			return special[rng.IntN(len(special))]
		}
		return float32(rng.NormFloat64())
	}
	for _, k := range []struct {
		name    string
		fn, ref func(dst, x, w []float32, scale float32)
	}{{"MulScaled", MulScaled, mulScaledRef}, {"ScaleMul", ScaleMul, scaleMulRef}} {
		for n := range 71 {
			for range 20 {
				x, w := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i], w[i] = pick(), pick()
				}
				scale := float32(rng.ExpFloat64())
				if rng.IntN(8) == 0 {
					scale = special[rng.IntN(len(special))]
				}
				got, want := make([]float32, n), make([]float32, n)
				k.fn(got, x, w, scale)
				k.ref(want, x, w, scale)
				in := append([]float32(nil), x...)
				k.fn(in, in, w, scale)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(in[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s n=%d i=%d: %x (in place %x), reference %x", k.name, n, i, math.Float32bits(got[i]), math.Float32bits(in[i]), math.Float32bits(want[i]))
					}
				}
			}
		}
	}
	// The two orders round differently on a good share of inputs, so a
	// kernel of the wrong order fails above.
	differ := 0
	for range 1000 {
		x, w, scale := []float32{float32(rng.NormFloat64())}, []float32{float32(rng.NormFloat64())}, float32(rng.ExpFloat64())
		var a, b [1]float32
		mulScaledRef(a[:], x, w, scale)
		scaleMulRef(b[:], x, w, scale)
		if a != b {
			differ++
		}
	}
	if differ < 100 {
		t.Fatalf("(scale·w)·x and (x·scale)·w differ on %d of 1000 random triples", differ)
	}
}
