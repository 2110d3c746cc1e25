package runtime

import (
	"errors"
	"fmt"
	"math"
)

// ErrEmptyInput is returned by Hidden and Embed for an empty token list.
var ErrEmptyInput = errors.New("no tokens to embed")

// Hidden runs the whole sequence ids through the model and returns the final
// hidden state of every position, RMSNorm(x)·output_norm (len NEmbd each):
// the rows the pooling reduces. The graph per layer (BitNet embedding models,
// spec conversion.md §6; HF Qwen3Model / Gemma3TextModel plus the
// per-projection input norm):
//
//	h   = RMSNorm(x, attn_norm)
//	q,k,v = W_{q,k,v} · RMSNorm(h, attn_{q,k,v}_norm_in)      (int8 activations for I2_S)
//	q,k = RMSNorm per head (attn_q_norm, attn_k_norm), NEOX rope (freq_base,
//	      freq_base_swa on sliding layers)
//	a   = softmax(AttnScale·q·k, causal / sliding-window mask)·v   (GQA)
//	o   = W_o · RMSNorm(a, attn_output_norm_in); Gemma3: o = RMSNorm(o, post_attention_norm)
//	x  += o
//	h   = RMSNorm(x, ffn_norm)
//	s   = act(W_gate · RMSNorm(h, ffn_gate_norm_in)) · (W_up · RMSNorm(h, ffn_up_norm_in))
//	d   = W_down · RMSNorm(s, ffn_down_norm_in); Gemma3: d = RMSNorm(d, post_ffw_norm)
//	x  += d
//
// with x₀ = token_embd[id] (Gemma3: × √NEmbd). Attention runs in float32
// with float64 sums over the full sequence (no KV cache). Errors: no tokens,
// an id outside [0, NVocab), more than NCtx tokens.
func (m *EmbeddingModel) Hidden(ids []int32) ([][]float32, error) {
	p := m.Params
	n := len(ids)
	if n == 0 {
		return nil, ErrEmptyInput
	}
	if n > p.NCtx {
		return nil, fmt.Errorf("%d tokens exceed the context length %d", n, p.NCtx)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= p.NVocab {
			return nil, fmt.Errorf("token %d: id %d is outside the vocabulary [0, %d)", i, id, p.NVocab)
		}
	}
	th := m.opts.Threads
	hd := p.HeadDim
	qDim, kvDim := p.NHead*hd, p.NHeadKV*hd
	x := rows(n, p.NEmbd)
	scale := float32(math.Sqrt(float64(p.NEmbd)))
	for t, id := range ids {
		m.tokEmbd.embedRow(x[t], int(id))
		if m.spec.embedScale {
			for i := range x[t] {
				x[t][i] *= scale
			}
		}
	}
	q, k, v := rows(n, qDim), rows(n, kvDim), rows(n, kvDim)
	att := rows(n, qDim)
	gate, up := rows(n, p.NFF), rows(n, p.NFF)
	// Every projection takes the whole sequence at once (MatMul: the same
	// numbers as one token at a time); each has its own input norm.
	h, o := rows(n, p.NEmbd), rows(n, p.NEmbd)
	in1, in2, in3 := rows(n, max(p.NEmbd, qDim, p.NFF)), rows(n, p.NEmbd), rows(n, p.NEmbd)
	var sc batchScratch
	cosT, sinT := make([]float32, hd/2), make([]float32, hd/2)
	for li := range m.layers {
		l := &m.layers[li]
		theta := p.RopeTheta
		if p.SlidingLayers[li] {
			theta = p.RopeThetaSWA
		}
		xq, xk, xv := width(in1, p.NEmbd), in2, in3
		for t := 0; t < n; t++ {
			embRMSNorm(h[t], x[t], l.attnNorm, p.RMSEps)
			embRMSNorm(xq[t], h[t], l.qIn, p.RMSEps)
			embRMSNorm(xk[t], h[t], l.kIn, p.RMSEps)
			embRMSNorm(xv[t], h[t], l.vIn, p.RMSEps)
		}
		l.wq.matMul(q, xq, &sc, th)
		l.wk.matMul(k, xk, &sc, th)
		l.wv.matMul(v, xv, &sc, th)
		for t := 0; t < n; t++ {
			embRopeTable(cosT, sinT, t, theta, hd)
			for hh := 0; hh < p.NHead; hh++ {
				head := q[t][hh*hd : (hh+1)*hd]
				embRMSNorm(head, head, l.qNorm, p.RMSEps)
				embRopeNeox(head, cosT, sinT)
			}
			for hh := 0; hh < p.NHeadKV; hh++ {
				head := k[t][hh*hd : (hh+1)*hd]
				embRMSNorm(head, head, l.kNorm, p.RMSEps)
				embRopeNeox(head, cosT, sinT)
			}
		}
		window := 0
		if p.SlidingLayers[li] {
			window = p.SlidingWindow
		}
		embAttention(att, q, k, v, p, window)
		oin := width(in1, qDim)
		for t := 0; t < n; t++ {
			embRMSNorm(oin[t], att[t], l.oIn, p.RMSEps)
		}
		l.wo.matMul(o, oin, &sc, th)
		xg, xu := width(in1, p.NEmbd), in2
		for t := 0; t < n; t++ {
			if m.spec.postNorms {
				embRMSNorm(o[t], o[t], l.postAttnNorm, p.RMSEps)
			}
			for i := range o[t] {
				x[t][i] += o[t][i]
			}
			embRMSNorm(h[t], x[t], l.ffnNorm, p.RMSEps)
			embRMSNorm(xg[t], h[t], l.gateIn, p.RMSEps)
			embRMSNorm(xu[t], h[t], l.upIn, p.RMSEps)
		}
		l.wGate.matMul(gate, xg, &sc, th)
		l.wUp.matMul(up, xu, &sc, th)
		din := width(in1, p.NFF)
		for t := 0; t < n; t++ {
			for i, g := range gate[t] {
				gate[t][i] = m.spec.act(g) * up[t][i]
			}
			embRMSNorm(din[t], gate[t], l.downIn, p.RMSEps)
		}
		l.wDown.matMul(o, din, &sc, th)
		for t := 0; t < n; t++ {
			if m.spec.postNorms {
				embRMSNorm(o[t], o[t], l.postFFNNorm, p.RMSEps)
			}
			for i := range o[t] {
				x[t][i] += o[t][i]
			}
		}
	}
	out := rows(n, p.NEmbd)
	for t := range x {
		embRMSNorm(out[t], x[t], m.outputNorm, p.RMSEps)
	}
	return out, nil
}

