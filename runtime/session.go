package runtime

import (
	"fmt"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"math"
)

// Session is one decoding stream over a Model: the F16 KV cache of every
// layer and the position of the next token. A Session is not safe for
// concurrent use; several Sessions may share a Model.
type Session struct {
	m      *Model
	nCtx   int
	pos    int
	kCache [][]uint16 // per layer, [nCtx][NHeadKV·HeadDim] F16 bits
	vCache [][]uint16

	// scratch, reused across calls
	x, xn, q, k, v, attn, o []float32
	gate, up, down          []float32
	hidden, logits          []float32
	scores, probs           []float32
	vcol                    []uint16
	ropeCos, ropeSin        []float32
	act                     Activation

	// trace, when set (tests), receives named intermediate tensors of
	// each layer, as ggml's eval callback names them.
	trace func(name string, layer int, v []float32)
}

// sessionPositions is the room NewSession gives a request of nCtx
// positions (see NewSession).
func sessionPositions(p Params, nCtx int) int {
	if nCtx <= 0 || (p.NCtx > 0 && nCtx > p.NCtx) {
		nCtx = p.NCtx
	}
	if perPos := 2 * 2 * p.NHeadKV * p.HeadDim * max(p.NLayer, 1); perPos > 0 && nCtx > MaxKVCacheBytes/perPos {
		nCtx = MaxKVCacheBytes / perPos
	}
	return max(nCtx, 1)
}

// MaxKVCacheBytes bounds the K and V cache one Session allocates (F16, all
// layers): 4 GiB, room for 4096 positions of a 30-layer, 5-KV-head × 128
// model many times over, yet well below what would take a host down.
const MaxKVCacheBytes = 4 << 30

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
	qDim := p.NHead * p.HeadDim
	s := &Session{m: m, nCtx: nCtx}
	s.kCache = make([][]uint16, p.NLayer)
	s.vCache = make([][]uint16, p.NLayer)
	for i := range s.kCache {
		s.kCache[i] = make([]uint16, nCtx*kvDim)
		s.vCache[i] = make([]uint16, nCtx*kvDim)
	}
	s.x = make([]float32, p.NEmbd)
	s.xn = make([]float32, max(p.NEmbd, qDim, p.NFF))
	s.q = make([]float32, qDim)
	s.k = make([]float32, kvDim)
	s.v = make([]float32, kvDim)
	s.attn = make([]float32, qDim)
	s.o = make([]float32, p.NEmbd)
	s.gate = make([]float32, p.NFF)
	s.up = make([]float32, p.NFF)
	s.down = make([]float32, p.NEmbd)
	s.hidden = make([]float32, p.NEmbd)
	s.logits = make([]float32, p.NVocab)
	s.scores = make([]float32, nCtx)
	s.probs = make([]float32, nCtx+32)
	s.vcol = make([]uint16, nCtx+32)
	s.ropeCos = make([]float32, p.HeadDim/2)
	s.ropeSin = make([]float32, p.HeadDim/2)
	return s
}

// Pos returns the number of tokens evaluated so far (the position of the
// next token).
func (s *Session) Pos() int { return s.pos }

// Reset empties the KV cache (the next token is at position 0).
func (s *Session) Reset() { s.pos = 0 }

// Eval runs one token at the next position and returns its logits (len
// NVocab). The slice is owned by the Session and overwritten by the next
// call. Errors: a token id outside [0, NVocab) or a full context.
func (s *Session) Eval(token int32) ([]float32, error) {
	if err := s.forward(token); err != nil {
		return nil, err
	}
	out := s.m.output
	if s.m.opts.Batched && out.Type == gguf.TypeF16 {
		// The batched reference multiplies the F16 head with f32 rows.
		parallelRows(out.M, s.m.opts.Threads, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				s.logits[r] = dotF16F32(out.u16[r*out.K:(r+1)*out.K], s.hidden)
			}
		})
		return s.logits, nil
	}
	out.MatVec(s.logits, s.hidden, &s.act, s.m.opts.Threads)
	return s.logits, nil
}

// EvalHidden runs one token like Eval but skips the LM head; Hidden then
// returns its final hidden state.
func (s *Session) EvalHidden(token int32) error { return s.forward(token) }

// Hidden returns RMSNorm(x)·output_norm of the last evaluated token (len
// NEmbd): the row llama-embedding pools. The slice is overwritten by the
// next call.
func (s *Session) Hidden() []float32 { return s.hidden }

