package runtime

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// Session is one decoding stream over a Model: the F16 KV cache of every
// layer and the position of the next token. A Session is not safe for
// concurrent use; several Sessions may share a Model.
type Session struct {
	m      *Model
	nCtx   int
	pos    int
	kCache [][]uint16 // per layer, [nCtx][NHeadKV·HeadDim] F16 bits
	// vCache is per layer [NHeadKV·HeadDim][nCtx] F16 bits: transposed,
	// as llama.cpp stores V without flash attention, so the column of one
	// output dimension over the positions is contiguous.
	vCache [][]uint16
	// vDirty is one past the highest position whose V cells may hold a
	// value: every V cell at a position ≥ vDirty is +0 in every layer
	// (made so, and cleared by Reset), so attendHead can read a head's V
	// columns in place up to the next multiple of 32 (ggml's padded cells).
	vDirty int

	// Row scratch for up to rowsCap tokens, reused across calls: one row
	// per token of the batch being evaluated.
	rowsCap                 int
	lastRows                int // rows of the last forward (Hidden's row)
	x, xn, q, k, v, attn, o [][]float32
	gate, up, down, hidden  [][]float32
	ropeCos, ropeSin        [][]float32
	logits                  [][]float32 // rows of the last call's logits
	nin                     [][]float32 // normed projection inputs (Session.project)
	mm                      batchScratch
	work                    []attnScratch // per worker

	// trace, when set (tests), receives named intermediate tensors of
	// each layer and token row, as ggml's eval callback names them.
	trace func(name string, layer int, v []float32)

	// ub is the llama_decode arithmetic of the rows evaluated next
	// (ppl_batch.go); the zero value is the one-token path.
	ub ubatchArith

	// gen is the one-token path's scratch (gen.go), nil until used.
	gen *gen1
}

// attnScratch is one attention worker's memory.
type attnScratch struct {
	qh, scores, probs []float32
	vcol              []uint16
}

// maxBatch is the number of tokens EvalBatch sends through the layers at
// once; longer inputs run in consecutive batches (llama.cpp's n_ubatch).
// It bounds the row scratch (a few MB per 256 tokens for the presets).
const maxBatch = 256

// sessionPositions is the room NewSession gives a request of nCtx
// positions (see NewSession).
func sessionPositions(p Params, nCtx int) int {
	if nCtx <= 0 || (p.NCtx > 0 && nCtx > p.NCtx) {
		nCtx = p.NCtx
	}
	// In int64: on a 32-bit build the byte counts exceed int.
	if perPos := 2 * 2 * int64(p.NHeadKV) * int64(p.HeadDim) * int64(max(p.NLayer, 1)); perPos > 0 && int64(nCtx) > maxKVCacheBytes()/perPos {
		nCtx = int(maxKVCacheBytes() / perPos)
	}
	return max(nCtx, 1)
}

// MaxKVCacheBytes bounds the K and V cache one Session allocates (F16, all
// layers): 4 GiB, room for 4096 positions of a 30-layer, 5-KV-head × 128
// model many times over, yet well below what would take a host down.
// On a 32-bit build the cache is bounded by half the address space instead
// (maxKVCacheBytes).
const MaxKVCacheBytes int64 = 4 << 30

// maxKVCacheBytes is MaxKVCacheBytes, or math.MaxInt/2 on a 32-bit build.
func maxKVCacheBytes() int64 { return min(MaxKVCacheBytes, math.MaxInt/2) }

