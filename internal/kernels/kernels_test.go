package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"
)

func randI2S(r *rand.Rand, nb int) ([]byte, []int8) {
	row := make([]byte, 32*nb)
	q := make([]int8, 128*nb)
	for i := range row {
		row[i] = byte(r.Uint32())
	}
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	return row, q
}

// TestDotI2SKnown pins the reference itself: a plain sum, and the int16
// wrap of bitnet.cpp's lanes (32 blocks of code 2 times q 127 give lane
// sums of 32·4·2·254 = 65024, which wraps to −512 in each of 16 lanes).
func TestDotI2SKnown(t *testing.T) {
	row := make([]byte, 32*32)
	q := make([]int8, 128*32)
	for i := range row {
		row[i] = 0b10101010 // code 2 in all four fields
	}
	for i := range q {
		q[i] = 127
	}
	if got := DotI2S(row[:32], q[:128]); got != 128*2*127 {
		t.Errorf("one block: %d, want %d", got, 128*2*127)
	}
	if got, ref := DotI2S(row, q), dotI2SRef(row, q); got != -8192 || ref != -8192 {
		t.Errorf("32 blocks of 2·127: kernel %d, reference %d, want -8192 (int16 lanes wrap)", got, ref)
	}
	// 33 blocks: the 33rd starts a new group and does not wrap.
	row = append(row, row[:32]...)
	q = append(q, q[:128]...)
	if got := DotI2S(row, q); got != -8192+128*2*127 {
		t.Errorf("33 blocks: %d, want %d", got, -8192+128*2*127)
	}
}

func TestDotI2SMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 15))
	for _, nb := range []int{0, 1, 2, 3, 7, 31, 32, 33, 48, 63, 64, 65, 96, 100} {
		for trial := 0; trial < 20; trial++ {
			row, q := randI2S(r, nb)
			switch trial {
			case 1: // extreme activations, all codes 2 or 0
				for i := range q {
					q[i] = [2]int8{-128, 127}[i%2]
				}
				for i := range row {
					row[i] = [2]byte{0xaa, 0x00}[i%2]
				}
			case 2: // every lane wraps
				for i := range q {
					q[i] = -128
				}
				for i := range row {
					row[i] = 0xaa
				}
			case 3: // valid ternary codes only (0, 1, 2)
				for i := range row {
					var b byte
					for f := 0; f < 4; f++ {
						b = b<<2 | byte(r.IntN(3))
					}
					row[i] = b
				}
			}
			if got, want := DotI2S(row, q), dotI2SRef(row, q); got != want {
				t.Fatalf("nb=%d trial %d: kernel %d, reference %d (%s)", nb, trial, got, want, Impl())
			}
		}
	}
}

// TestDotI2S4MatchesReference: the four-token kernel gives dotI2SRef of each
// token on random rows, the wrapping and extreme cases and rows of every
// length class (groups of 32 blocks and a partial one), with activation
// rows that differ per token and are longer than the row needs.
func TestDotI2S4MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 15))
	for _, nb := range []int{0, 1, 2, 12, 31, 32, 33, 48, 64, 65, 100} {
		for trial := 0; trial < 12; trial++ {
			row, _ := randI2S(r, nb)
			var qs [4][]int8
			for k := range qs {
				_, qs[k] = randI2S(r, nb)
				qs[k] = append(qs[k], int8(k+1))
			}
			switch trial {
			case 1: // every lane of token 2 wraps, token 0 at the other extreme
				for i := range row {
					row[i] = 0xaa
				}
				for i := range qs[2] {
					qs[2][i] = -128
					qs[0][i] = 127
				}
			case 2: // all codes 3 (a damaged file) with extreme activations
				for i := range row {
					row[i] = 0xff
				}
				for k := range qs {
					for i := range qs[k] {
						qs[k][i] = [2]int8{-128, 127}[(i+k)%2]
					}
				}
			}
			got := DotI2S4(row, qs[0], qs[1], qs[2], qs[3])
			want4 := dotI2S4Ref(row, qs[0], qs[1], qs[2], qs[3])
			for k := range qs {
				if want := dotI2SRef(row, qs[k][:128*nb]); got[k] != want || want4[k] != want {
					t.Fatalf("nb=%d trial %d token %d: kernel %d, reference %d (%s)", nb, trial, k, got[k], want, Impl())
				}
			}
		}
	}
}

