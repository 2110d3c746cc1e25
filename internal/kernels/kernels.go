package kernels

import (
	"fmt"
	"math"
)

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

// DotI2S4 returns DotI2S(row, q_t) for four activation rows q0…q3 at once
// (the same integer sums, int16 lane wrap included), reading the packed row
// once: the batched I2_S product (runtime's matMul) takes tokens four at a
// time. It panics if len(row) is not a multiple of 32 or a len(q_t) <
// 4·len(row).
func DotI2S4(row []byte, q0, q1, q2, q3 []int8) [4]int32 {
	n := 4 * len(row)
	if len(row)%32 != 0 || len(q0) < n || len(q1) < n || len(q2) < n || len(q3) < n {
		panic("kernels: DotI2S4 length mismatch")
	}
	return dotI2S4(row, q0, q1, q2, q3)
}

// DotI2SRows writes one I2_S matrix-vector product with bitnet.cpp's
// epilogue: for the len(dst) consecutive packed rows of rows (rowB =
// len(rows)/len(dst) bytes each, a multiple of 32), dst_r =
// ((float32(DotI2S(row_r, q)) − sumf)/s)·scale, each operation rounded to
// float32, where sumf is float32(Σq), s the activation scale and scale the
// tensor's weight scale (ggml_vec_dot_i2_i8_s and its caller in
// bitnet.cpp's ggml.c, as runtime.i2sOut). One call covers a whole range
// of rows, so the per-row call and set-up of DotI2S are paid once. It
// panics if len(rows) is not len(dst)·rowB with rowB a multiple of 32, or
// len(q) < 4·rowB.
func DotI2SRows(dst []float32, rows []byte, q []int8, sumf, s, scale float32) {
	if len(dst) == 0 {
		if len(rows) != 0 {
			panic("kernels: DotI2SRows length mismatch")
		}
		return
	}
	rowB := len(rows) / len(dst)
	if rowB*len(dst) != len(rows) || rowB%32 != 0 || rowB == 0 || len(q) < 4*rowB {
		panic("kernels: DotI2SRows length mismatch")
	}
	dotI2SRows(dst, rows, rowB, q, sumf, s, scale)
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

// DotF16Rows writes DotF16(row_r, x) for the len(dst) consecutive rows of
// len(x) F16 weights in w (the same sums, bit for bit): the F16 output
// head, one call per range of rows. It panics if len(w) != len(dst)·len(x).
func DotF16Rows(dst []float32, w []uint16, x []float32) {
	k := len(x)
	if len(w) != len(dst)*k {
		panic("kernels: DotF16Rows length mismatch")
	}
	DotF16RowsStride(dst, w, k, x)
}

// DotF16RowsStride writes DotF16(row_r, x) for len(dst) rows of len(x) F16
// weights that start stride elements apart in w (row r is
// w[r·stride:][:len(x)]), the same sums as DotF16 bit for bit: the
// attention's K rows of one head (stride: the cache's K row, NHeadKV ×
// HeadDim) and its V columns (stride: the cache's positions), read where
// they lie. For len(dst) > 0 it panics if stride < len(x) or w is shorter
// than (len(dst)−1)·stride + len(x); no rows is a no-op.
func DotF16RowsStride(dst []float32, w []uint16, stride int, x []float32) {
	k := len(x)
	if len(dst) == 0 {
		return
	}
	if stride < k || len(w) < k || (stride > 0 && (len(w)-k)/stride < len(dst)-1) {
		panic(fmt.Sprintf("kernels: DotF16RowsStride %d rows of %d at stride %d in %d weights", len(dst), k, stride, len(w)))
	}
	if k%32 != 0 || k == 0 {
		for r := range dst {
			dst[r] = DotF16(w[r*stride:r*stride+k], x)
		}
		return
	}
	dotF16Rows(dst, w, stride, x)
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

// F32ToF16 converts src to IEEE binary16 bits in dst, rounding to nearest
// even, overflowing to ±Inf, quieting a NaN and keeping the top 10 bits of
// its payload: github.com/x448/float16's Fromfloat32 (ggml's
// GGML_FP32_TO_FP16 with F16C on x86, _cvtss_sh(x, 0)); the runtime's KV
// cache and F16 activations. It panics if len(dst) < len(src).
func F32ToF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic("kernels: F32ToF16 destination too short")
	}
	n8 := len(src) &^ 7
	f32ToF16(dst[:n8], src[:n8])
	f32ToF16Ref(dst[n8:len(src)], src[n8:])
}

