package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendHeadIKMatchesPlain: attendHeadIK (all keys' chains of a block
// at once, the padding's exponentials computed once) gives bitwise the results of
// the plain key-by-key form kept here, for KV lengths across the 128-key
// blocks, GQA heads (one at a time and two sharing a KV head in one
// attendHeadsIK call), and scores that are large, tiny, infinite or NaN.
func TestAttendHeadIKMatchesPlain(t *testing.T) {
	const hd, nHead, nKV, nCtx = 128, 4, 2, 300
	s := &Session{m: &Model{Params: Params{HeadDim: hd, NHead: nHead, NHeadKV: nKV}}, nCtx: nCtx}
	r := rand.New(rand.NewPCG(11, 5))
	kc := make([]uint16, nCtx*nKV*hd)
	vc := make([]uint16, nCtx*nKV*hd)
	q := make([]float32, hd)
	for trial := range 6 {
		for i := range kc {
			kc[i] = f32ToF16(float32(r.NormFloat64()) * float32(1+trial))
			vc[i] = f32ToF16(float32(r.NormFloat64()))
		}
		for i := range q {
			q[i] = float32(r.NormFloat64()) * float32(trial+1)
		}
		switch trial {
		case 4:
			kc[r.IntN(len(kc))] = 0x7c00 // +Inf
		case 5:
			q[r.IntN(hd)] = float32(math.NaN())
		}
		for _, n := range []int{1, 3, 4, 5, 17, 127, 128, 129, 131, 256, 300} {
			for h := range nHead {
				got, want := make([]float32, hd), make([]float32, hd)
				s.attendHeadIK(&attnScratch{}, kc, vc, n, h, q, got)
				s.attendHeadIKRef(&attnScratch{}, kc, vc, n, h, q, want)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("trial %d n %d head %d dim %d: %v, plain %v", trial, n, h, i, got[i], want[i])
					}
				}
			}
			// Both query heads of KV head 1 in one attendHeadsIK call
			// (the second head's query a rotation of the first's).
			q2 := append(append([]float32(nil), q...), q[5:]...)
			q2 = append(q2, q[:5]...)
			got := make([]float32, 2*hd)
			sc := &attnScratch{}
			s.attendHeadsIK(sc, kc, vc, n, 2, 2, q2, got)
			for a := range 2 {
				want := make([]float32, hd)
				s.attendHeadIKRef(&attnScratch{}, kc, vc, n, 2+a, q2[a*hd:(a+1)*hd], want)
				for i := range want {
					if g := got[a*hd+i]; math.Float32bits(g) != math.Float32bits(want[i]) && !(g != g && want[i] != want[i]) {
						t.Fatalf("trial %d n %d heads 2…3, head %d dim %d: %v, plain %v", trial, n, 2+a, i, g, want[i])
					}
				}
			}
		}
	}
}

// attendHeadIKRef is attendHeadIK as it was written before the four-key
// interleave: every key on its own, every padding exponential computed.
func (s *Session) attendHeadIKRef(sc *attnScratch, kc, vc []uint16, n, h int, q, out []float32) {
	p := s.m.Params
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	kvh := h / (p.NHead / p.NHeadKV)
	scale := 1 / float32(math.Sqrt(float64(hd)))
	sc.probs = resizeF32(sc.probs, ikKStep)
	prob := sc.probs
	for i := range out {
		out[i] = 0
	}
	mx := float32(math.Inf(-1))
	var sum float32
	for k0 := 0; k0 < n; k0 += ikKStep {
		bmax := float32(math.Inf(-1))
		for l := range prob {
			j := k0 + l
			if j >= n {
				prob[l] = float32(math.Inf(-1))
				continue
			}
			krow := kc[j*kvDim+kvh*hd : j*kvDim+(kvh+1)*hd]
			prob[l] = scale * dotF16F32ik(krow, q)
			bmax = max(bmax, prob[l])
		}
		if bmax > mx {
			if !math.IsInf(float64(mx), -1) {
				m := float32(math.Exp(float64(mx - bmax)))
				sum *= m
				for i := range out {
					out[i] *= m
				}
			}
			mx = bmax
		}
		var acc [8]float32
		for l := range prob {
			prob[l] = expVec(prob[l] - mx)
		}
		for v := 0; v < ikKStep; v += 8 {
			for i := range acc {
				acc[i] += prob[v+i]
			}
		}
		sum += sumExp8(acc[:])
		for l := range prob {
			j := k0 + l
			if j >= n {
				break
			}
			// vc is transposed ([kvDim][nCtx], Session.vCache): the
			// value of dimension d at position j is vc[d·nCtx + j].
			pl := prob[l]
			base := kvh*hd*s.nCtx + j
			for i := range out {
				out[i] = fma32(out[i], f16Table[vc[base+i*s.nCtx]], pl)
			}
		}
	}
	inv := 1 / sum
	for i := range out {
		out[i] = inv * out[i]
	}
}

// dotF16F32ik is mul_mat_Qx_Qy_MxN_fa4's dot of one F16 key row with the
// f32 query (len a multiple of 8): chain lo over elements 8i+0…3, chain hi
// over 8i+4…7, each a fused multiply-add in element order, then lo + hi.
func dotF16F32ik(k []uint16, q []float32) float32 {
	var lo, hi float32
	for i := 0; i+8 <= len(k); i += 8 {
		for j := 0; j < 4; j++ {
			lo = fma32(lo, f16Table[k[i+j]], q[i+j])
		}
		for j := 4; j < 8; j++ {
			hi = fma32(hi, f16Table[k[i+j]], q[i+j])
		}
	}
	return lo + hi
}

// TestAttentionIKPairs: attention with ik's arithmetic (two query heads of
// a KV head per attendHeadsIK call) gives, for every token row and head,
// the plain attendHeadIK's bits, at 1 and 2 threads.
func TestAttentionIKPairs(t *testing.T) {
	const hd, nHead, nKV, nCtx, rows, pos0 = 128, 8, 2, 64, 3, 20
	r := rand.New(rand.NewPCG(12, 6))
	kc := make([]uint16, nCtx*nKV*hd)
	vc := make([]uint16, nCtx*nKV*hd)
	for i := range kc {
		kc[i] = f32ToF16(float32(r.NormFloat64()))
		vc[i] = f32ToF16(float32(r.NormFloat64()))
	}
	q, att := make([][]float32, rows), make([][]float32, rows)
	for i := range q {
		q[i], att[i] = make([]float32, nHead*hd), make([]float32, nHead*hd)
		for j := range q[i] {
			q[i][j] = float32(r.NormFloat64())
		}
	}
	for _, th := range []int{1, 2} {
		m := &Model{Params: Params{HeadDim: hd, NHead: nHead, NHeadKV: nKV}}
		m.opts.Threads, m.opts.F32Attention = th, true
		s := &Session{m: m, nCtx: nCtx}
		s.attention(kc, vc, pos0, q, att)
		for i := range q {
			for h := range nHead {
				want := make([]float32, hd)
				s.attendHeadIKRef(&attnScratch{}, kc, vc, pos0+i+1, h, q[i][h*hd:(h+1)*hd], want)
				for d, w := range want {
					if g := att[i][h*hd+d]; math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("threads %d row %d head %d dim %d: %v, plain %v", th, i, h, d, g, w)
					}
				}
			}
		}
	}
}
