package kernels

import (
	"fmt"
	"math"
)

// QuantizeQ8K64 quantizes x (len k, a multiple of 16) to ik_llama.cpp's
// Q8_K64 as its x86 build does (ikawrakow/ik_llama.cpp,
// ggml/src/iqk/iqk_quantize.cpp, quantize_row_q8_K64_ref, __AVX__
// branch): element e is in group (e mod 16)/4; d[g] = max_g|x|/127 and,
// where d[g] > 0, each code is round-half-even(x·(1/d[g])) with the
// product rounded to float32, saturated to int8 (the reference's
// _mm_packs_epi32 / _mm_packs_epi16); a group of zeros has d = 0 and codes
// 0. q (len k) gets the codes in element order and minus[g] =
// d[g]·float32(Σ of group g's codes). Rows whose maxima are finite with
// finite inverse scales take the assembly absolute maximum and rounding
// where there is one; the others (NaN, ±Inf, tiny subnormal maxima) the
// pure-Go reference, so the result never depends on the kernel. It panics
// on mismatched lengths.
func QuantizeQ8K64(q []int8, d, minus *[4]float32, x []float32) {
	if len(q) != len(x) || len(x)%16 != 0 {
		panic(fmt.Sprintf("kernels: QuantizeQ8K64 lengths %d, %d", len(q), len(x)))
	}
	bits := absMaxQ8K64(x)
	var id [4]float32
	for g, b := range bits {
		if b >= 0x7f800000 {
			quantizeQ8K64Ref(q, d, minus, x)
			return
		}
		d[g] = math.Float32frombits(b) / 127
		if d[g] > 0 {
			id[g] = 1 / d[g]
			if math.IsInf(float64(id[g]), 0) {
				quantizeQ8K64Ref(q, d, minus, x)
				return
			}
		}
	}
	sum := quantQ8K64(q, x, &id)
	for g := range sum {
		minus[g] = d[g] * float32(sum[g])
	}
}

// quantizeQ8K64Ref is QuantizeQ8K64 in Go, for every input.
func quantizeQ8K64Ref(q []int8, d, minus *[4]float32, x []float32) {
	var mx [4]float32
	for e, v := range x {
		g := e % 16 / 4
		if a := float32(math.Abs(float64(v))); a > mx[g] {
			mx[g] = a
		}
	}
	var id [4]float32
	for g := range mx {
		d[g] = mx[g] / 127
		if d[g] > 0 {
			id[g] = 1 / d[g]
		}
	}
	var sum [4]int32
	for e, v := range x {
		g := e % 16 / 4
		r := math.RoundToEven(float64(id[g] * v))
		r = max(-128, min(127, r))
		q[e] = int8(r)
		sum[g] += int32(q[e])
	}
	for g := range sum {
		minus[g] = d[g] * float32(sum[g])
	}
}

// absMaxQ8K64Ref returns, per group (e mod 16)/4, the largest
// bits(x_e) & 0x7fffffff (|x_e| as an unsigned integer, NaNs above ∞).
func absMaxQ8K64Ref(x []float32) (m [4]uint32) {
	for e, v := range x {
		g := e % 16 / 4
		m[g] = max(m[g], math.Float32bits(v)&0x7fffffff)
	}
	return m
}

// quantQ8K64Ref is the rounding pass of quantizeQ8K64Ref for finite
// products id[g]·x_e: it writes the codes and returns their sums per group.
func quantQ8K64Ref(q []int8, x []float32, id *[4]float32) (sum [4]int32) {
	for e, v := range x {
		g := e % 16 / 4
		r := math.RoundToEven(float64(id[g] * v))
		q[e] = int8(max(-128, min(127, r)))
		sum[g] += int32(q[e])
	}
	return sum
}
