//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTernaryFMAKernelsDirect calls the FMA kernels themselves (not through
// the dispatch, whose NaN fallback would hide a kernel that always failed)
// on finite inputs and checks them against the references bit for bit.
func TestTernaryFMAKernelsDirect(t *testing.T) {
	if !useFMA {
		t.Skip("no AVX2+FMA here")
	}
	r := rand.New(rand.NewPCG(25, 3))
	for nb := 1; nb <= 9; nb++ {
		data := make([]byte, q6KBytes*nb)
		for i := range data {
			data[i] = byte(r.Uint32())
			if i%2 == 1 {
				data[i] = byte(0x10 + r.IntN(0x2c)) // finite f16 wherever a scale lands
			}
		}
		q := make([]int8, 256*nb)
		for i := range q {
			q[i] = int8(r.Uint32())
		}
		d := make([]float32, 2*nb)
		for i := range d {
			d[i] = float32(r.Float64()-0.5) / 64
		}
		bsums := make([]int16, 16*nb)
		for i := range bsums {
			bsums[i] = int16(r.IntN(2048) - 1024)
		}
		row := data[:q2_0Bytes*nb]
		got, want := dotQ2_0AVX2(row, q, d), dotQ2_0Ref(row, q, d)
		if math.Float32bits(got) != math.Float32bits(want) || got == 0 {
			t.Fatalf("dotQ2_0AVX2 nb=%d: %v, reference %v", nb, got, want)
		}
		var g8, w8 [8]float32
		accQ8_0AVX2(&g8, data[:q8_0Bytes*nb], q, d)
		accQ8_0Ref(&w8, data[:q8_0Bytes*nb], q, d)
		if g8 != w8 || g8 == [8]float32{} {
			t.Fatalf("accQ8_0AVX2 nb=%d: %v, reference %v", nb, g8, w8)
		}
		g8, w8 = [8]float32{}, [8]float32{}
		accQ6KAVX2(&g8, data[:q6KBytes*nb], q, d)
		accQ6KRef(&w8, data[:q6KBytes*nb], q, d)
		if g8 != w8 || g8 == [8]float32{} {
			t.Fatalf("accQ6KAVX2 nb=%d: %v, reference %v", nb, g8, w8)
		}
		for _, fused := range []bool{false, true} {
			for _, tq1 := range []bool{false, true} {
				var g, w [8]float32
				if tq1 {
					accTQ1_0AVX2(&g, data[:tq1Bytes*nb], q, bsums, d, fused)
					accTQRef(&w, data[:tq1Bytes*nb], q, bsums, d, fused, true)
				} else {
					accTQ2_0AVX2(&g, data[:tq2Bytes*nb], q, bsums, d, fused)
					accTQRef(&w, data[:tq2Bytes*nb], q, bsums, d, fused, false)
				}
				if g != w || g == [8]float32{} {
					t.Fatalf("accTQ (tq1 %v, fused %v) nb=%d: %v, reference %v", tq1, fused, nb, g, w)
				}
			}
		}
	}
}
