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

// mulScaledRef is MulScaled in Go.
func mulScaledRef(dst, x, w []float32, scale float32) {
	for i, v := range x {
		t := scale * w[i]
		dst[i] = t * v
	}
}
