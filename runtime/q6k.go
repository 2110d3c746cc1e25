package runtime

import (
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Q6_K (ggml block_q6_K: ql[128] low 4 bits, qh[64] high 2 bits, int8
// scales[16], f16 d; 256 weights in 210 bytes) is the type bitnet.cpp's and
// llama.cpp's llama-quantize --token-embedding-type / --output-tensor-type
// Q6_K give token_embd and the LM head. As an LM head it multiplies with Q8_K
// activations (quantizeQ8K) in the order of the AVX2 branch of
// ggml_vec_dot_q6_K_q8_K (ggml/src/ggml-quants.c of bitnet.cpp's llama.cpp
// fork 406a5036): for each 32-activation chunk (half h, quarter k) the
// 16-bit products (q − 32)·y of byte pairs, times the chunk half's int8
// scale, land in int32 lane (i mod 32)/4 — exact integers; per block the
// eight lanes take acc_L = fma(d_y·f16(d_x), float32(lane_L), acc_L), then
// hsum_float_8 (sumExp8). As token_embd a row is dequantized as
// dequantize_row_q6_K does (quantize.DequantizeQ6K, ggml's get_rows).

// q6KBytes is the size of one Q6_K block.
const q6KBytes = quantize.Q6KBytes

// dotQ6K is ggml_vec_dot_q6_K_q8_K (AVX2) for one row of Q6_K blocks and
// the Q8_K activation a: the lanes and their accumulation from
// kernels.AccQ6K (AVX2 + FMA assembly where the CPU has them), then
// sumExp8.
func dotQ6K(row []byte, a *Activation) float32 {
	var acc [8]float32
	kernels.AccQ6K(&acc, row[:len(a.d)*q6KBytes], a.q, a.d)
	return sumExp8(acc[:])
}

// embedRowQ6K writes row id of a Q6_K token_embd as float32 (get_rows:
// dequantize_row_q6_K).
func (w *Matrix) embedRowQ6K(dst []float32, id int) {
	quantize.DequantizeQ6K(dst[:w.K], w.raw[id*w.rowB:(id+1)*w.rowB])
}