func TestDotI2S4Panics(t *testing.T) {
	q := make([]int8, 128)
	for _, c := range []struct {
		row   int
		short int
	}{{31, -1}, {32, 0}, {32, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("row %d, short activation %d: no panic", c.row, c.short)
				}
			}()
			qs := [4][]int8{q, q, q, q}
			if c.short >= 0 {
				qs[c.short] = q[:127]
			}
			DotI2S4(make([]byte, c.row), qs[0], qs[1], qs[2], qs[3])
		}()
	}
}

// TestDotI2SRowsMatchesReference: the multi-row kernel gives, bit for bit,
// the reference's epilogue of dotI2SRef on every row, for row counts around
// the kernel's loop boundaries, row lengths of every group class, random
// and extreme scales, a zero weight scale and rows that wrap.
func TestDotI2SRowsMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 15))
	for _, nb := range []int{1, 2, 12, 31, 32, 33, 54, 64, 65} {
		for _, nr := range []int{1, 2, 3, 7, 8, 9, 17} {
			for trial := 0; trial < 4; trial++ {
				rows := make([]byte, 0, 32*nb*nr)
				for range nr {
					row, _ := randI2S(r, nb)
					rows = append(rows, row...)
				}
				_, q := randI2S(r, nb)
				q = append(q, 9) // longer than a row needs
				sumf := float32(r.IntN(1<<20) - 1<<19)
				s := float32(127 / (1e-5 + r.ExpFloat64()))
				scale := float32(r.Float64())
				switch trial {
				case 1: // every lane wraps in every row
					for i := range rows {
						rows[i] = 0xaa
					}
					for i := range q {
						q[i] = -128
					}
				case 2:
					scale = 0
				case 3: // the largest activation scale (amax = 1e-5)
					s = float32(127 / 1e-5)
				}
				got, want := make([]float32, nr), make([]float32, nr)
				DotI2SRows(got, rows, q, sumf, s, scale)
				for k := range want {
					v := float32(dotI2SRef(rows[k*32*nb:(k+1)*32*nb], q)) - sumf
					v = v / s
					want[k] = v * scale
				}
				for k := range got {
					if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
						t.Fatalf("nb=%d rows=%d trial %d row %d: kernel %v, reference %v (%s)", nb, nr, trial, k, got[k], want[k], Impl())
					}
				}
			}
		}
	}
}

func TestDotI2SRowsPanics(t *testing.T) {
	for _, c := range []struct{ dst, rows, q int }{
		{2, 96, 256},  // 48-byte rows
		{2, 64, 127},  // short activation
		{0, 32, 128},  // rows without outputs
		{3, 128, 256}, // not a whole number of rows
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", c)
				}
			}()
			DotI2SRows(make([]float32, c.dst), make([]byte, c.rows), make([]int8, c.q), 0, 1, 1)
		}()
	}
	DotI2SRows(nil, nil, nil, 0, 1, 1) // nothing to do: no panic
}

// TestDotI2SUsesPrefix checks that a longer q (the caller's scratch) is
// read only for the row's inputs.
func TestDotI2SUsesPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	row, q := randI2S(r, 5)
	long := append(append([]int8(nil), q...), 1, 2, 3)
	if DotI2S(row, long) != dotI2SRef(row, q) {
		t.Fatal("extra activation bytes changed the sum")
	}
}

func TestDotI2SPanics(t *testing.T) {
	for _, c := range []struct {
		row int
		q   int
	}{{31, 124}, {32, 127}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("len(row)=%d len(q)=%d: no panic", c.row, c.q)
				}
			}()
			DotI2S(make([]byte, c.row), make([]int8, c.q))
		}()
	}
}

