package kernels

import "math"

// DotI2S returns Σ_k code_k·q_k over one packed I2_S row (x86 layout, QK
// 128: each 32-byte block holds 128 ternary codes 0…2, byte j carrying
// elements j, j+32, j+64, j+96 in bits 7-6, 5-4, 3-2, 1-0) and the int8
// activation q of the row's 4·len(row) inputs, with the integer arithmetic
// of bitnet.cpp's AVX2 ggml_vec_dot_i2_i8_s (src/ggml-bitnet-mad.cpp): lane
// pairs summed in int16 over up to 32 blocks, wrapping, then widened (see
// dotI2SRef). The caller subtracts Σq and applies the scales. It panics if
// len(row) is not a multiple of 32 or len(q) < 4·len(row).
func DotI2S(row []byte, q []int8) int32 {
	if len(row)%32 != 0 || len(q) < 4*len(row) {
		panic("kernels: DotI2S length mismatch")
	}
	return dotI2S(row, q)
}

// DotF16 returns Σ_k f16(w_k)·x_k in the summation order of ggml's AVX2 +
// F16C ggml_vec_dot_f16 (see dotF16Ref): 32-element steps into four
// 8-lane float32 accumulators, GGML_F32x8_REDUCE, then the tail of fewer
// than 32 elements added in float64, rounded once to float32. Each product
// is rounded to float32 before it is added. It panics if len(x) < len(w).
func DotF16(w []uint16, x []float32) float32 {
	n := len(w)
	x = x[:n]
	np := n &^ 31
	sum := float64(dotF16Body(w[:np], x[:np]))
	for i := np; i < n; i++ {
		sum += float64(float32(f16Table[w[i]] * x[i]))
	}
	return float32(sum)
}

// QuantizeI8S quantizes one activation row x for the I2_S kernel as
// bitnet.cpp's quantize_row_i8_s does: amax = max(1e-5, max_k |x_k|) in
// float64, scale = float32(127/amax), dst_k =
// clamp(round_half_even(float32(x_k·scale)), −128, 127), and returns scale
// and Σ dst_k. Rows holding a NaN or an infinity take the pure-Go path
// (whose float-to-int conversion of a NaN is the Go compiler's), so the
// result never depends on the kernel. It panics if len(dst) != len(x).
func QuantizeI8S(dst []int8, x []float32) (scale float32, sum int32) {
	if len(dst) != len(x) {
		panic("kernels: QuantizeI8S length mismatch")
	}
	n32 := len(x) &^ 31
	bits := max(absMaxBits(x[:n32]), absMaxBitsRef(x[n32:]))
	if bits >= 0x7f800000 {
		return quantizeI8SRef(dst, x)
	}
	amax := math.Max(1e-5, float64(math.Float32frombits(bits)))
	scale = float32(127 / amax)
	sum = quantI8S(dst[:n32], x[:n32], scale)
	sum += quantI8SRef(dst[n32:], x[n32:], scale)
	return scale, sum
}

// F16ToF32 widens an IEEE binary16 value to float32 (exact).
func F16ToF32(h uint16) float32 { return f16Table[h] }