// NewSession returns a Session with room for nCtx positions (nCtx ≤ 0 means
// Params.NCtx). As a guard against absurd sizes (a huge -n, a GGUF claiming
// a 2^31 context), nCtx is clamped to Params.NCtx (the model cannot attend
// further) and to as many positions as fit in MaxKVCacheBytes of F16 K and V
// cache; Eval past the room returns a "context full" error. Callers should
// still check their request against Params.NCtx to give a better message.
func (m *Model) NewSession(nCtx int) *Session {
	p := m.Params
	nCtx = sessionPositions(p, nCtx)
	kvDim := p.NHeadKV * p.HeadDim
	s := &Session{m: m, nCtx: nCtx}
	s.mm.fmaAcc = m.opts.Arith == ArithMainline
	s.kCache = make([][]uint16, p.NLayer)
	s.vCache = make([][]uint16, p.NLayer)
	for i := range s.kCache {
		s.kCache[i] = make([]uint16, nCtx*kvDim)
		s.vCache[i] = make([]uint16, nCtx*kvDim)
	}
	s.grow(1)
	return s
}

// grow makes the row scratch hold n tokens.
func (s *Session) grow(n int) {
	if n <= s.rowsCap {
		return
	}
	p := s.m.Params
	kvDim, qDim := p.NHeadKV*p.HeadDim, p.NHead*p.HeadDim
	s.rowsCap = n
	s.x, s.xn = rows(n, p.NEmbd), rows(n, max(p.NEmbd, qDim, p.NFF))
	s.q, s.k, s.v = rows(n, qDim), rows(n, kvDim), rows(n, kvDim)
	s.attn, s.o = rows(n, qDim), rows(n, p.NEmbd)
	s.gate, s.up, s.down = rows(n, p.NFF), rows(n, p.NFF), rows(n, p.NEmbd)
	s.hidden = rows(n, p.NEmbd)
	s.ropeCos, s.ropeSin = rows(n, p.HeadDim/2), rows(n, p.HeadDim/2)
}

// Pos returns the number of tokens evaluated so far (the position of the
// next token).
func (s *Session) Pos() int { return s.pos }

// Reset empties the KV cache (the next token is at position 0). As
// llama.cpp's cache clear zeroes its buffers, the V cells written since the
// last Reset are set to +0 (vDirty positions of every layer's V columns:
// tens of µs after a tg32 run).
func (s *Session) Reset() {
	s.pos = 0
	if s.vDirty == 0 {
		return
	}
	for _, vc := range s.vCache {
		for col := 0; col < len(vc); col += s.nCtx {
			clear(vc[col : col+s.vDirty])
		}
	}
	s.vDirty = 0
}

