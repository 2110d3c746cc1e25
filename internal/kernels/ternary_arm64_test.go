//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTernaryNEONKernelsDirect calls the NEON kernels with float steps
// themselves (not through the dispatch, whose NaN fallback would hide a
// kernel that always failed) on finite inputs and checks them against the
// references bit for bit, in every mode, from non-zero accumulators.
func TestTernaryNEONKernelsDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 4))
	modesDiffer := false // the inputs must tell a kernel that ignored fused
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
		start := [8]float32{0.5, -1, 3, 0, -0x1p-7, 7, -2, 1e-3}
		row := data[:q2_0Bytes*nb]
		got, want := q2NEON(row, q, nil, d), dotQ2_0Ref(row, q, d)
		if math.Float32bits(got) != math.Float32bits(want) || got == 0 {
			t.Fatalf("q2NEON nb=%d: %v, reference %v", nb, got, want)
		}
		g8, w8 := start, start
		accQ8_0NEON(&g8, data[:q8_0Bytes*nb], q, d)
		accQ8_0Ref(&w8, data[:q8_0Bytes*nb], q, d)
		if g8 != w8 || g8 == start {
			t.Fatalf("accQ8_0NEON nb=%d: %v, reference %v", nb, g8, w8)
		}
		g8, w8 = start, start
		accQ6KNEON(&g8, data[:q6KBytes*nb], q, d)
		accQ6KRef(&w8, data[:q6KBytes*nb], q, d)
		if g8 != w8 || g8 == start {
			t.Fatalf("accQ6KNEON nb=%d: %v, reference %v", nb, g8, w8)
		}
		for mode, fused := range []bool{false, true} {
			for _, tq1 := range []bool{false, true} {
				g, w := start, start
				if tq1 {
					tq1NEON(data[:tq1Bytes*nb], q, nil, &g, bsums, d, mode+1)
					accTQRef(&w, data[:tq1Bytes*nb], q, bsums, d, fused, true)
				} else {
					tq2NEON(data[:tq2Bytes*nb], q, nil, &g, bsums, d, mode+1)
					accTQRef(&w, data[:tq2Bytes*nb], q, bsums, d, fused, false)
				}
				other := start
				accTQRef(&other, data[:tq2Bytes*nb], q, bsums, d, !fused, false)
				modesDiffer = modesDiffer || (!tq1 && other != w)
				if g != w || g == start {
					t.Fatalf("tq NEON (tq1 %v, fused %v) nb=%d: %v, reference %v", tq1, fused, nb, g, w)
				}
			}
		}
	}
	if !modesDiffer {
		t.Fatal("fused and unfused TQ2_0 references agree on every input: the test cannot see the mode")
	}
}