func (s *Session) forward(token int32) error {
	m, p := s.m, s.m.Params
	if token < 0 || int(token) >= p.NVocab {
		return fmt.Errorf("token id %d is outside the vocabulary [0, %d)", token, p.NVocab)
	}
	if s.pos >= s.nCtx {
		return fmt.Errorf("context full: %d positions", s.nCtx)
	}
	th := m.opts.Threads
	pos := s.pos
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	m.tokEmbd.embedRow(s.x, int(token))
	s.ropeTable(pos)
	for li := range m.layers {
		l := &m.layers[li]
		xn := s.xn[:p.NEmbd]
		rmsNorm(xn, s.x, l.attnNorm, p.RMSEps)
		s.emit("attn_norm", li, xn)
		l.wq.MatVec(s.q, xn, &s.act, th)
		l.wk.MatVec(s.k, xn, &s.act, th)
		l.wv.MatVec(s.v, xn, &s.act, th)
		rope := s.ropeNeox
		if m.spec.ropeNorm {
			rope = s.ropeAdjacent
		}
		for h := 0; h < p.NHead; h++ {
			rope(s.q[h*hd : (h+1)*hd])
		}
		for h := 0; h < p.NHeadKV; h++ {
			rope(s.k[h*hd : (h+1)*hd])
		}
		kc, vc := s.kCache[li], s.vCache[li]
		for i := range kvDim {
			kc[pos*kvDim+i] = f32ToF16(s.k[i])
			vc[pos*kvDim+i] = f32ToF16(s.v[i])
		}
		s.emit("Qcur", li, s.q)
		s.emit("Kcur", li, s.k)
		s.emit("Vcur", li, s.v)
		s.attention(kc, vc, pos)
		s.emit("kqv_out", li, s.attn)
		on := s.attn
		if l.attnSubNorm != nil {
			on = s.xn[:len(s.attn)]
			rmsNorm(on, s.attn, l.attnSubNorm, p.RMSEps)
			s.emit("attn_sub_norm", li, on)
		}
		l.wo.MatVec(s.o, on, &s.act, th)
		s.emit("attn_o_out", li, s.o)
		for i := range s.x {
			s.x[i] += s.o[i]
		}
		rmsNorm(xn, s.x, l.ffnNorm, p.RMSEps)
		l.wGate.MatVec(s.gate, xn, &s.act, th)
		l.wUp.MatVec(s.up, xn, &s.act, th)
		switch p.FFN {
		case SiLU:
			siluVec(s.gate)
			for i, g := range s.gate {
				s.gate[i] = g * s.up[i]
			}
		case ReLU2:
			for i, g := range s.gate {
				r := max(g, 0)
				r = r * r
				s.gate[i] = r * s.up[i]
			}
		}
		s.emit("ffn_sub_out", li, s.gate)
		fn := s.gate
		if l.ffnSubNorm != nil {
			fn = s.xn[:p.NFF]
			rmsNorm(fn, s.gate, l.ffnSubNorm, p.RMSEps)
		}
		l.wDown.MatVec(s.down, fn, &s.act, th)
		s.emit("ffn_down", li, s.down)
		for i := range s.x {
			s.x[i] += s.down[i]
		}
	}
	rmsNorm(s.hidden, s.x, m.outputNorm, p.RMSEps)
	s.pos++
	return nil
}

// emit passes an intermediate tensor to the trace hook, if any.
func (s *Session) emit(name string, layer int, v []float32) {
	if s.trace != nil {
		s.trace(name, layer, v)
	}
}

// siluVec applies x/(1+e^−x) in place as ggml_vec_silu_f32 does on AVX2:
// groups of eight use the vector exponential (expVec), a tail shorter than
// eight uses the C library's expf (correctly rounded here via float64).
func siluVec(x []float32) {
	n8 := len(x) &^ 7
	for i, v := range x {
		var e float32
		if i < n8 {
			e = expVec(-v)
		} else {
			e = float32(math.Exp(float64(-v)))
		}
		x[i] = v / (1 + e)
	}
}

// rmsNorm writes dst = (x · 1/sqrt(mean(x²)+eps)) · w as ggml's rms_norm
// followed by the mul with the weight: the sum of squares in float64, the
// scale and both products in float32.
func rmsNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		t := v * scale
		dst[i] = t * w[i]
	}
}