// Eval runs one token at the next position and returns its logits (len
// NVocab). The slice is owned by the Session and overwritten by the next
// call. Errors: a token id outside [0, NVocab) or a full context.
func (s *Session) Eval(token int32) ([]float32, error) {
	rows, err := s.EvalBatch([]int32{token}, 0)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// EvalHidden runs one token like Eval but skips the LM head; Hidden then
// returns its final hidden state.
func (s *Session) EvalHidden(token int32) error {
	_, err := s.EvalBatch([]int32{token}, 1)
	return err
}

// EvalBatch runs tokens at the next len(tokens) positions, all of them
// through each layer at once: every matrix product takes the whole batch
// (each token's activations quantized on their own), the KV cache is filled
// for every position and each token attends to the positions up to its own.
// The numbers are those of calling Eval on each token in turn, bit for bit,
// except under ArithMainline, whose F16 LM head over two or more rows is
// llamafile's tinyBLAS as in one mainline llama_decode (headTinyBLAS).
// It returns the logits of tokens[from:], row i−from for token i (NVocab
// floats each); from = len(tokens) skips the LM head (Hidden still gives
// the last token's state). The rows are owned by the Session and
// overwritten by the next call. Errors (nothing is evaluated then): a token
// id outside [0, NVocab), more tokens than the context has room for, from
// outside [0, len(tokens)].
func (s *Session) EvalBatch(tokens []int32, from int) ([][]float32, error) {
	p := s.m.Params
	if from < 0 || from > len(tokens) {
		return nil, fmt.Errorf("logits from token %d of a batch of %d", from, len(tokens))
	}
	for i, id := range tokens {
		if id < 0 || int(id) >= p.NVocab {
			return nil, fmt.Errorf("token id %d (batch position %d) is outside the vocabulary [0, %d)", id, i, p.NVocab)
		}
	}
	if s.pos+len(tokens) > s.nCtx {
		return nil, fmt.Errorf("context full: %d positions, %d used, %d more requested", s.nCtx, s.pos, len(tokens))
	}
	nOut := len(tokens) - from
	if cap(s.logits) < nOut || (nOut > 0 && len(s.logits[:cap(s.logits)][nOut-1]) != p.NVocab) {
		s.logits = rows(nOut, p.NVocab)
	}
	out := s.logits[:nOut]
	for lo := 0; lo < len(tokens); lo += maxBatch {
		hi := min(lo+maxBatch, len(tokens))
		s.forward(tokens[lo:hi])
		if hi > from {
			first := max(lo, from)
			s.head(out[first-from:hi-from], s.hidden[first-lo:hi-lo])
		}
	}
	return out, nil
}

// Hidden returns RMSNorm(x)·output_norm of the last evaluated token (len
// NEmbd): the row llama-embedding pools. The slice is overwritten by the
// next call.
func (s *Session) Hidden() []float32 { return s.hidden[s.lastRows-1] }

// head computes the LM head of the final hidden rows into dst.
func (s *Session) head(dst, hidden [][]float32) {
	out := s.m.output
	th := s.m.opts.Threads
	if s.m.opts.Arith == ArithMainline {
		if len(hidden) >= 2 && out.Type == gguf.TypeF16 && out.K%8 == 0 {
			s.headTinyBLAS(dst, hidden)
			return
		}
		out.matMul(dst, hidden, &s.mm, th)
		return
	}
	if s.ub.headTiny && !s.m.opts.F32Attention && s.m.opts.Arith == ArithBitnetCpp && s.headTinyBLASBitnet(dst, hidden) {
		return
	}
	if s.m.opts.F32Attention && !s.m.opts.Batched && out.Type == gguf.TypeF16 {
		// ik_llama.cpp's tied F16 head takes the f32 hidden state (its
		// own summation order is not emulated: TestIKHomeFiles and
		// TestGoldenIQBN bound the difference at 1e-5). ggml's AVX2
		// vec_dot_f16 order on the unrounded row (kernels.DotF16Rows)
		// streams the head as fast as the F16 head of the other
		// arithmetics; the float64 sum below is ~20× slower per token.
		for t := range hidden {
			x := hidden[t]
			parallel.ForHot(out.M, th, func(lo, hi int) {
				kernels.DotF16Rows(dst[t][lo:hi], out.u16[lo*out.K:hi*out.K], x)
			})
		}
		return
	}
	if (s.m.opts.Batched || s.m.opts.F32Attention) && out.Type == gguf.TypeF16 {
		// The batched reference multiplies the F16 head with f32 rows.
		parallel.ForHot(out.M, th, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				w := out.u16[r*out.K : (r+1)*out.K]
				for t := range hidden {
					dst[t][r] = dotF16F32(w, hidden[t])
				}
			}
		})
		return
	}
	out.matMul(dst, hidden, &s.mm, th)
}