// RoundF16 writes src rounded to binary16 precision (F32ToF16, then
// widened back exactly) into dst: the F16 operands of ggml's F16 dot
// products. dst and src may be the same slice. It panics if len(dst) <
// len(src).
func RoundF16(dst, src []float32) {
	if len(dst) < len(src) {
		panic("kernels: RoundF16 destination too short")
	}
	n8 := len(src) &^ 7
	roundF16s(dst[:n8], src[:n8])
	roundF16sRef(dst[n8:len(src)], src[n8:])
}

// F16ToF32 widens an IEEE binary16 value to float32 (exact).
func F16ToF32(h uint16) float32 { return f16Table[h] }

// AddAbs4x8 adds |x[32i+8k+l]| to acc[8k+l] for every 32-float row i of x,
// in row order, each addition rounded to float32: the level-0 block sum of
// torch's cascade sum of |x| with AVX2's 8-lane vectors and four
// interleaved accumulators (quantize.blockSum; SumKernel.cpp multi_row_sum),
// so the converter's abs-mean keeps torch's exact bits. It panics if
// len(x) is not a multiple of 32.
func AddAbs4x8(acc *[32]float32, x []float32) {
	if len(x)%32 != 0 {
		panic("kernels: AddAbs4x8 length is not a multiple of 32")
	}
	addAbs4x8(acc, x)
}

// DecodeBF16 widens len(dst) little-endian bf16 values of raw to float32
// (exact: the bits shifted left by 16) and reports whether one of them is
// ±Inf or NaN. It panics if len(raw) < 2·len(dst).
func DecodeBF16(dst []float32, raw []byte) (nonFinite bool) {
	if len(raw) < 2*len(dst) {
		panic("kernels: DecodeBF16 source too short")
	}
	n16 := len(dst) &^ 15
	nonFinite = decodeBF16(dst[:n16], raw[:2*n16])
	return decodeBF16Ref(dst[n16:], raw[2*n16:]) || nonFinite
}

// PackI2S packs ternary values t (−1, 0, 1) into the x86 I2_S layout of
// bitnet.cpp's quantize_i2_s (QK 128): for block b and j < 32,
// dst[32b+j] = c[128b+j]<<6 | c[128b+j+32]<<4 | c[128b+j+64]<<2 |
// c[128b+j+96] with c = t+1. It returns false, leaving dst unspecified,
// when a value is outside {−1, 0, 1}. It panics if len(t) is not a
// multiple of 128 or len(dst) != len(t)/4.
func PackI2S(dst []byte, t []int8) (ok bool) {
	if len(t)%128 != 0 || len(dst) != len(t)/4 {
		panic("kernels: PackI2S length mismatch")
	}
	return packI2S(dst, t)
}

// Ternarize writes dst_k = clamp(round_half_even(float32(x_k·inv)), −1, 1)
// (+1 above 0.5, −1 below −0.5, else 0; a NaN product gives 0), the second
// half of BitNet's weight_quant (quantize.TernarizeWith). It panics if
// len(dst) != len(x).
func Ternarize(dst []int8, x []float32, inv float32) {
	if len(dst) != len(x) {
		panic("kernels: Ternarize length mismatch")
	}
	n32 := len(x) &^ 31
	ternarize(dst[:n32], x[:n32], inv)
	ternarizeRef(dst[n32:], x[n32:], inv)
}