func sameFloat(a, b float32) bool {
	// NaN payloads may differ between the hardware's and Go's NaN
	// propagation; every other result must have the same bits.
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

func randF16(r *rand.Rand, n int, scale float32) []uint16 {
	w := make([]uint16, n)
	for i := range w {
		w[i] = float16.Fromfloat32(float32(r.NormFloat64()) * scale).Bits()
	}
	return w
}

func TestDotF16MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 15))
	for _, n := range []int{0, 1, 5, 31, 32, 33, 63, 64, 65, 96, 127, 128, 1536, 2048, 2560 + 17} {
		for trial := 0; trial < 12; trial++ {
			w := randF16(r, n, 0.05)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3)
				if trial%2 == 0 { // the runtime's case: x rounded to F16
					x[i] = float16.Fromfloat32(x[i]).Float32()
				}
			}
			switch trial {
			case 3: // random bit patterns: subnormals, infinities, NaNs
				for i := range w {
					w[i] = uint16(r.Uint32())
				}
			case 5: // overflow to infinity in the accumulators
				for i := range w {
					w[i] = 0x7bff // 65504
					x[i] = 3e34
				}
			case 7: // cancellation: the order of additions shows
				for i := range x {
					x[i] = float32(math.Ldexp(1, r.IntN(40)-20)) * float32(1-2*(i%2))
				}
			case 9: // subnormal products
				for i := range w {
					w[i] = uint16(r.IntN(0x400)) | uint16(i%2)<<15
					x[i] = float32(math.Ldexp(1, -120-r.IntN(20)))
				}
			}
			got, want := DotF16(w, x), dotF16Ref(w, x)
			if !sameFloat(got, want) {
				t.Fatalf("n=%d trial %d: kernel %v (%#x), reference %v (%#x) (%s)", n, trial, got, math.Float32bits(got), want, math.Float32bits(want), Impl())
			}
		}
	}
}

// TestDotF16Order pins the reference's summation order on values where
// another order gives another float: lane 0 of accumulator 0 and lane 0 of
// accumulator 2 cancel before the small lane-1 term is added, and the
// 33rd element goes to the float64 tail.
func TestDotF16Order(t *testing.T) {
	w := make([]uint16, 33)
	x := make([]float32, 33)
	one := float16.Fromfloat32(1).Bits()
	for i := range w {
		w[i] = one
	}
	x[0], x[16], x[1], x[32] = 1<<24, -(1 << 24), 1, 0.5
	// In float32, ((1<<24) + (-(1<<24))) + 1 = 1, then + 0.5 in float64.
	if got := DotF16(w, x); got != 1.5 {
		t.Errorf("DotF16 = %v, want 1.5", got)
	}
	x[16], x[8] = 0, -(1 << 24) // lane 0 of accumulator 1: (acc0+acc2)+(acc1+acc3)
	if got := DotF16(w, x); got != 1.5 {
		t.Errorf("DotF16 = %v, want 1.5", got)
	}
	x[8], x[4] = 0, -(1 << 24) // lane 4: reduced with lane 0 before lane 1 joins
	if got := DotF16(w, x); got != 1.5 {
		t.Errorf("DotF16 = %v, want 1.5", got)
	}
	x[4], x[2] = 0, 1<<24 // lane 2 meets lane 0 only at the end: (t0+t1)+(t2+t3)
	if got, want := DotF16(w, x), float32(1<<25); got != want {
		t.Errorf("DotF16 = %v, want %v", got, want)
	}
}

func checkQuantize(t *testing.T, name string, x []float32) {
	t.Helper()
	got := make([]int8, len(x))
	want := make([]int8, len(x))
	gs, gsum := QuantizeI8S(got, x)
	ws, wsum := quantizeI8SRef(want, x)
	if math.Float32bits(gs) != math.Float32bits(ws) || gsum != wsum {
		t.Fatalf("%s: kernel scale %v sum %d, reference %v %d (%s)", name, gs, gsum, ws, wsum, Impl())
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: code %d: kernel %d, reference %d (x=%v, scale %v)", name, i, got[i], want[i], x[i], gs)
		}
	}
}