// forward runs tokens (at most maxBatch, already checked) at positions
// s.pos… through every layer, leaving the final normed states in s.hidden.
func (s *Session) forward(tokens []int32) {
	if len(tokens) == 1 && s.gen1OK() {
		s.forward1(tokens[0]) // gen.go: the same numbers, fewer hand-offs
		return
	}
	m, p := s.m, s.m.Params
	n := len(tokens)
	s.grow(n)
	s.lastRows = n
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	qDim := p.NHead * hd
	pos0 := s.pos
	s.mm.tinyF32 = s.ub.f32Tiny && !m.opts.F32Attention && m.opts.Arith == ArithBitnetCpp
	x, xn := s.x[:n], s.xn[:n]
	q, k, v, att, o := s.q[:n], s.k[:n], s.v[:n], s.attn[:n], s.o[:n]
	gate, up, down := s.gate[:n], s.up[:n], s.down[:n]
	sub := func(r [][]float32, width int) [][]float32 {
		out := make([][]float32, len(r))
		for i := range r {
			out[i] = r[i][:width]
		}
		return out
	}
	xnE, xnQ, xnF := sub(xn, p.NEmbd), sub(xn, qDim), sub(xn, p.NFF)
	for t, id := range tokens {
		m.tokEmbd.embedRow(x[t], int(id))
		s.ropeTable(s.ropeCos[t], s.ropeSin[t], pos0+t)
	}
	for li := range m.layers {
		l := &m.layers[li]
		for t := range x {
			s.rmsNorm(xnE[t], x[t], l.attnNorm, p.RMSEps)
			s.emit("attn_norm", li, xnE[t])
		}
		s.project(l, projQ, q, xnE)
		s.project(l, projK, k, xnE)
		s.project(l, projV, v, xnE)
		s.qkvExtra(l, q, k, v)
		kc, vc := s.kCache[li], s.vCache[li]
		rope := ropeNeox
		if m.spec.ropeNorm {
			rope = ropeAdjacent
		}
		for t := range x {
			for h := 0; h < p.NHead; h++ {
				rope(q[t][h*hd:(h+1)*hd], s.ropeCos[t], s.ropeSin[t])
			}
			for h := 0; h < p.NHeadKV; h++ {
				rope(k[t][h*hd:(h+1)*hd], s.ropeCos[t], s.ropeSin[t])
			}
			at := (pos0 + t) * kvDim
			kernels.F32ToF16(kc[at:at+kvDim], k[t])
			storeVCells(vc, s.nCtx, pos0+t, 0, v[t])
			s.vDirty = max(s.vDirty, pos0+t+1)
			s.emit("Qcur", li, q[t])
			s.emit("Kcur", li, k[t])
			s.emit("Vcur", li, v[t])
		}
		s.attention(kc, vc, pos0, q, att)
		for t := range x {
			s.emit("kqv_out", li, att[t])
			if l.attnSubNorm == nil { // arch llama: no SubLN
				copy(xnQ[t], att[t])
				continue
			}
			s.rmsNorm(xnQ[t], att[t], l.attnSubNorm, p.RMSEps)
			s.emit("attn_sub_norm", li, xnQ[t])
		}
		s.project(l, projO, o, xnQ)
		for t := range x {
			s.emit("attn_o_out", li, o[t])
			for i := range x[t] {
				x[t][i] += o[t][i]
			}
			s.rmsNorm(xnE[t], x[t], l.ffnNorm, p.RMSEps)
		}
		s.project(l, projGate, gate, xnE)
		s.project(l, projUp, up, xnE)
		for t := range x {
			g, u := gate[t], up[t]
			switch p.FFN {
			case SiLU:
				siluVec(g)
				for i, gv := range g {
					g[i] = gv * u[i]
				}
			case ReLU2:
				for i, gv := range g {
					r := max(gv, 0)
					r = r * r
					g[i] = r * u[i]
				}
			}
			s.emit("ffn_sub_out", li, g)
			if l.ffnSubNorm == nil {
				copy(xnF[t], g)
				continue
			}
			s.rmsNorm(xnF[t], g, l.ffnSubNorm, p.RMSEps)
		}
		s.project(l, projDown, down, xnF)
		for t := range x {
			s.emit("ffn_down", li, down[t])
			for i := range x[t] {
				x[t][i] += down[t][i]
			}
		}
	}
	for t := range x {
		s.rmsNorm(s.hidden[t], x[t], m.outputNorm, p.RMSEps)
	}
	s.pos += n
}

// emit passes an intermediate tensor to the trace hook, if any.
func (s *Session) emit(name string, layer int, v []float32) {
	if s.trace != nil {
		s.trace(name, layer, v)
	}
}

