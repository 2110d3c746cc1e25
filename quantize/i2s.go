package quantize

// decode2 maps the low 2 bits of c to a ternary value (0 → -1, 1 → 0, 2 and
// 3 → +1).
func decode2(c byte) int8 {
	return min(int8(c&3)-1, 1)
}

// UnpackPackedU8 unpacks a pre-quantized HF uint8 weight (BitNet-b1.58-2B-4T
// style, spec conversion.md §2.4, convert-hf-to-gguf-bitnet.py unpack_weights)
// of HF shape [rows, cols] into ternary values of HF shape [4·rows, cols]
// along axis 0: dst[(i·rows + r)·cols + c] = ((packed[r·cols+c] >> 2i) & 3) − 1
// for i = 0..3, so bits 1-0 give the first rows rows and bits 7-6 the last.
// Code 3 (which would be +2) is clamped to +1. It panics when
// len(packed) != rows·cols or len(dst) != 4·rows·cols.
func UnpackPackedU8(dst []int8, packed []byte, rows, cols int) {
	if rows < 0 || cols < 0 || len(packed) != rows*cols {
		panic("quantize: UnpackPackedU8: len(packed) != rows*cols")
	}
	if len(dst) != 4*len(packed) {
		panic("quantize: UnpackPackedU8: len(dst) != 4*rows*cols")
	}
	n := len(packed)
	for i := 0; i < 4; i++ {
		out := dst[i*n : (i+1)*n]
		shift := 2 * uint(i)
		for k, v := range packed {
			out[k] = decode2(v >> shift)
		}
	}
}
