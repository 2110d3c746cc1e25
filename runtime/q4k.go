package runtime

import (
	"encoding/binary"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Q4_K (ggml block_q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales and
// mins, qs[128] 4-bit levels; 256 weights in 144 bytes) is a type
// llama-quantize --token-embedding-type / --output-tensor-type can give
// token_embd and the LM head (our converter does not write it). The
// arithmetic follows ggml/src/ggml-quants.c of bitnet.cpp's llama.cpp fork
// 406a5036:
//   - get_rows: dequantize_row_q4_K, y = (d·sc)·q − dmin·m per 32-value
//     sub-block (d·sc·q is exact in float32: an 11-bit f16 significand
//     times a 6-bit scale and a 4-bit level, so fusing the
//     multiply-subtract, as clang may in the FMA build, changes nothing);
//   - LM head: the AVX2 branch of ggml_vec_dot_q4_K_q8_K with Q8_K
//     activations: per block the 8 int32 lanes Σ sc_j·q·y (activation i in
//     lane (i mod 32)/4) take acc_L = fma(d_y·f16(d), float32(lane), acc_L);
//     the mins go to 4 float lanes, lane i = fma(−d_y·f16(dmin),
//     float32(m_2i·s_2i + m_2i+1·s_2i+1), ·) with s_k the Q8_K sum of
//     sub-block k; the result is hsum_float_8(acc) + ((m0+m2)+(m1+m3)).

// q4KBytes is the size of one Q4_K block.
const q4KBytes = quantize.Q4KBytes

// dotQ4K is ggml_vec_dot_q4_K_q8_K (AVX2) for one row of Q4_K blocks and
// the Q8_K activation a.
func dotQ4K(row []byte, a *Activation) float32 {
	var acc [8]float32
	var accM [4]float32
	for b := range a.d {
		blk := (*[q4KBytes]byte)(row[b*q4KBytes:])
		y := (*[qkK]int8)(a.q[b*qkK:])
		bs := a.bsums[b*16 : b*16+16 : b*16+16]
		var sc, mn [8]int32
		for j := range sc {
			s, m := quantize.Q4KScaleMin(j, blk[4:16])
			sc[j], mn[j] = int32(s), int32(m)
		}
		var lanes [8]int32
		for j := 0; j < 4; j++ {
			qs := blk[16+32*j : 16+32*j+32]
			lo, hi := sc[2*j], sc[2*j+1]
			for p, c := range qs {
				lanes[p>>2] += lo*int32(c&0xF)*int32(y[64*j+p]) + hi*int32(c>>4)*int32(y[64*j+32+p])
			}
		}
		d := a.d[b] * f16Table[binary.LittleEndian.Uint16(blk[0:])]
		dmin := -a.d[b] * f16Table[binary.LittleEndian.Uint16(blk[2:])]
		for l := range acc {
			acc[l] = fma32(acc[l], d, float32(lanes[l]))
		}
		for i := range accM {
			s0 := int32(int16(bs[4*i] + bs[4*i+1]))
			s1 := int32(int16(bs[4*i+2] + bs[4*i+3]))
			accM[i] = fma32(accM[i], dmin, float32(mn[2*i]*s0+mn[2*i+1]*s1))
		}
	}
	m := (accM[0] + accM[2]) + (accM[1] + accM[3])
	return sumExp8(acc[:]) + m
}

// embedRowQ4K writes row id of a Q4_K token_embd as float32 (get_rows:
// dequantize_row_q4_K, quantize.DequantizeQ4K).
func (w *Matrix) embedRowQ4K(dst []float32, id int) {
	quantize.DequantizeQ4K(dst[:w.K], w.raw[id*w.rowB:(id+1)*w.rowB])
}