// siluVec applies x/(1+e^−x) in place as ggml_vec_silu_f32 does on AVX2
// (internal/kernels.SiLU).
func siluVec(x []float32) { kernels.SiLU(x) }

// rmsScale is ggml's rms_norm scale 1/sqrtf(mean + eps) from the float64
// sum of squares of n values, the mean rounded to float32 first.
func rmsScale(sum float64, n int, eps float32) float32 {
	mean := float32(sum / float64(n))
	return 1 / float32(math.Sqrt(float64(mean+eps)))
}

// sumSq is ggml's rms_norm sum of squares: Σ float64(x_i·x_i) in index
// order, each square rounded to float32 (the order is the one float64
// chain, so it is never split).
func sumSq(x []float32) float64 {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	return sum
}

// addSumSq sets x_i += a_i (the residual add) and returns sumSq(x) in the
// same pass: the additions hide behind the sum's chain of float64 adds.
// A nil a adds nothing (sumSq).
func addSumSq(x, a []float32) float64 {
	if a == nil {
		return sumSq(x)
	}
	a = a[:len(x)]
	var sum float64
	for i, v := range x {
		v += a[i]
		x[i] = v
		sum += float64(v * v)
	}
	return sum
}

// mulSumSq sets g_i ·= u_i (the gated FFN's product) and returns sumSq(g)
// in the same pass.
func mulSumSq(g, u []float32) float64 {
	u = u[:len(g)]
	var sum float64
	for i, v := range g {
		v *= u[i]
		g[i] = v
		sum += float64(v * v)
	}
	return sum
}

// relu2MulSumSq sets g_i = max(g_i, 0)²·u_i (squared-ReLU FFN) and returns
// sumSq(g) in the same pass.
func relu2MulSumSq(g, u []float32) float64 {
	u = u[:len(g)]
	var sum float64
	for i, v := range g {
		r := max(v, 0)
		r = r * r
		v = r * u[i]
		g[i] = v
		sum += float64(v * v)
	}
	return sum
}

// ropeTable fills the cos/sin of every pair at position pos as ggml's
// rope_cache_init does: theta starts at pos and is multiplied (in float32) by
// theta_scale = powf(freq_base, −2/n_dims) once per pair; each pair's angle
// is freq_scale·theta (rope_yarn's theta_interp; Params.RopeFreqScale, 1
// without rope scaling, which leaves theta's bits as they are); cos and sin
// are glibc's cosf and sinf (libmf.go).
func (s *Session) ropeTable(cos, sin []float32, pos int) {
	p := s.m.Params
	thetaScale := ropeThetaScale(p.RopeTheta, p.HeadDim)
	freqScale := p.RopeFreqScale
	if freqScale == 0 {
		freqScale = 1 // a Params built without the loader
	}
	theta := float32(pos)
	for i := range cos {
		a := freqScale * theta
		cos[i] = glibcCosf(a)
		sin[i] = glibcSinf(a)
		theta *= thetaScale
	}
}

// ropeThetaScale is ggml's theta_scale = powf(freq_base, −2.0f/n_dims): the
// exponent divided in float32, the power correctly rounded (glibc's powf
// agrees on every preset's base and head dimension, TestGlibcSinCosf).
func ropeThetaScale(base float32, headDim int) float32 {
	return float32(math.Pow(float64(base), float64(float32(-2)/float32(headDim))))
}

// ropeNeox rotates one head in place with the NEOX pairing: dimension i with
// i + d/2, by the angles of the table row cos/sin (kernels.RopeNeox: per
// pair x0·c − float32(x1·s) and float32(x1·c) + x0·s, each sum one fused
// multiply-add, eight pairs at a time in the assembly).
func ropeNeox(x, cos, sin []float32) { kernels.RopeNeox(x, cos, sin) }

