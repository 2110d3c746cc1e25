package runtime

import "github.com/bitnet-convert/bitnet-convert/internal/kernels"

// The float dot products below reproduce the summation order of ggml's
// x86 AVX2 vec_dot_f32 / vec_dot_f16 (ggml.c of bitnet.cpp's fork
// 406a5036): four accumulators of eight lanes each take fused multiply-adds
// over 32-element steps, the accumulators are added pairwise (0+2, 1+3, then
// 0+1), the eight lanes are reduced as (l0+l4)+(l1+l5) and (l2+l6)+(l3+l7),
// and a tail shorter than 32 is added element by element. Matching the
// order, not just the value, keeps the F16 roundings that follow (KV cache,
// attention operands, LM head) on the same side as the reference.
//
// Fused multiply-add in float32 is kernels.FMA32: a + b·c rounded once, as
// the reference's hardware fma does, ties included.

// fma32 returns a + b·c rounded once to float32: kernels.FMA32's bits,
// through the hardware float64 FMA with the exact fallback
// (kernels.FMA32Fast).
func fma32(a, b, c float32) float32 { return kernels.FMA32Fast(a, b, c) }

// reduce8x4 is GGML_F32x8_REDUCE on four 8-lane accumulators.
func reduce8x4(acc *[4][8]float32) float32 {
	var x [8]float32
	for l := range x {
		a := acc[0][l] + acc[2][l]
		b := acc[1][l] + acc[3][l]
		x[l] = a + b
	}
	t0, t1, t2, t3 := x[0]+x[4], x[1]+x[5], x[2]+x[6], x[3]+x[7]
	return (t0 + t1) + (t2 + t3)
}

// dotF32ggml is ggml_vec_dot_f32 (AVX2): the result is float32.
func dotF32ggml(w, x []float32) float32 {
	n := len(w)
	x = x[:n]
	np := n &^ 31
	var acc [4][8]float32
	for i := 0; i < np; i += 32 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 8; l++ {
				k := i + j*8 + l
				acc[j][l] = fma32(acc[j][l], w[k], x[k])
			}
		}
	}
	sum := reduce8x4(&acc)
	for i := np; i < n; i++ {
		// The reference's scalar tail `sumf += x[i]*y[i]` is contracted
		// to a fused multiply-add by clang; fma32 does the same on every
		// GOARCH.
		sum = fma32(sum, w[i], x[i])
	}
	return sum
}

// dotF16ggml is ggml_vec_dot_f16 (AVX2 + F16C) for a row of F16 bits and
// an activation already rounded to F16 values (as float32): the order above,
// the tail summed in float64 (ggml_float), as is the result. Products of two
// F16 values are exact in float32. internal/kernels.DotF16 has the assembly
// and the pure-Go reference.
func dotF16ggml(w []uint16, x []float32) float32 { return kernels.DotF16(w, x) }

// dotF16Wide is dotF16ggml on a weight row already widened to float32 (the
// same products, the same order): MatMul widens each F16 row once for a
// batch of tokens. The products are exact (two F16 values), so a fused
// multiply-add gives the same sums.
func dotF16Wide(w []float32, x []float32) float32 {
	n := len(w)
	x = x[:n]
	np := n &^ 31
	var acc [4][8]float32
	for j := 0; j < 4; j++ {
		var a0, a1, a2, a3, a4, a5, a6, a7 float32
		for i := j * 8; i < np; i += 32 {
			wi := (*[8]float32)(w[i : i+8])
			xi := (*[8]float32)(x[i : i+8])
			a0 += wi[0] * xi[0]
			a1 += wi[1] * xi[1]
			a2 += wi[2] * xi[2]
			a3 += wi[3] * xi[3]
			a4 += wi[4] * xi[4]
			a5 += wi[5] * xi[5]
			a6 += wi[6] * xi[6]
			a7 += wi[7] * xi[7]
		}
		acc[j] = [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
	}
	sum := float64(reduce8x4(&acc))
	for i := np; i < n; i++ {
		p := w[i] * x[i]
		sum += float64(p)
	}
	return float32(sum)
}

// sumExp8 is the horizontal sum of eight float lanes as the reference's AVX2
// code does it (ggml_vec_soft_max_f32, hsum_float_8): (e0+e4)+(e2+e6) plus
// (e1+e5)+(e3+e7), in float32.
func sumExp8(e []float32) float32 {
	a0, a1, a2, a3 := e[0]+e[4], e[1]+e[5], e[2]+e[6], e[3]+e[7]
	b0, b1 := a0+a2, a1+a3
	return b0 + b1
}

// dotF16F32 multiplies an F16 row with an f32 vector, exact products summed
// in float64 (the bitnet-b1.58 reference keeps attention operands in f32).
func dotF16F32(w []uint16, x []float32) float32 {
	x = x[:len(w)]
	var acc float64
	for i, h := range w {
		acc += float64(f16Table[h]) * float64(x[i])
	}
	return float32(acc)
}