// BF16ToF16 converts the little-endian bf16 values of raw (len(raw) even) to
// little-endian F16 bits in out: widened exactly, rounded to nearest even
// (quantize.F32ToF16 of quantize.BF16ToF32). It reports whether every value
// had |b| < 0x4780, i.e. was finite and below 65536 (so within F16's
// range); when not, out is unspecified and the caller takes its checked
// path. It panics if len(raw) is odd or len(out) < len(raw).
func BF16ToF16(out, raw []byte) (inRange bool) {
	if len(raw)%2 != 0 || len(out) < len(raw) {
		panic("kernels: BF16ToF16 length mismatch")
	}
	n32 := len(raw) &^ 31
	inRange = bf16ToF16(out[:n32], raw[:n32])
	return bf16ToF16Ref(out[n32:], raw[n32:]) && inRange
}

// UnpackU8 unpacks an HF packed U8 ternary tensor's bytes: codes[i·stride+k]
// = min(((packed[k]>>2i)&3) − 1, 1) for the four bit pairs i of every byte
// k (quantize.UnpackPackedU8's layout with stride = the tensor's byte count;
// a caller splitting the work passes codes[lo:] and packed[lo:hi]). It
// panics if len(codes) < 3·stride + len(packed) or stride < len(packed).
func UnpackU8(codes []int8, stride int, packed []byte) {
	if stride < len(packed) || len(codes) < 3*stride+len(packed) {
		panic("kernels: UnpackU8 length mismatch")
	}
	n32 := len(packed) &^ 31
	unpackU8(codes, stride, packed[:n32])
	unpackU8Ref(codes[n32:], stride, packed[n32:])
}

// AbsSumBF16Blocks is AddAbs4x8 over bf16 input, block by block: for every
// block b of blockLen little-endian bf16 values of raw (blockLen a positive
// multiple of 32), sums[32b:32b+32] is set to Σ_i |x[b·blockLen+32i+8k+l]|
// at index 8k+l, accumulated from zero in row order i with float32 rounding
// after each addition — the level-0 block sums of torch's cascade sum of |x|
// (quantize.AbsMeanFromBlocks; aten/src/ATen/native/cpu/SumKernel.cpp
// multi_row_sum) computed straight from the checkpoint's bytes, without a
// float32 copy. It reports whether any value is ±Inf or NaN (exponent bits
// all set); the sums are then unspecified. It panics if blockLen is not a
// positive multiple of 32 or len(raw) != 2·blockLen·len(sums)/32.
func AbsSumBF16Blocks(sums []float32, raw []byte, blockLen int) (nonFinite bool) {
	if blockLen <= 0 || blockLen%32 != 0 || len(sums)%32 != 0 || len(raw) != 2*blockLen*(len(sums)/32) {
		panic("kernels: AbsSumBF16Blocks length mismatch")
	}
	return absSumBF16Blocks(sums, raw, blockLen)
}

// TernarizePackI2S is Ternarize followed by PackI2S on bf16 input, 128
// values at a time: the little-endian bf16 values of raw are widened
// exactly, multiplied by inv, ternarized (+1 above 0.5, −1 below −0.5, else
// 0; a NaN product gives 0) and packed in the x86 I2_S layout of bitnet.cpp's
// quantize_i2_s into dst, len(raw)/8 bytes, so a projection goes from the
// checkpoint's bytes to the GGUF's without float32 or code buffers. It
// panics if len(raw) is not a multiple of 256 (128 values) or len(dst) !=
// len(raw)/8.
func TernarizePackI2S(dst, raw []byte, inv float32) {
	if len(raw)%256 != 0 || len(dst) != len(raw)/8 {
		panic("kernels: TernarizePackI2S length mismatch")
	}
	ternarizePackI2S(dst, raw, inv)
}