// ropeAdjacent rotates one head in place with llama's normal pairing:
// dimension 2i with 2i + 1 (ggml rope, mode 0), the arithmetic of ropeNeox
// (kernels.RopeNeox).
func ropeAdjacent(x, cos, sin []float32) {
	for i := 0; i < len(x)/2; i++ {
		c, sn := cos[i], sin[i]
		x0, x1 := x[2*i], x[2*i+1]
		x[2*i] = fma32(-float32(x1*sn), x0, c)
		x[2*i+1] = fma32(float32(x1*c), x0, sn)
	}
}

// attention computes, for every token row t (at position pos0+t) and query
// head, softmax(K·q/sqrt(d))·V over cache positions 0…pos0+t, into att[t].
// The (row, head) pairs are independent and split over the threads; each
// is computed exactly as for a single token (attendHead).
func (s *Session) attention(kc, vc []uint16, pos0 int, q, att [][]float32) {
	p := s.m.Params
	th := max(s.m.opts.Threads, 1)
	if len(s.work) < th {
		s.work = make([]attnScratch, th)
	}
	if s.m.opts.Arith != ArithMainline && s.m.opts.F32Attention && p.HeadDim%8 == 0 && (p.NHead/p.NHeadKV)%2 == 0 {
		// attendHead's ik_llama.cpp case, two query heads of one KV head
		// per call (attendHeadsIK widens their K and V once).
		hd := p.HeadDim
		parallel.RangeHot(len(q)*p.NHead/2, th, func(worker, lo, hi int) {
			for u := lo; u < hi; u++ {
				t, h := 2*u/p.NHead, 2*u%p.NHead
				s.attendHeadsIK(&s.work[worker], kc, vc, pos0+t+1, h, 2, q[t][h*hd:(h+2)*hd], att[t][h*hd:(h+2)*hd])
			}
		})
		return
	}
	units := len(q) * p.NHead
	parallel.RangeHot(units, th, func(worker, lo, hi int) {
		sc := &s.work[worker]
		for u := lo; u < hi; u++ {
			t, h := u/p.NHead, u%p.NHead
			hd := p.HeadDim
			s.attendHead(sc, kc, vc, pos0+t+1, h, q[t][h*hd:(h+1)*hd], att[t][h*hd:(h+1)*hd])
		}
	})
}