func TestQuantizeI8SMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 15))
	for _, n := range []int{0, 1, 7, 31, 32, 33, 64, 100, 128, 1536, 2560 + 5} {
		for trial := 0; trial < 12; trial++ {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			switch trial {
			case 1: // all zero (amax is the 1e-5 floor), negative zeros
				for i := range x {
					x[i] = float32(math.Copysign(0, float64(1-2*(i%2))))
				}
			case 2: // below the floor
				for i := range x {
					x[i] *= 1e-7
				}
			case 3: // ties: x·scale lands on k + 0.5 (amax 127 gives scale 1)
				for i := range x {
					x[i] = float32(r.IntN(254)-127) + 0.5
				}
				if n > 0 {
					x[n-1] = 127
				}
			case 4: // huge and subnormal values together
				for i := range x {
					x[i] = [3]float32{3e38, -1e-40, 1}[i%3]
				}
			case 5: // a single outlier
				if n > 0 {
					x[r.IntN(n)] = -1000
				}
			case 6, 7: // an infinity or a NaN: the pure-Go path
				if n > 0 {
					x[r.IntN(n)] = [2]float32{float32(math.Inf(-1)), float32(math.NaN())}[trial-6]
				}
			case 8: // the largest value at the end, in the tail
				if n > 0 {
					x[n-1] = 50
				}
			}
			checkQuantize(t, "random", x)
		}
	}
}

func TestQuantizeI8SKnown(t *testing.T) {
	x := []float32{0.5, -0.25, 0.125, 1, 0.75, -1.5}
	q := make([]int8, len(x))
	s, sum := QuantizeI8S(q, x)
	// amax 1.5: scale = float32(127/1.5) = 84.666664; codes round half to even.
	want := []int8{42, -21, 11, 85, 64, -127}
	if s != float32(127/1.5) || sum != 54 {
		t.Errorf("scale %v sum %d, want %v 54", s, sum, float32(127/1.5))
	}
	for i := range q {
		if q[i] != want[i] {
			t.Errorf("q = %v, want %v", q, want)
			break
		}
	}
}

func TestQuantizeI8SPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on a length mismatch")
		}
	}()
	QuantizeI8S(make([]int8, 3), make([]float32, 4))
}

// TestF32ToF16MatchesReference: the F16 conversions equal x448/float16 on
// the edges (zeros, subnormal boundaries, rounding ties, the overflow
// threshold, infinities, signalling and quiet NaNs with payloads) and on
// random bit patterns, for lengths around the kernels' 8-value steps. (The
// AVX2 kernels were also compared on all 2^32 inputs once, 2026-12-01:
// no difference.)
func TestF32ToF16MatchesReference(t *testing.T) {
	edges := []uint32{
		0, 0x80000000, 1, 0x33000000, 0x33000001, 0x337fffff, 0x33800000, 0x387fc000, 0x387fe000,
		0x38800000, 0x3f800000, 0x3f801000, 0x3f802000, 0x3f803000, 0x477fe000, 0x477fefff,
		0x477ff000, 0x47800000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0x7fa00000,
		0x7fc00000, 0xffc00001, 0x7fffffff, 0xc77ff000, 0xb3000001,
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 100} {
		for trial := 0; trial < 20; trial++ {
			src := make([]float32, n)
			for i := range src {
				b := r.Uint32()
				if trial%2 == 0 {
					b = edges[r.IntN(len(edges))]
				}
				src[i] = math.Float32frombits(b)
			}
			got, want := make([]uint16, n), make([]uint16, n)
			F32ToF16(got, src)
			f32ToF16Ref(want, src)
			gr, wr := make([]float32, n), make([]float32, n)
			RoundF16(gr, src)
			roundF16sRef(wr, src)
			for i := range got {
				if got[i] != want[i] || math.Float32bits(gr[i]) != math.Float32bits(wr[i]) {
					t.Fatalf("n=%d %#x: kernel %#x / %#x, reference %#x / %#x (%s)", n, math.Float32bits(src[i]), got[i], math.Float32bits(gr[i]), want[i], math.Float32bits(wr[i]), Impl())
				}
			}
			RoundF16(src, src) // in place
			for i := range src {
				if math.Float32bits(src[i]) != math.Float32bits(wr[i]) {
					t.Fatalf("n=%d: in place, element %d differs", n, i)
				}
			}
		}
	}
}

