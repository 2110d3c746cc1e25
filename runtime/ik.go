package runtime

import (
	"math"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// Options.F32Attention selects ik_llama.cpp's arithmetic for the parts of
// the graph that are not matrix products (ikawrakow/ik_llama.cpp 8337e4cd,
// CPU, AVX2 without AVX512, flash attention on, F16 KV cache): its flash
// attention (attendHeadIK) and its fused RMS norm (rmsNormSum). With the
// Q8_K64 kernels of iqbn.go this reproduces ik's IQ1_BN/IQ2_BN logits of
// b158-h512 to 2e-6 (testdata/golden/ecosystems/b158-h512-ik; the rest is
// the order of ik's F32 LM head, which is not emulated).

// rmsNorm is the RMS norm of the model's runtime (rmsNormSum).
func (s *Session) rmsNorm(dst, x, w []float32, eps float32) {
	s.rmsNormSum(dst, x, w, sumSq(x), eps)
}

// rmsNormSum is s.rmsNorm with x's sum of squares already taken (sumSq,
// or a pass that also computed x: addSumSq, mulSumSq, relu2MulSumSq), the
// scale rmsScale. bitnet.cpp and mainline: ggml's rms_norm followed by the
// mul with the weight, dst = (x·scale)·w (kernels.ScaleMul). With
// F32Attention, ik_llama.cpp's ggml_compute_forward_fused_rms_norm_f32
// (ggml/src/ggml.c): dst = (scale·w)·x (kernels.MulScaled). Each product
// is rounded to float32.
func (s *Session) rmsNormSum(dst, x, w []float32, sum float64, eps float32) {
	scale := rmsScale(sum, len(x), eps)
	if s.m.opts.F32Attention {
		kernels.MulScaled(dst, x, w, scale)
		return
	}
	kernels.ScaleMul(dst, x, w, scale)
}

// ikKStep is the key block of ik_llama.cpp's CPU flash attention for head
// size 128 when its KV length is a multiple of 128 (iqk_fa_128_128.cpp;
// the KV length is padded to 256 with flash attention).
const ikKStep = 128

// attendHeadIK is attendHead as ik_llama.cpp's CPU flash attention computes
// one query row on F16 K/V (ggml/src/iqk/fa/iqk_fa_templates.h FlashAttn
// with FlashQKfp32, FlashMS, FlashQKV; ikawrakow/ik_llama.cpp 8337e4cd,
// AVX2 without AVX512), for Options.F32Attention:
//
//   - K·q per key by mul_mat_Qx_Qy_MxN_fa4 (iqk_gemm_floats.cpp): q in
//     f32, K widened from F16, two fused multiply-add chains per key over
//     elements 8i+0…3 and 8i+4…7 (i ascending), added at the end;
//   - s = scale·K·q (masked keys −inf), in blocks of ikKStep keys: the
//     block maximum M (a new maximum rescales the running sum S and the
//     accumulator by expf(M_old − M)), p = v_expf(s − M) (expVec), S += the
//     block's p summed as sixteen 8-lane vectors added in order, then the
//     lanes as hsum_float_8 (sumExp8);
//   - out_d = Σ_l p_l·V[l][d] as one fused multiply-add chain per d in key
//     order, times float32(1/S).
func (s *Session) attendHeadIK(sc *attnScratch, kc, vc []uint16, n, h int, q, out []float32) {
	s.attendHeadsIK(sc, kc, vc, n, h, 1, q, out)
}

// ikMaxHeads is the most query heads attendHeadsIK takes in one call.
const ikMaxHeads = 4

// attendHeadsIK is attendHeadIK for the g (1…ikMaxHeads) query heads
// h0…h0+g−1, which must share one KV head: q and out hold their rows one
// after the other (len g·HeadDim). Each head's numbers are attendHeadIK's
// bit for bit (every chain keeps its operations in order); the K and V
// values are widened once for all g heads.
func (s *Session) attendHeadsIK(sc *attnScratch, kc, vc []uint16, n, h0, g int, q, out []float32) {
	p := s.m.Params
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	kvh := h0 / (p.NHead / p.NHeadKV)
	scale := 1 / float32(math.Sqrt(float64(hd)))
	sc.probs = resizeF32(sc.probs, g*ikKStep)
	sc.scores = resizeF32(sc.scores, 2*g*ikKStep)
	clear(out[:g*hd])
	var mx, sum [ikMaxHeads]float32
	for a := range g {
		mx[a] = float32(math.Inf(-1))
	}
	for k0 := 0; k0 < n; k0 += ikKStep {
		live := min(n-k0, ikKStep) // keys k0…k0+live−1 exist
		// K·q of every key of the block, two heads at a time: row 2a of
		// scores holds head a's lo chains, row 2a+1 its hi chains
		// (kernels.AttnKQIK, the fused multiply-adds listed above in their
		// order).
		kb := k0*kvDim + kvh*hd
		for a0 := 0; a0 < g; a0 += 2 {
			ga := min(2, g-a0)
			kernels.AttnKQIK(sc.scores[2*a0*ikKStep:], ikKStep, kc[kb:], kvDim, live, q[a0*hd:(a0+ga)*hd], ga)
		}
		for a := range g {
			prob := sc.probs[a*ikKStep : (a+1)*ikKStep]
			lo, hi := sc.scores[2*a*ikKStep:], sc.scores[(2*a+1)*ikKStep:]
			o := out[a*hd : (a+1)*hd]
			bmax := float32(math.Inf(-1))
			l := 0
			for ; l < live; l++ {
				prob[l] = scale * (lo[l] + hi[l])
				bmax = max(bmax, prob[l])
			}
			for ; l < len(prob); l++ {
				prob[l] = float32(math.Inf(-1))
			}
			if bmax > mx[a] {
				if !math.IsInf(float64(mx[a]), -1) {
					m := float32(math.Exp(float64(mx[a] - bmax)))
					sum[a] *= m
					for i := range o {
						o[i] *= m
					}
				}
				mx[a] = bmax
			}
			// p = expVec(s − M) (kernels.ExpSub: the same bits, sixteen
			// lanes at a time where it has assembly).
			kernels.ExpSub(prob[:live], prob[:live], mx[a])
			if live < len(prob) {
				// The padding's −inf scores all give the same value
				// (outside ExpSub's fast path: computed once).
				pad := expVec(float32(math.Inf(-1)) - mx[a])
				for l := live; l < len(prob); l++ {
					prob[l] = pad
				}
			}
			var acc [8]float32
			for v := 0; v < ikKStep; v += 8 {
				for i := range acc {
					acc[i] += prob[v+i]
				}
			}
			sum[a] += sumExp8(acc[:])
		}
		// out_d += p_l·V[l][d] key by key (kernels.AttnPVIK); vc is
		// transposed ([kvDim][nCtx], Session.vCache): the value of
		// dimension d at position j is vc[d·nCtx + j].
		vb := kvh*hd*s.nCtx + k0
		for a0 := 0; a0 < g; a0 += 2 {
			ga := min(2, g-a0)
			kernels.AttnPVIK(out[a0*hd:(a0+ga)*hd], vc[vb:], s.nCtx, sc.probs[a0*ikKStep:], ikKStep, live, ga)
		}
	}
	for a := range g {
		inv := 1 / sum[a]
		o := out[a*hd : (a+1)*hd]
		for i := range o {
			o[i] = inv * o[i]
		}
	}
}
