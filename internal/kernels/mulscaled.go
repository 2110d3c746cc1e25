package kernels

import "fmt"

// MulScaled sets dst[i] = (scale·w[i])·x[i] for i < len(x), each product
// rounded to float32: the output step of ik_llama.cpp's fused RMS norm
// (ikawrakow/ik_llama.cpp, ggml/src/ggml.c,
// ggml_compute_forward_fused_rms_norm_f32, y = (scale·w)·x) once its scale
// is known. Groups of eight run in assembly where there is one; a group
// with a NaN result is computed in Go, so NaN payloads are the pure-Go
// reference's (mulScaledRef). dst may be x. It panics if dst or w is
// shorter than x.
func MulScaled(dst, x, w []float32, scale float32) {
	if len(dst) < len(x) || len(w) < len(x) {
		panic(fmt.Sprintf("kernels: MulScaled lengths %d, %d, %d", len(dst), len(x), len(w)))
	}
	mulScaled(dst[:len(x)], x, w[:len(x)], scale)
}

// ScaleMul sets dst[i] = (x[i]·scale)·w[i] for i < len(x), each product
// rounded to float32: the output of ggml's rms_norm (ggml/src/ggml.c,
// ggml_compute_forward_rms_norm_f32: ggml_vec_scale_f32 by
// 1/sqrtf(mean + eps)) followed by the graph's mul by the norm weight, as
// bitnet.cpp and mainline llama.cpp compute a norm. Groups of eight run in
// assembly where there is one; a group with a NaN result is computed in Go
// (scaleMulRef). dst may be x. It panics if dst or w is shorter than x.
func ScaleMul(dst, x, w []float32, scale float32) {
	if len(dst) < len(x) || len(w) < len(x) {
		panic(fmt.Sprintf("kernels: ScaleMul lengths %d, %d, %d", len(dst), len(x), len(w)))
	}
	scaleMul(dst[:len(x)], x, w[:len(x)], scale)
}

// scaleMulRef is ScaleMul in Go.
func scaleMulRef(dst, x, w []float32, scale float32) {
	for i, v := range x {
		t := v * scale
		dst[i] = t * w[i]
	}
}

// mulScaledRef is MulScaled in Go.
func mulScaledRef(dst, x, w []float32, scale float32) {
	for i, v := range x {
		t := scale * w[i]
		dst[i] = t * v
	}
}
