package runtime

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAttendHeadsIK: one tg32's worth of ik flash attention for one
// KV head of the 2B model's shape (head size 128, 20 query heads over 5 KV
// heads): two query heads per attendHeadsIK call, as Session.attention
// calls it, at every KV length 1…32.
func BenchmarkAttendHeadsIK(b *testing.B) {
	const hd, nHead, nKV, nCtx = 128, 20, 5, 160
	s := &Session{m: &Model{Params: Params{HeadDim: hd, NHead: nHead, NHeadKV: nKV}}, nCtx: nCtx}
	r := rand.New(rand.NewPCG(3, 4))
	kc := make([]uint16, nCtx*nKV*hd)
	vc := make([]uint16, nCtx*nKV*hd)
	for i := range kc {
		kc[i] = f32ToF16(float32(r.NormFloat64()))
		vc[i] = f32ToF16(float32(r.NormFloat64()))
	}
	q := make([]float32, 2*hd)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	out := make([]float32, 2*hd)
	sc := &attnScratch{}
	for b.Loop() {
		for n := 1; n <= 32; n++ {
			s.attendHeadsIK(sc, kc, vc, n, 4, 2, q, out)
		}
	}
}
