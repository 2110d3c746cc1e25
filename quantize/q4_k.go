package quantize

import "encoding/binary"

// Q4KBytes is the size of one Q4_K block (ggml block_q4_K: f16 d, f16 dmin,
// 12 bytes of packed 6-bit scales and mins, qs[128] 4-bit levels; QKK = 256
// weights). llama-quantize writes it for token_embd / output with
// --token-embedding-type / --output-tensor-type q4_k; our converter does not.
const Q4KBytes = 144

// Q4KScaleMin returns the 6-bit scale and min of sub-block j (0…7, 32
// weights each) from a Q4_K block's 12 packed bytes q (ggml-quants.c
// get_scale_min_k4).
func Q4KScaleMin(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// DequantizeQ4K decodes Q4_K blocks into dst (len(src)/144·256 values) as
// ggml's dequantize_row_q4_K does: y = (d·sc)·q − dmin·m per 32-value
// sub-block, in float32 (d·sc·q is exact in float32, so a fused
// multiply-subtract gives the same bits). It panics on a length mismatch.
func DequantizeQ4K(dst []float32, src []byte) {
	if len(src)%Q4KBytes != 0 || len(dst) != len(src)/Q4KBytes*QKK {
		panic("quantize: DequantizeQ4K: length mismatch")
	}
	for b := 0; b < len(src)/Q4KBytes; b++ {
		blk := src[b*Q4KBytes : (b+1)*Q4KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(blk[0:]))
		dmin := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		y := dst[b*QKK : (b+1)*QKK]
		for j := 0; j < 4; j++ {
			s1, m1 := Q4KScaleMin(2*j, blk[4:16])
			s2, m2 := Q4KScaleMin(2*j+1, blk[4:16])
			d1, mm1 := float32(d*float32(s1)), float32(dmin*float32(m1))
			d2, mm2 := float32(d*float32(s2)), float32(dmin*float32(m2))
			for l, c := range blk[16+32*j : 16+32*j+32] {
				y[64*j+l] = float32(d1*float32(c&0xF)) - mm1
				y[64*j+32+l] = float32(d2*float32(c>>4)) - mm2
			}
		}
	}
}

// Q4KStep returns the level step d·sc of every sub-block of one Q4_K block
// (the quantity a dequantized value's rounding error is measured in) and
// the block's min step dmin (one unit of the 6-bit mins).
func Q4KStep(blk []byte) (steps [8]float32, dmin float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk[0:]))
	dmin = F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
	for j := range steps {
		s, _ := Q4KScaleMin(j, blk[4:16])
		steps[j] = float32(d * float32(s))
	}
	return steps, dmin
}
