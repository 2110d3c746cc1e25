package kernels

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// checkIQ2BNBatch compares DotIQ2BNRowsBatch on nr rows and len(d) tokens
// with DotIQ2BNRows, row by row and token by token, bit for bit (NaNs
// alike).
func checkIQ2BNBatch(t *testing.T, rows []byte, rowB int, q []int8, d, minus [][4]float32) {
	t.Helper()
	T, k := len(d), 4*(rowB-4)
	nr := len(rows) / rowB
	got := make([]float32, nr*T)
	DotIQ2BNRowsBatch(got, rows, rowB, q, d, minus)
	want := make([]float32, nr)
	for tok := range T {
		DotIQ2BNRows(want, rows, rowB, q[tok*k:(tok+1)*k], &d[tok], &minus[tok])
		for r, w := range want {
			if g := got[r*T+tok]; !sameF32(g, w) {
				t.Fatalf("T=%d rowB=%d row %d token %d: batch %v (%x), one token %v (%x)", T, rowB, r, tok, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
}

// TestDotIQ2BNRowsBatch: the eight-token kernel (and the one-token path
// for other batch sizes) gives every row's and token's DotIQ2BNRows
// result, on rows of the 2B-4T widths, random codes, activations of the
// int8 extremes, scales of any sign and magnitude, a NaN row scale and a
// NaN group scale.
func TestDotIQ2BNRowsBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 8))
	for _, k := range []int{64, 512, 2560, 6912} {
		for _, T := range []int{8, 3, 1} {
			rowB := 4 + k/4
			nr := 37
			rows := make([]byte, nr*rowB)
			for i := range rows {
				rows[i] = byte(r.Uint32())
			}
			for row := range nr {
				s := float32(r.NormFloat64())
				if row == 5 {
					s = float32(math.NaN())
				}
				bits := math.Float32bits(s)
				rows[row*rowB], rows[row*rowB+1], rows[row*rowB+2], rows[row*rowB+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
			}
			q := make([]int8, T*k)
			for i := range q {
				q[i] = int8(r.Uint32())
				if i%97 == 0 {
					q[i] = -128
				}
			}
			d, minus := make([][4]float32, T), make([][4]float32, T)
			for tok := range T {
				for g := range 4 {
					d[tok][g] = float32(math.Ldexp(r.Float64(), r.IntN(40)-30))
					minus[tok][g] = d[tok][g] * float32(r.IntN(8000)-4000)
				}
			}
			if T == 8 {
				d[6][2] = float32(math.NaN())
			}
			checkIQ2BNBatch(t, rows, rowB, q, d, minus)
		}
	}
}

// FuzzDotIQ2BNRowsBatch: DotIQ2BNRowsBatch of eight tokens equals
// DotIQ2BNRows token by token on any rows (iq2bnFuzzCase's layout, as
// FuzzDotIQ2BNRows).
func FuzzDotIQ2BNRowsBatch(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0x3f, 0x1b, 0xe4, 0x40}, 700))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, rowB, q, d, minus, ok := iq2bnFuzzCase(data, 8)
		if ok {
			checkIQ2BNBatch(t, rows, rowB, q, d, minus)
		}
	})
}