// Embed returns the sentence embedding of ids: Hidden, reduced with mode
// (Pool), then L2-normalised (llama-embedding's default --embd-normalize 2).
// Errors are those of Hidden.
func (m *EmbeddingModel) Embed(ids []int32, mode PoolMode) ([]float32, error) {
	hs, err := m.Hidden(ids)
	if err != nil {
		return nil, err
	}
	return Normalize(Pool(hs, mode)), nil
}

// Normalize returns v scaled to unit Euclidean length (the norm summed in
// float64); a zero vector is returned unchanged (as a copy).
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := append([]float32(nil), v...)
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range out {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// width returns the first w floats of every row of r.
func width(r [][]float32, w int) [][]float32 {
	out := make([][]float32, len(r))
	for i := range r {
		out[i] = r[i][:w]
	}
	return out
}

// rows returns n rows of width floats, carved from one allocation.
func rows(n, width int) [][]float32 {
	buf := make([]float32, n*width)
	out := make([][]float32, n)
	for i := range out {
		out[i] = buf[i*width : (i+1)*width : (i+1)*width]
	}
	return out
}

// embRMSNorm writes dst = x·(1/√(mean(x²)+eps))·w (sum of squares in
// float64, products in float32). dst may alias x.
func embRMSNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(sum/float64(len(x))+float64(eps)))
	for i, v := range x {
		t := v * scale
		dst[i] = t * w[i]
	}
}

// embRopeTable fills cos/sin of pair i at position pos: angle
// pos·theta^(−2i/d), computed in float64 (HF's inv_freq).
func embRopeTable(cosT, sinT []float32, pos int, theta float32, d int) {
	for i := range cosT {
		a := float64(pos) * math.Pow(float64(theta), -2*float64(i)/float64(d))
		cosT[i] = float32(math.Cos(a))
		sinT[i] = float32(math.Sin(a))
	}
}

// embRopeNeox rotates one head in place, pairing dimension i with i + d/2
// (NEOX / HF rotate_half).
func embRopeNeox(x, cosT, sinT []float32) {
	half := len(x) / 2
	for i := 0; i < half; i++ {
		c, s := float64(cosT[i]), float64(sinT[i])
		x0, x1 := float64(x[i]), float64(x[i+half])
		x[i] = float32(x0*c - x1*s)
		x[i+half] = float32(x1*c + x0*s)
	}
}

// embAttention computes softmax(scale·q·k)·v for every position and query
// head (GQA: head h reads KV head h / (NHead/NHeadKV)). Position t sees
// positions j ≤ t (causal) or all j (non-causal); with window > 0 only
// |t − j| < window. Dot products and the softmax sum in float64.
func embAttention(att, q, k, v [][]float32, p EmbeddingParams, window int) {
	n := len(q)
	hd := p.HeadDim
	group := p.NHead / p.NHeadKV
	scores := make([]float64, n)
	for t := 0; t < n; t++ {
		lo, hi := 0, n
		if p.Causal {
			hi = t + 1
		}
		if window > 0 {
			lo = max(lo, t-window+1)
			if !p.Causal {
				hi = min(hi, t+window)
			}
		}
		for h := 0; h < p.NHead; h++ {
			kvh := h / group
			qh := q[t][h*hd : (h+1)*hd]
			mx := math.Inf(-1)
			for j := lo; j < hi; j++ {
				kj := k[j][kvh*hd : (kvh+1)*hd]
				var s float64
				for i, a := range qh {
					s += float64(a) * float64(kj[i])
				}
				s *= float64(p.AttnScale)
				scores[j] = s
				mx = math.Max(mx, s)
			}
			var sum float64
			for j := lo; j < hi; j++ {
				scores[j] = math.Exp(scores[j] - mx)
				sum += scores[j]
			}
			out := att[t][h*hd : (h+1)*hd]
			for i := range out {
				var acc float64
				for j := lo; j < hi; j++ {
					acc += scores[j] * float64(v[j][kvh*hd+i])
				}
				out[i] = float32(acc / sum)
			}
		}
	}
}
