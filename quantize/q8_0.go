package quantize

import (
	"encoding/binary"
	"math"
)

// Q8_0 block geometry (ggml block_q8_0: an f16 scale d, then 32 int8).
const (
	QK8_0      = 32
	Q8_0Bytes  = 34
	q8_0MaxInt = 127
)

// QuantizeQ8_0 encodes x (len a multiple of 32) as ggml Q8_0 blocks into dst
// (len(x)/32·34 bytes), byte for byte as ggml-org/llama.cpp
// ggml/src/ggml-quants.c quantize_row_q8_0_ref: per block d = max|x|/127 in
// float32, id = 1/d (0 when d is 0), q = roundf(x·id) (half away from zero),
// d stored as f16. It panics on a length mismatch.
func QuantizeQ8_0(dst []byte, x []float32) {
	if len(x)%QK8_0 != 0 || len(dst) != len(x)/QK8_0*Q8_0Bytes {
		panic("quantize: QuantizeQ8_0: length mismatch")
	}
	for b := 0; b < len(x)/QK8_0; b++ {
		blk := x[b*QK8_0 : (b+1)*QK8_0]
		out := dst[b*Q8_0Bytes : (b+1)*Q8_0Bytes]
		var amax float32
		for _, v := range blk {
			amax = max(amax, abs32(v))
		}
		d := amax / q8_0MaxInt
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(out, F32ToF16(d))
		for j, v := range blk {
			out[2+j] = byte(int8(math.Round(float64(float32(v * id)))))
		}
	}
}

// DequantizeQ8_0 decodes Q8_0 blocks (ggml dequantize_row_q8_0: q·d in
// float32) into dst (len(src)/34·32 values). It panics on a length mismatch.
func DequantizeQ8_0(dst []float32, src []byte) {
	if len(src)%Q8_0Bytes != 0 || len(dst) != len(src)/Q8_0Bytes*QK8_0 {
		panic("quantize: DequantizeQ8_0: length mismatch")
	}
	for b := 0; b < len(src)/Q8_0Bytes; b++ {
		in := src[b*Q8_0Bytes : (b+1)*Q8_0Bytes]
		d := F16ToF32(binary.LittleEndian.Uint16(in))
		for j := 0; j < QK8_0; j++ {
			dst[b*QK8_0+j] = float32(int8(in[2+j])) * d
		}
	}
}