// TestSiLUMatchesReference: SiLU equals its pure-Go reference (Exp per
// element in the groups of eight, expf in the tail) bit for bit on random
// activations of several scales, on groups that straddle Exp's normal
// range (|x| near 87.3) and on infinities and NaNs, which the assembly
// leaves to the reference.
func TestSiLUMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	specials := []float32{0, float32(math.Copysign(0, -1)), 87.3, -87.3, 87.4, -87.4, 88.8, -88.8, 103, -104,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40}
	for _, n := range []int{0, 3, 8, 15, 16, 64, 4096 + 5} {
		for trial := 0; trial < 10; trial++ {
			x := make([]float32, n)
			for i := range x {
				switch {
				case trial%3 == 2 && r.IntN(16) == 0:
					x[i] = specials[r.IntN(len(specials))]
				default:
					x[i] = float32(r.NormFloat64() * float64([]float32{0.5, 3, 30}[trial%3]))
				}
			}
			want := append([]float32(nil), x...)
			n8 := n &^ 7
			siluRef(want[:n8])
			for i := n8; i < n; i++ {
				want[i] = want[i] / (1 + float32(math.Exp(float64(-want[i]))))
			}
			SiLU(x)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d trial %d element %d: kernel %v, reference %v (%s)", n, trial, i, x[i], want[i], Impl())
				}
			}
		}
	}
}

// TestDotF16RowsMatchesReference: the multi-row F16 kernel gives DotF16's
// reference (the reduced body, and the float64 tail for row lengths that
// are not a multiple of 32) on every row, bit for bit, with values large
// enough that the summation order shows.
func TestDotF16RowsMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 15))
	for _, k := range []int{32, 64, 96, 1536, 2560, 40} {
		for _, nr := range []int{1, 2, 5, 16} {
			for trial := 0; trial < 4; trial++ {
				w := randF16(r, nr*k, []float32{0.05, 300}[trial%2])
				x := make([]float32, k)
				for i := range x {
					x[i] = F16ToF32(randF16(r, 1, []float32{1, 50}[trial/2])[0])
				}
				got := make([]float32, nr)
				DotF16Rows(got, w, x)
				if k%32 == 0 { // the rows reference, for the architectures whose kernel is not it
					ref := make([]float32, nr)
					dotF16RowsRef(ref, w, k, x)
					for row := range ref {
						if math.Float32bits(got[row]) != math.Float32bits(ref[row]) {
							t.Fatalf("k=%d rows=%d trial %d row %d: kernel %v, dotF16RowsRef %v (%s)", k, nr, trial, row, got[row], ref[row], Impl())
						}
					}
				}
				for row := range got {
					wr := w[row*k : (row+1)*k]
					np := k &^ 31
					sum := float64(dotF16BodyRef(wr[:np], x[:np]))
					for i := np; i < k; i++ {
						sum += float64(float32(f16Table[wr[i]] * x[i]))
					}
					if want := float32(sum); math.Float32bits(got[row]) != math.Float32bits(want) {
						t.Fatalf("k=%d rows=%d trial %d row %d: kernel %v, reference %v (%s)", k, nr, trial, row, got[row], want, Impl())
					}
				}
			}
		}
	}
	DotF16Rows(nil, nil, make([]float32, 32)) // no rows: no panic
	defer func() {
		if recover() == nil {
			t.Error("w of the wrong length: no panic")
		}
	}()
	DotF16Rows(make([]float32, 2), make([]uint16, 63), make([]float32, 32))
}