// attendHead computes query head h's softmax(K·q/sqrt(d))·V over the first
// n positions of the F16 cache into out. Unless Options.F32Attention
// (bitnet.cpp, ggml's mul_mat against F16 tensors) q and the probabilities
// are rounded to F16 first and the products follow ggml's F16 dot; with it
// ik_llama.cpp's flash attention runs (attendHeadIK), or, for a head size
// that is not a multiple of 8, f32 operands with the products summed in
// float64. The softmax sums exp in float64
// and scales by float32(1/sum). GQA: head h reads KV head h/(NHead/NHeadKV).
func (s *Session) attendHead(sc *attnScratch, kc, vc []uint16, n, h int, q, out []float32) {
	if s.m.opts.Arith == ArithMainline {
		hd := s.m.Params.HeadDim
		sc.qh = resizeF32(sc.qh, hd)
		kernels.RoundF16(sc.qh, q)
		if cap(sc.vcol) < hd {
			sc.vcol = make([]uint16, hd)
		}
		s.attendHeadMainline(kc, vc, n, h, sc.qh, sc.vcol[:hd], out)
		return
	}
	if s.m.opts.F32Attention && s.m.Params.HeadDim%8 == 0 {
		s.attendHeadIK(sc, kc, vc, n, h, q, out)
		return
	}
	p := s.m.Params
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	kvh := h / (p.NHead / p.NHeadKV)
	// llama.cpp's kq_scale = 1.0f/sqrtf(float(n_embd_head)): the square
	// root rounded to float32 first (1 ulp from float32(1/√d) for d = 96).
	scale := 1 / float32(math.Sqrt(float64(hd)))
	f16Ops := !s.m.opts.F32Attention
	roundQ, roundP := f16Ops, f16Ops && !s.m.opts.Batched
	tiny := f16Ops && s.ub.kqvTiny
	if tiny {
		roundP = false
	}
	// off: the chunk's first cell within its 32-cell group of llama.cpp's
	// cache (ppl_batch.go); the cells before it count as masked zeros.
	off := s.ub.cellOff & 31
	np := (off + n + 31) &^ 31
	sc.qh = resizeF32(sc.qh, hd)
	sc.scores = resizeF32(sc.scores, n)
	sc.probs = resizeF32(sc.probs, np)
	if cap(sc.vcol) < np {
		sc.vcol = make([]uint16, np)
	}
	qh, scores, padded, vcol := sc.qh, sc.scores, sc.probs, sc.vcol[:np]
	copy(qh, q)
	if roundQ {
		kernels.RoundF16(qh, qh)
	}
	mx := float32(math.Inf(-1))
	if roundQ {
		// The head's K rows where they lie in the cache (one kvDim
		// apart), each dotF16ggml's sum.
		kernels.DotF16RowsStride(scores[:n], kc[kvh*hd:], kvDim, qh)
		for j, v := range scores[:n] {
			v *= scale
			scores[j] = v
			mx = max(mx, v)
		}
	} else {
		for j := 0; j < n; j++ {
			krow := kc[j*kvDim+kvh*hd : j*kvDim+(kvh+1)*hd]
			v := dotF16F32(krow, qh) * scale
			scores[j] = v
			mx = max(mx, v)
		}
	}
	// ggml_vec_soft_max_f32: exponentials in groups of eight, each group
	// summed in float32 and added to a float64 total; the padding of the
	// last group is exp(−inf) = 0, as for ggml's masked cache cells.
	var sum float64
	clear(padded[:off])
	kernels.ExpSub(padded[off:off+n], scores[:n], mx) // expVec(scores[j] − mx)
	clear(padded[off+n:])
	for g := 0; g < len(padded); g += 8 {
		sum += float64(sumExp8(padded[g : g+8]))
	}
	inv := float32(1 / sum)
	for j := range padded {
		padded[j] *= inv
	}
	if roundP {
		kernels.RoundF16(padded, padded)
	}
	if tiny {
		// V's rows of the head's dimensions, cells along each (stride nCtx).
		kernels.TinyBLASDotsOffF16(out, vc[kvh*hd*s.nCtx:], s.nCtx, padded[off:off+n], off)
		return
	}
	if roundP && off == 0 && np <= s.nCtx && s.vDirty <= n {
		// The cells from n to np are +0 (vDirty), the padding the
		// gather below would make: the columns are read in place.
		kernels.DotF16RowsStride(out, vc[kvh*hd*s.nCtx:], s.nCtx, padded)
		return
	}
	if roundP {
		// The columns of the head's dimensions, each zero-padded to np,
		// in one buffer for one DotF16Rows call (dotF16ggml per row).
		// Positions from n on (later tokens of the batch, stale cells)
		// count as zeros, like ggml's masked cells.
		if cap(sc.vcol) < hd*np {
			sc.vcol = make([]uint16, hd*np)
		}
		vbuf := sc.vcol[:hd*np]
		for i := range out {
			col := (kvh*hd + i) * s.nCtx
			clear(vbuf[i*np : i*np+off])
			copy(vbuf[i*np+off:i*np+off+n], vc[col:col+n])
			clear(vbuf[i*np+off+n : (i+1)*np])
		}
		kernels.DotF16Rows(out, vbuf, padded)
		return
	}
	for i := range out {
		col := (kvh*hd + i) * s.nCtx
		clear(vcol[:off])
		copy(vcol[off:], vc[col:col+n])
		clear(vcol[off+n:])
		out[i] = dotF16F32(vcol, padded)
	}
}
