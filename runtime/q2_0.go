package runtime

import (
	"encoding/binary"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// Mainline llama.cpp's Q2_0 (ggml type 42: blocks of 64 weights, an f16 d
// then 16 bytes of 2-bit codes c with value (c − 1)·d; ggml-common.h
// block_q2_0) as its CPU backend computes it on x86 (ggml-org/llama.cpp
// 3f545bec, ggml/src/ggml-cpu): type_traits_cpu pairs Q2_0 with Q8_0
// activations, which x86's AVX2 quantize_row_q8_0 makes (QuantizeQ8_0: ties
// to even), and x86 has no Q2_0 kernel of its own (arch-fallback.h maps
// ggml_vec_dot_q2_0_q8_0_generic to ggml_vec_dot_q2_0_q8_0), so the dot
// product is the generic C code (dotQ2_0). get_rows is dequantize_row_q2_0.
var _ = registerWeightKernel(weightKernel{
	typ:     gguf.TypeQ2_0,
	setup:   rowMultiple(q2_0Block, "QK2_0", rawBlocks),
	prepare: prepareQ8_0,
	row: func(w *Matrix, r int, a *Activation) float32 {
		return dotQ2_0(w.raw[r*w.rowB:(r+1)*w.rowB], a.q, a.d)
	},
	embed: func(w *Matrix, dst []float32, id int) { dequantQ2_0(dst, w.raw[id*w.rowB:(id+1)*w.rowB]) },
})

// q2_0Block and q2_0BlockBytes are QK2_0 and sizeof(block_q2_0).
const (
	q2_0Block      = 64
	q2_0BlockBytes = 18
)

// dotQ2_0 is ggml_vec_dot_q2_0_q8_0_generic for one row of Q2_0 blocks and
// the Q8_0 activation (q codes, d widened f16 block scales). Each Q2_0 block
// i meets Q8_0 blocks 2i and 2i+1: per half k the exact integer sum
// Σ (c − 1)·q, then, in float32,
//
//	sumi = 0; sumi += d_y[2i+k]·sum_k (k = 0, 1); sumf += d_x[i]·sumi
//
// in ascending block order. The reference build (gcc, -std=gnu11 with
// -mfma: -ffp-contract=fast) fuses each a += b·c into one multiply-add (two
// vfmadd231ss in its ggml_vec_dot_q2_0_q8_0), so every step is one fma32
// (the first, onto 0, is a plain product). Checked bit for bit against
// mainline's logits in q2_0_mainline_test.go. kernels.DotQ2_0 computes it
// (AVX2 + FMA assembly where the CPU has them).
func dotQ2_0(row []byte, q []int8, d []float32) float32 {
	return kernels.DotQ2_0(row, q, d)
}

// dequantQ2_0 is dequantize_row_q2_0: element j of a block is
// float32(c − 1)·d, c at bits 2·(j%4) of byte j/4.
func dequantQ2_0(dst []float32, row []byte) {
	for i := 0; i < len(row)/q2_0BlockBytes; i++ {
		blk := row[i*q2_0BlockBytes : (i+1)*q2_0BlockBytes]
		d := f16Table[binary.LittleEndian.Uint16(blk)]
		for j := range q2_0Block {
			c := blk[2+j/4] >> (2 * (j % 4)) & 3
			dst[i*q2_0Block+j] = float32(int(c)-1) * d
		}
	}
}