// TestFMA32 compares FMA32 with a + b·c computed exactly (big.Float) and
// rounded once to float32: random operands, cancellations, and the
// double-rounding case a plain float64 sum gets wrong (1+2⁻¹¹+2⁻²⁴ is a
// float32 tie; 2⁻⁶⁰ above it must round up, the float64 sum drops it and
// ties to even go down).
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(300).SetFloat64(float64(b))
		x.Mul(x, new(big.Float).SetPrec(300).SetFloat64(float64(c)))
		x.Add(x, new(big.Float).SetPrec(300).SetFloat64(float64(a)))
		f, _ := x.Float32()
		return f
	}
	b12 := float32(1 + 0x1p-12)
	cases := [][3]float32{
		{0x1p-60, b12, b12},
		{-0x1p-60, b12, b12},
		{1, 1, 1},
		{1, -1, 1},
		{0x1p-149, 0x1p-75, 0x1p-75},
		{3.4e38, 2, 1e38},
	}
	if got, want := FMA32(0x1p-60, b12, b12), float32(1+0x1p-11+0x1p-23); got != want {
		t.Errorf("tie case: got %x, want %x", got, want)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		a := float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(40)-20))
		cases = append(cases, [3]float32{a, b, c}, [3]float32{-b * c, b, c}, [3]float32{a, b, -a / b})
	}
	for _, x := range cases {
		got, want := FMA32(x[0], x[1], x[2]), exact(x[0], x[1], x[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsInf(float64(want), 0) && got == want) {
			t.Fatalf("FMA32(%x, %x, %x) = %x, exact %x", x[0], x[1], x[2], got, want)
		}
	}
}

// TestRopeNeoxMatchesRef: RopeNeox against its reference (FMA32 on every
// pair) on random heads of every size up to 2·40 + 1 (groups of eight and
// tails), values of mixed magnitude with zeros of both signs, subnormals,
// infinities and NaN among them.
func TestRopeNeoxMatchesRef(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32}
	val := func() float32 {
		if r.IntN(16) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
	for n := 0; n <= 81; n++ {
		for rep := 0; rep < 50; rep++ {
			x := make([]float32, n)
			cos, sin := make([]float32, n/2+r.IntN(3)), make([]float32, n/2+r.IntN(3))
			for i := range x {
				x[i] = val()
			}
			for i := range n / 2 {
				a := r.Float64() * 100
				cos[i], sin[i] = float32(math.Cos(a)), float32(math.Sin(a))
				if r.IntN(8) == 0 {
					cos[i], sin[i] = val(), val()
				}
			}
			got, want := slices.Clone(x), slices.Clone(x)
			RopeNeox(got, cos, sin)
			ropeNeoxRef(want, cos, sin)
			for i := range got {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("n=%d element %d (x %v): kernel %v, reference %v", n, i, x, got[i], want[i])
				}
			}
		}
	}
}

// TestDotF16RowsStride: rows that start stride elements apart give DotF16
// of each row bit for bit, for row lengths with and without a float64 tail;
// the weights between the rows are NaN, so a kernel that read them would
// show it. Bad strides and short weights panic.
func TestDotF16RowsStride(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 26))
	const nan = 0x7e00 // an F16 quiet NaN
	for _, k := range []int{32, 96, 128, 40, 7} {
		for _, gap := range []int{0, 1, 31, 32, 1440} {
			for _, nr := range []int{1, 2, 5, 33} {
				stride := k + gap
				w := make([]uint16, (nr-1)*stride+k)
				for i := range w {
					w[i] = nan
				}
				for row := range nr {
					copy(w[row*stride:], randF16(r, k, 40))
				}
				x := make([]float32, k)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 3)
				}
				got := make([]float32, nr)
				DotF16RowsStride(got, w, stride, x)
				for row := range got {
					want := DotF16(w[row*stride:row*stride+k], x)
					if math.Float32bits(got[row]) != math.Float32bits(want) {
						t.Fatalf("k=%d stride=%d rows=%d row %d: %v, DotF16 %v (%s)", k, stride, nr, row, got[row], want, Impl())
					}
				}
			}
		}
	}
	for _, c := range []struct {
		rows, k, stride, w int
	}{
		{2, 32, 31, 64},  // stride below the row length
		{2, 32, 40, 71},  // the last row one short
		{1, 32, 32, 31},  // one row, short
		{3, 0, 0, 0},     // empty rows at stride 0 are fine: no panic expected here
		{2, 32, 100, 32}, // the second row missing
	} {
		func() {
			defer func() {
				p := recover()
				if (p == nil) != (c.k == 0) {
					t.Errorf("rows=%d k=%d stride=%d len(w)=%d: panic %v", c.rows, c.k, c.stride, c.w, p)
				}
			}()
			DotF16RowsStride(make([]float32, c.rows), make([]uint16, c.w), c.stride, make([]float32, c.k))
		}()
	}
}
