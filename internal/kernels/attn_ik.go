package kernels

import "fmt"

// AttnKQIK computes the key·query sums of ik_llama.cpp's CPU flash
// attention on F16 keys as its AVX2 build does (ikawrakow/ik_llama.cpp,
// ggml/src/iqk/iqk_gemm_floats.cpp, mul_mat_Qx_Qy_MxN_fa4, used by
// FlashQKfp32 in ggml/src/iqk/fa/iqk_fa_templates.h): for g (1 or 2)
// query heads of hd = len(q)/g elements (q holds them one after the other;
// hd a multiple of 8) and n keys, key l's element e being the F16 value
// k[l·stride+e], every key and head gets two float32 chains started at 0:
// lo over the elements 8i+0…3 and hi over 8i+4…7, in ascending element
// order, each step acc + K·q rounded once (a fused multiply-add). Head a's
// lo of key l goes to s[2a·sStride+l], its hi to s[(2a+1)·sStride+l]; the
// rest of s is not written. The result is the pure-Go reference's
// (attnKQIKRef) bit for bit, NaN payloads included: where the assembly's
// sums hold a NaN the reference computes them again. It panics when g is
// not 1 or 2, hd is not a multiple of 8, or s, k are too short.
func AttnKQIK(s []float32, sStride int, k []uint16, stride, n int, q []float32, g int) {
	if g < 1 || g > 2 || len(q)%(8*g) != 0 || n < 0 {
		panic(fmt.Sprintf("kernels: AttnKQIK g=%d, len(q)=%d, n=%d", g, len(q), n))
	}
	hd := len(q) / g
	if n == 0 || hd == 0 {
		return
	}
	if sStride < n || len(s) < (2*g-1)*sStride+n || stride < hd || len(k) < (n-1)*stride+hd {
		panic(fmt.Sprintf("kernels: AttnKQIK lengths s %d (stride %d), k %d (stride %d), n=%d, hd=%d", len(s), sStride, len(k), stride, n, hd))
	}
	attnKQIK(s, sStride, k, stride, n, q, g)
}

// AttnPVIK adds the probability-weighted values of ik_llama.cpp's CPU
// flash attention on F16 values as its AVX2 build does (ikawrakow/
// ik_llama.cpp, ggml/src/iqk/fa/iqk_fa_templates.h, FlashQKV): for g (1 or
// 2) query heads, out holding their hd = len(out)/g outputs one after the
// other (hd a multiple of 8), and keys l = 0…n−1 in that order, every
// output element takes out + V[l][d]·p[a·pStride+l] rounded once (a fused
// multiply-add), where V[l][d] is the F16 value v[d·stride+l] (the
// transposed V cache). The result is the pure-Go reference's
// (attnPVIKRef) bit for bit, NaN payloads included: where the assembly's
// outputs hold a NaN the reference computes them again from the original
// out. It panics when g is not 1 or 2, hd is not a multiple of 8, or v, p
// are too short.
func AttnPVIK(out []float32, v []uint16, stride int, p []float32, pStride, n, g int) {
	if g < 1 || g > 2 || len(out)%(8*g) != 0 || n < 0 {
		panic(fmt.Sprintf("kernels: AttnPVIK g=%d, len(out)=%d, n=%d", g, len(out), n))
	}
	hd := len(out) / g
	if n == 0 || hd == 0 {
		return
	}
	if stride < n || len(v) < (hd-1)*stride+n || pStride < n || len(p) < (g-1)*pStride+n {
		panic(fmt.Sprintf("kernels: AttnPVIK lengths v %d (stride %d), p %d (stride %d), n=%d, hd=%d", len(v), stride, len(p), pStride, n, hd))
	}
	attnPVIK(out, v, stride, p, pStride, n, g)
}

// attnChunk is the number of keys (attnKQIKRef) or output elements
// (attnPVIKRef) the references widen at a time.
const attnChunk = 64

// attnKQIKRef is AttnKQIK in Go: per chunk of keys, each element's F16
// values widened and multiplied into the chains by fma32AccRef, element by
// element.
func attnKQIKRef(s []float32, sStride int, k []uint16, stride, n int, q []float32, g int) {
	hd := len(q) / g
	var col [attnChunk]float32
	for l0 := 0; l0 < n; l0 += attnChunk {
		m := min(attnChunk, n-l0)
		for c := range 2 * g {
			clear(s[c*sStride+l0 : c*sStride+l0+m])
		}
		for e := range hd {
			for l := range m {
				col[l] = f16Table[k[(l0+l)*stride+e]]
			}
			half := e % 8 / 4
			for a := range g {
				c := (2*a+half)*sStride + l0
				fma32AccRef(s[c:c+m], col[:m], q[a*hd+e])
			}
		}
	}
}

// attnPVIKRef is AttnPVIK in Go: per chunk of output elements, each key's
// F16 values widened and added by fma32AccRef, key by key.
func attnPVIKRef(out []float32, v []uint16, stride int, p []float32, pStride, n, g int) {
	hd := len(out) / g
	var col [attnChunk]float32
	for d0 := 0; d0 < hd; d0 += attnChunk {
		m := min(attnChunk, hd-d0)
		for l := range n {
			for i := range m {
				col[i] = f16Table[v[(d0+i)*stride+l]]
			}
			for a := range g {
				fma32AccRef(out[a*hd+d0:a*hd+d0+m], col[:m], p[a*pStride+l])
			}
		}
	}
}
