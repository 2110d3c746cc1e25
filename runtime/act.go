package runtime

import "github.com/bitnet-convert/bitnet-convert/internal/kernels"

// QuantizeI8S quantizes one activation row x for the I2_S kernel, as
// bitnet.cpp's quantize_row_i8_s (ggml-bitnet-mad.cpp) does:
//
//	amax  = max(1e-5, max_k |x_k|)            (in float64)
//	scale = float32(127 / amax)
//	q_k   = clamp(round_half_even(float32(x_k·scale)), −128, 127)
//	sum   = Σ_k q_k
//
// dst must have len(x) elements; it returns scale (the activation scale, so a
// value is q/scale) and sum. It panics if the lengths differ. The work is
// internal/kernels.QuantizeI8S (assembly beside the pure-Go reference, same
// bits).
func QuantizeI8S(dst []int8, x []float32) (scale float32, sum int32) {
	if len(dst) != len(x) {
		panic("runtime: QuantizeI8S length mismatch")
	}
	return kernels.QuantizeI8S(dst, x)
}

// q8Block is the number of elements of one Q8_0 block.
const q8Block = 32

// QuantizeQ8_0 quantizes x (len a multiple of 32) to Q8_0 blocks the way
// ggml's AVX2 quantize_row_q8_0 does: per block amax = max|x| (float32),
// d = f16(amax/127), id = 127/amax (0 when amax is 0), q = round_half_even(x·id).
// qs receives len(x) codes and d one widened f16 scale per block
// (kernels.QuantizeQ8_0, assembly on amd64). It panics on length
// mismatches.
func QuantizeQ8_0(qs []int8, d []float32, x []float32) {
	if len(x)%q8Block != 0 || len(qs) != len(x) || len(d) != len(x)/q8Block {
		panic("runtime: QuantizeQ8_0 length mismatch")
	}
	kernels.QuantizeQ8_0(qs, d, x)
}
