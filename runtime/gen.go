package runtime

import (
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// The one-token path (Session.Eval, generation): forward1 is forward for a
// single token with fewer hand-offs to the worker team per layer. The
// numbers are forward's bit for bit, since every output is computed by the
// same kernel with the same operands, only grouped into fewer calls:
//
//   - Q, K and V (and gate and up) multiply the same normed row: it is
//     quantized once and one team call streams the rows of all of them
//     (gen1.products), each row with DotI2SRows as matVecPrepared does
//     (types with a row-range kernel: ternaryRows, as matVecTernary);
//     the chunk that computes rows of V also stores them, F16, in the
//     transposed V cache;
//   - when every query head has its own KV head, one team call ropes q and
//     k head by head, stores each K head in the cache and attends
//     (gen1.heads), where forward ropes and stores the whole token first;
//
// docs/performance.md, "Generation at the kernels' rate", has the figures.

// gen1 is the one-token path's scratch, kept by the Session so that a
// token allocates nothing: the team calls take method values bound once.
type gen1 struct {
	a Activation
	// products: matrices ws[:nw] multiply a into dsts[:nw]; rows of
	// matrix vAt (−1: none) are also stored in vc at position vPos.
	ws       [3]*Matrix
	dsts     [3][]float32
	nw, vAt  int
	vc       []uint16
	vPos     int
	products func(worker, lo, hi int)
	// heads: rope, K store and attention of head h for unit h.
	kc, vcA  []uint16
	q, k, at []float32
	heads    func(worker, lo, hi int)
	rope     func(x, cos, sin []float32)
}

// gen1OK reports whether forward1 computes this model's token: with the
// assembly kernels (projections that are not fusable keep forward's
// per-matrix calls, which forward1 falls back to per projection).
func (s *Session) gen1OK() bool {
	return kernels.Accelerated() && s.ub == (ubatchArith{})
}

// fusable reports whether projections ps of block l can share one
// activation and one team call: all I2_S, or all of one type with a
// row-range kernel (ternary_rows.go), with the same padded row and no
// input norm.
func fusable(l *layer, ps ...int) bool {
	w0 := l.matrix(ps[0])
	switch w0.Type {
	case gguf.TypeI2S, gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ2_0, gguf.TypeIQ2BN:
	default:
		return false
	}
	for _, p := range ps {
		w := l.matrix(p)
		if w.Type != w0.Type || w.K != w0.K || w.kPad != w0.kPad || l.normIn[p] != nil {
			return false
		}
	}
	return true
}

// project1 computes dsts[i] = W_ps[i]·x for one token row x, in one team
// call when the projections are fusable, else one project call each.
// vStore > 0 stores the rows of the projection at index vStore−1 (V) in
// the V cache vc at position pos.
func (s *Session) project1(l *layer, ps []int, dsts [][]float32, x []float32, vStore int, vc []uint16, pos int) bool {
	g := s.g1()
	if fusable(l, ps...) {
		w0 := l.matrix(ps[0])
		// As matMul prepares a lone token (ternary types: matVecTernary's
		// activation, ready for their row-range kernels).
		g.a.inBatch, g.a.fmaAcc = false, s.mm.fmaAcc
		w0.Prepare(&g.a, x)
		if w0.Type == gguf.TypeI2S || w0.ternaryRowsReady(&g.a) {
			g.nw, g.vAt, g.vc, g.vPos = len(ps), vStore-1, vc, pos
			total := 0
			for i, p := range ps {
				g.ws[i], g.dsts[i] = l.matrix(p), dsts[i]
				total += g.ws[i].M
			}
			parallel.RangeHot(total, s.m.opts.Threads, g.products)
			return vStore > 0
		}
	}
	for i, p := range ps {
		s.project(l, p, [][]float32{dsts[i]}, [][]float32{x})
	}
	return false
}

// g1 returns the Session's one-token scratch, made on first use.
func (s *Session) g1() *gen1 {
	if s.gen == nil {
		g := &gen1{}
		g.products = g.productRows
		s.gen = g
	}
	return s.gen
}

// productRows computes rows [lo, hi) of the concatenated matrices.
func (g *gen1) productRows(_, lo, hi int) {
	a := &g.a
	q, sumf := a.q, float32(a.sum)
	off := 0
	for i, w := range g.ws[:g.nw] {
		r0, r1 := max(lo, off)-off, min(hi, off+w.M)-off
		off += w.M
		if r0 >= r1 {
			continue
		}
		dst := g.dsts[i]
		if w.Type == gguf.TypeI2S {
			kernels.DotI2SRows(dst[r0:r1], w.raw[r0*w.rowB:r1*w.rowB], q[:w.kPad], sumf, a.s, w.Scale)
		} else {
			w.ternaryRows(dst, a, r0, r1)
		}
		if i == g.vAt {
			g.storeV(dst, r0, r1)
		}
	}
}

// storeV stores v[r0:r1] as F16 in the transposed V cache at position
// g.vPos (a range of dimensions at a time, by the chunk that computed them).
func (g *gen1) storeV(v []float32, r0, r1 int) {
	storeVCells(g.vc, len(g.vc)/len(v), g.vPos, r0, v[r0:r1])
}

// storeVCells stores the V values v of dimensions d0, d0+1, … as F16 in
// the transposed cache vc (nCtx positions per dimension, Session.vCache)
// at position pos: every store of V into the cache.
func storeVCells(vc []uint16, nCtx, pos, d0 int, v []float32) {
	var h [64]uint16
	for b := 0; b < len(v); b += len(h) {
		e := min(b+len(h), len(v))
		kernels.F32ToF16(h[:e-b], v[b:e])
		for i, x := range h[:e-b] {
			vc[(d0+b+i)*nCtx+pos] = x
		}
	}
}

// forward1 is forward for the one token id (forward's checks done).
func (s *Session) forward1(id int32) {
	m, p := s.m, s.m.Params
	s.grow(1)
	s.lastRows = 1
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	qDim := p.NHead * hd
	pos := s.pos
	s.mm.tinyF32 = false
	x := s.x[0]
	xnE, xnQ, xnF := s.xn[0][:p.NEmbd], s.xn[0][:qDim], s.xn[0][:p.NFF]
	q, k, v, att, o := s.q[0], s.k[0], s.v[0], s.attn[0], s.o[0]
	gate, up, down := s.gate[0], s.up[0], s.down[0]
	m.tokEmbd.embedRow(x, int(id))
	cos, sin := s.ropeCos[0], s.ropeSin[0]
	s.ropeTable(cos, sin, pos)
	rope := ropeNeox
	if m.spec.ropeNorm {
		rope = ropeAdjacent
	}
	g := s.g1()
	// The residual adds and the gated product are done in the pass that
	// sums the squares of the next norm (addSumSq, mulSumSq): the previous
	// layer's FFN output is added at the start of the next layer.
	var pending []float32
	for li := range m.layers {
		l := &m.layers[li]
		s.rmsNormSum(xnE, x, l.attnNorm, addSumSq(x, pending), p.RMSEps)
		s.emit("attn_norm", li, xnE)
		kc, vc := s.kCache[li], s.vCache[li]
		perHead := p.NHead == p.NHeadKV && s.trace == nil
		vStore := 0
		if l.bv == nil && !perHead {
			vStore = 3
		}
		vDone := s.project1(l, []int{projQ, projK, projV}, [][]float32{q, k, v}, xnE, vStore, vc, pos)
		s.qkvExtra(l, s.q[:1], s.k[:1], s.v[:1])
		if !vDone && !perHead {
			storeVCells(vc, s.nCtx, pos, 0, v)
		}
		s.vDirty = max(s.vDirty, pos+1)
		if perHead {
			// Rope, K store and attention per head, one team call.
			g.kc, g.vcA, g.q, g.k, g.at, g.rope = kc, vc, q, k, att, rope
			if g.heads == nil {
				g.heads = func(worker, lo, hi int) { s.heads1(worker, lo, hi) }
			}
			s.attnPrep()
			parallel.RangeHot(p.NHead, m.opts.Threads, g.heads)
		} else {
			for h := 0; h < p.NHead; h++ {
				rope(q[h*hd:(h+1)*hd], cos, sin)
			}
			for h := 0; h < p.NHeadKV; h++ {
				rope(k[h*hd:(h+1)*hd], cos, sin)
			}
			kernels.F32ToF16(kc[pos*kvDim:(pos+1)*kvDim], k)
			s.emit("Qcur", li, q)
			s.emit("Kcur", li, k)
			s.emit("Vcur", li, v)
			s.attention(kc, vc, pos, s.q[:1], s.attn[:1])
		}
		s.emit("kqv_out", li, att)
		if l.attnSubNorm == nil {
			copy(xnQ, att)
		} else {
			s.rmsNorm(xnQ, att, l.attnSubNorm, p.RMSEps)
			s.emit("attn_sub_norm", li, xnQ)
		}
		s.project1(l, []int{projO}, [][]float32{o}, xnQ, 0, nil, 0)
		s.emit("attn_o_out", li, o)
		s.rmsNormSum(xnE, x, l.ffnNorm, addSumSq(x, o), p.RMSEps)
		s.project1(l, []int{projGate, projUp}, [][]float32{gate, up}, xnE, 0, nil, 0)
		var sum float64
		if p.FFN == ReLU2 {
			sum = relu2MulSumSq(gate, up)
		} else { // SiLU
			siluVec(gate)
			sum = mulSumSq(gate, up)
		}
		s.emit("ffn_sub_out", li, gate)
		if l.ffnSubNorm == nil {
			copy(xnF, gate)
		} else {
			s.rmsNormSum(xnF, gate, l.ffnSubNorm, sum, p.RMSEps)
		}
		s.project1(l, []int{projDown}, [][]float32{down}, xnF, 0, nil, 0)
		s.emit("ffn_down", li, down)
		pending = down
	}
	s.rmsNormSum(s.hidden[0], x, m.outputNorm, addSumSq(x, pending), p.RMSEps)
	s.pos++
}

// attnPrep sizes the per-worker attention scratch (as attention does).
func (s *Session) attnPrep() {
	if th := max(s.m.opts.Threads, 1); len(s.work) < th {
		s.work = make([]attnScratch, th)
	}
}

// heads1 ropes query and key heads [lo, hi) of the token (one KV head
// per query head), stores each K head in the cache and attends, as
// forward's rope, K store and attention do for the whole token.
func (s *Session) heads1(worker, lo, hi int) {
	g, p := s.gen, s.m.Params
	hd, pos := p.HeadDim, s.pos
	cos, sin := s.ropeCos[0], s.ropeSin[0]
	kvDim := p.NHeadKV * hd
	sc := &s.work[worker]
	for h := lo; h < hi; h++ {
		qh, kh := g.q[h*hd:(h+1)*hd], g.k[h*hd:(h+1)*hd]
		g.rope(qh, cos, sin)
		g.rope(kh, cos, sin)
		kernels.F32ToF16(g.kc[pos*kvDim+h*hd:pos*kvDim+(h+1)*hd], kh)
		// The head's V, F16, into its columns of the transposed cache:
		// the lines the attention reads next, on this core.
		storeVCells(g.vcA, s.nCtx, pos, h*hd, s.v[0][h*hd:(h+1)*hd])
	}
	for h := lo; h < hi; h++ {
		s.attendHead(sc, g.kc, g.vcA, pos+1, h, g.q[h*hd:(h+1)*hd], g.at[h*hd:(h+1)*hd])
	}
}