// ropeTable fills the cos/sin of every pair at position pos as ggml's
// rope_cache_init does: theta starts at pos and is multiplied (in float32) by
// theta_scale = powf(freq_base, −2/n_dims) once per pair.
func (s *Session) ropeTable(pos int) {
	p := s.m.Params
	thetaScale := float32(math.Pow(float64(p.RopeTheta), float64(float32(-2)/float32(p.HeadDim))))
	theta := float32(pos)
	for i := range s.ropeCos {
		s.ropeCos[i] = float32(math.Cos(float64(theta)))
		s.ropeSin[i] = float32(math.Sin(float64(theta)))
		theta *= thetaScale
	}
}

// ropeNeox rotates one head in place with the NEOX pairing: dimension i with
// i + d/2.
func (s *Session) ropeNeox(x []float32) {
	half := len(x) / 2
	for i := 0; i < half; i++ {
		c, sn := s.ropeCos[i], s.ropeSin[i]
		x0, x1 := x[i], x[i+half]
		x[i] = fma32(-float32(x1*sn), x0, c)
		x[i+half] = fma32(float32(x1*c), x0, sn)
	}
}

// ropeAdjacent rotates one head in place with llama's normal pairing:
// dimension 2i with 2i + 1 (ggml rope, mode 0), the same arithmetic as
// ropeNeox.
func (s *Session) ropeAdjacent(x []float32) {
	for i := 0; i < len(x)/2; i++ {
		c, sn := s.ropeCos[i], s.ropeSin[i]
		x0, x1 := x[2*i], x[2*i+1]
		x[2*i] = fma32(-float32(x1*sn), x0, c)
		x[2*i+1] = fma32(float32(x1*c), x0, sn)
	}
}

// attention computes every query head's softmax(K·q/sqrt(d))·V over
// positions 0..pos of the F16 cache. With archSpec.attnF16Operands (bitnet.cpp,
// ggml's mul_mat against F16 tensors) q and the probabilities are rounded to
// F16 first; products are summed in float64; the softmax sums exp in float64
// and scales by float32(1/sum).
func (s *Session) attention(kc, vc []uint16, pos int) {
	p := s.m.Params
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	group := p.NHead / p.NHeadKV
	scale := float32(1 / math.Sqrt(float64(hd)))
	n := pos + 1
	f16Ops := s.m.spec.attnF16Operands
	roundQ, roundP := f16Ops, f16Ops && !s.m.opts.Batched
	padded := s.probs[:(n+31)&^31]
	qh := s.xn[:hd] // scratch: xn is free during attention
	scores := s.scores[:n]
	for h := 0; h < p.NHead; h++ {
		kvh := h / group
		copy(qh, s.q[h*hd:(h+1)*hd])
		if roundQ {
			for i, v := range qh {
				qh[i] = roundF16(v)
			}
		}
		mx := float32(math.Inf(-1))
		for j := 0; j < n; j++ {
			krow := kc[j*kvDim+kvh*hd : j*kvDim+(kvh+1)*hd]
			var sc float32
			if roundQ {
				sc = dotF16ggml(krow, qh)
			} else {
				sc = dotF16F32(krow, qh)
			}
			sc *= scale
			scores[j] = sc
			mx = max(mx, sc)
		}
		// ggml_vec_soft_max_f32: exponentials in groups of eight, each group
		// summed in float32 and added to a float64 total; the padding of the
		// last group is exp(−inf) = 0, as for ggml's masked cache cells.
		var sum float64
		for j := range padded {
			e := float32(0)
			if j < n {
				e = expVec(scores[j] - mx)
			}
			padded[j] = e
		}
		for g := 0; g < len(padded); g += 8 {
			sum += float64(sumExp8(padded[g : g+8]))
		}
		inv := float32(1 / sum)
		for j := range padded {
			p := padded[j] * inv
			if roundP {
				p = roundF16(p)
			}
			padded[j] = p
		}
		out := s.attn[h*hd : (h+1)*hd]
		vcol := s.vcol[:len(padded)]
		for i := range out {
			for j := range vcol {
				vcol[j] = 0
				if j < n {
					vcol[j] = vc[j*kvDim+kvh*hd+i]
				}
			}
			if roundP {
				out[i] = dotF16ggml(vcol, padded)
			} else {
				out[i] = dotF16F32(vcol, padded)
			}
		}
	}
}
