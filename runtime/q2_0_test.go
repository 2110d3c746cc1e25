package runtime

import (
	"bytes"
	"math"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// q2_0Row is one hand-made Q2_0 row of 64 weights with d = 0.25 (f16
// 0x3400): elements 0, 1, 2 hold codes 2, 0, 3 (+1, −1, +2), elements 32,
// 33 codes 0, 2 (−1, +1), every other code 1 (0).
func q2_0Row() []byte {
	row := append([]byte{0x00, 0x34}, bytes.Repeat([]byte{0x55}, 16)...)
	row[2] = 2 | 0<<2 | 3<<4 | 1<<6  // 0x72
	row[10] = 0 | 2<<2 | 1<<4 | 1<<6 // 0x58
	return row
}

// TestQ2_0MatVec runs a hand-made Q2_0 row on an activation whose Q8_0
// codes are worked out by hand: both blocks have max |x| = 127, so d = 1 and
// q = x rounded, ties to even as AVX2's quantize_row_q8_0 rounds them
// (62.5 → 62, 0.5 → 0; roundf would give 63 and 1, and 111.25).
// sum0 = 1·127 + (−1)·(−64) + 2·62 = 315, sum1 = (−1)·(−127) + 1·0 = 127,
// out = 0.25·(1·315 + 1·127) = 110.5. get_rows gives (c − 1)·d.
func TestQ2_0MatVec(t *testing.T) {
	w, err := NewMatrix(gguf.TypeQ2_0, 64, 1, q2_0Row())
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 64)
	x[0], x[1], x[2] = 127, -63.5, 62.5
	x[32], x[33] = -127, 0.5
	dst := make([]float32, 1)
	w.MatVec(dst, x, nil, 1)
	if dst[0] != 110.5 {
		t.Errorf("Q2_0 row = %v, want 110.5", dst[0])
	}
	batch := [][]float32{make([]float32, 1), make([]float32, 1)}
	w.MatMul(batch, [][]float32{x, x}, 2)
	if batch[0][0] != 110.5 || batch[1][0] != 110.5 {
		t.Errorf("Q2_0 MatMul = %v, want 110.5 twice", batch)
	}
	emb := make([]float32, 64)
	w.embedRow(emb, 0)
	want := make([]float32, 64)
	want[0], want[1], want[2], want[32], want[33] = 0.25, -0.25, 0.5, -0.25, 0.25
	for i := range want {
		if emb[i] != want[i] {
			t.Fatalf("get_rows element %d = %v, want %v", i, emb[i], want[i])
		}
	}
}

// TestQ2_0DotFused pins the float order of ggml_vec_dot_q2_0_q8_0_generic
// with the multiply-adds fused, as gcc -ffp-contract=fast compiles it: two
// blocks with d_x = 1 + 2⁻¹⁰ (f16 0x3C01) and Q8_0 scales 1, 2⁻²³. Block 0
// has sums +1, +1: sumi = 1 + 2⁻²³, sumf = round((1 + 2⁻¹⁰)(1 + 2⁻²³)) =
// 1 + 2⁻¹⁰ + 2⁻²³ (the 2⁻³³ term is lost). Block 1 has sums −1, −1, so
// the fused sumf += d_x·sumi leaves exactly the lost −2⁻³³; an unfused
// product and sum would give 0.
func TestQ2_0DotFused(t *testing.T) {
	blk := func(c byte) []byte {
		b := append([]byte{0x01, 0x3C}, bytes.Repeat([]byte{0x55}, 16)...)
		b[2] = c | 1<<2 | 1<<4 | 1<<6
		b[10] = c | 1<<2 | 1<<4 | 1<<6
		return b
	}
	row := append(blk(2), blk(0)...)
	q := make([]int8, 128)
	q[0], q[32], q[64], q[96] = 1, 1, 1, 1
	d := []float32{1, 0x1p-23, 1, 0x1p-23}
	if got, want := dotQ2_0(row, q, d), float32(-0x1p-33); got != want {
		t.Errorf("dotQ2_0 = %g, want %g", got, want)
	}
	if got := dotQ2_0(row[:18], q, d); got != float32(1+0x1p-10+0x1p-23) {
		t.Errorf("one block = %.10g, want 1 + 2⁻¹⁰ + 2⁻²³", got)
	}
}

// TestQ2_0Refusals: a row length that is not a multiple of 64 and a short
// buffer are refused, the data's NaN scale is computed as mainline does.
func TestQ2_0Refusals(t *testing.T) {
	if _, err := NewMatrix(gguf.TypeQ2_0, 96, 1, make([]byte, 64)); err == nil {
		t.Error("K = 96 accepted")
	}
	if _, err := NewMatrix(gguf.TypeQ2_0, 64, 2, q2_0Row()); err == nil {
		t.Error("18 bytes accepted for two rows")
	}
	row := q2_0Row()
	row[0], row[1] = 0x00, 0x7E // NaN d
	w, err := NewMatrix(gguf.TypeQ2_0, 64, 1, row)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 64)
	x[0] = 1
	dst := make([]float32, 1)
	w.MatVec(dst, x, nil, 1)
	if !math.IsNaN(float64(dst[0])) {
		t.Errorf("NaN d gives %v", dst[0])
	}
}
