package verify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// refGeometry is the float reference's own reading of a causal LM's
// config.json. It is kept apart from convert.Geometry (which convert,
// runtime, dummy and codegen share) on purpose: a wrong rule there (head_dim
// precedence, KV heads, FFN width) would otherwise be made identically on
// both sides of the comparison and pass unnoticed. The rules are those of
// transformers' LlamaConfig / LlamaAttention (models/llama): head_dim is the
// config's head_dim when set, else hidden_size / num_attention_heads;
// num_key_value_heads defaults to num_attention_heads; rope_theta to 10000.
type refGeometry struct {
	hidden, heads, kvHeads, headDim, ff, vocab, layers int
	eps, theta                                         float64
	// posScale multiplies every position before the rope angles: 1/factor
	// under linear rope scaling (transformers' linear rope type divides the
	// position ids by the factor); 0 or 1 without it.
	posScale float64
	// relu2 selects the squared-ReLU gate (hidden_act "relu2", 2B-4T);
	// otherwise SiLU (hidden_act "silu", 1bitLLM, Llama3, Falcon3).
	relu2 bool
	// refGraph: Qwen2's biases, Qwen3's q/k norms, the per-projection
	// norms' eps (reference_qwen.go).
	refGraph
	// adjacentRope: the weights come in the GGUF's row order with q/k rows
	// interleaved for llama's rope (convert.RopePermuter, arch llama), so
	// rope pairs dimensions 2i and 2i+1; per head this is HF's rotate_half
	// on the HF rows, permuted, and q·k is unchanged.
	adjacentRope bool
	// observe, when set, sees every projection's input (row-major [P,
	// inDim]) before the product: the error model (thresholds.go).
	observe func(name string, in []float64, inDim int)
	// observeScores, when set, gets each layer's rms of the scaled
	// attention scores q·k/√d over every (position, head, key) the softmax
	// sees: the error model's gain of the q/k path.
	observeScores func(rms float64)
}

// refGeometryOf reads g from cfg. Missing or non-positive sizes, an unknown
// hidden_act, a rope_scaling other than linear (the only kind the reference
// implements) and heads that
// are not a multiple of the KV heads are errors naming config.json and the
// key.
func refGeometryOf(cfg *hf.Config) (refGeometry, error) {
	var g refGeometry
	for _, x := range []struct {
		dst *int
		key string
	}{{&g.hidden, "hidden_size"}, {&g.heads, "num_attention_heads"}, {&g.ff, "intermediate_size"}, {&g.vocab, "vocab_size"}, {&g.layers, "num_hidden_layers"}} {
		v, ok, err := cfg.Int(x.key)
		if err != nil {
			return g, err
		}
		if !ok || v <= 0 {
			return g, fmt.Errorf("%s: %q missing or not positive (the float reference needs it)", cfg.Path, x.key)
		}
		*x.dst = v
	}
	g.kvHeads = g.heads
	if v, ok, err := cfg.Int("num_key_value_heads"); err != nil {
		return g, err
	} else if ok && v > 0 {
		g.kvHeads = v
	}
	if g.heads%g.kvHeads != 0 {
		return g, fmt.Errorf("%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", cfg.Path, g.heads, g.kvHeads)
	}
	g.headDim = g.hidden / g.heads
	if v, ok, err := cfg.Int("head_dim"); err == nil && ok && v > 0 {
		g.headDim = v
	}
	if g.headDim == 0 || g.headDim%2 != 0 {
		return g, fmt.Errorf("%s: head dimension %d must be even and non-zero", cfg.Path, g.headDim)
	}
	eps, ok, err := cfg.Float("rms_norm_eps")
	if err != nil {
		return g, err
	}
	if !ok || !(eps > 0) {
		return g, fmt.Errorf("%s: %q missing or not positive (the float reference needs it)", cfg.Path, "rms_norm_eps")
	}
	g.eps = eps
	g.theta = 10000
	if th, ok, err := cfg.Float("rope_theta"); err != nil {
		return g, err
	} else if ok {
		if !(th > 0) || math.IsInf(th, 0) {
			return g, fmt.Errorf("%s: rope_theta %v must be a positive number", cfg.Path, th)
		}
		g.theta = th
	}
	g.posScale = 1
	if rs, isObject := cfg.Sub("rope_scaling"); isObject {
		typ, _, err := rs.String("type", "rope_type")
		if err != nil {
			return g, err
		}
		if typ != "linear" {
			return g, fmt.Errorf("%s: rope_scaling type %q: the float reference implements linear scaling only", cfg.Path, typ)
		}
		f, ok, err := rs.Float("factor")
		if err != nil {
			return g, err
		}
		if !ok || !(f > 0) || math.IsInf(f, 0) {
			return g, fmt.Errorf("%s: rope_scaling needs a positive \"factor\"", cfg.Path)
		}
		g.posScale = 1 / f
	} else if cfg.Has("rope_scaling") && cfg.Raw["rope_scaling"] != nil {
		return g, fmt.Errorf("%s: \"rope_scaling\" must be an object or null", cfg.Path)
	}
	act, _, err := cfg.String("hidden_act")
	if err != nil {
		return g, err
	}
	switch act {
	case "", "silu":
	case "relu2":
		g.relu2 = true
	default:
		return g, fmt.Errorf("%s: hidden_act %q: the float reference knows silu and relu2", cfg.Path, act)
	}
	g.refGraph, err = refGraphOf(cfg)
	return g, err
}

// refWeights gives the reference its weights by GGUF tensor name, one tensor
// at a time, so that no more than one matrix is in memory (sourceWeights
// reads them from a checkpoint; tests and benchmarks may generate them).
type refWeights interface {
	// shape returns the HF shape ([out, in] for matrices, [n] for vectors)
	// and whether the tensor exists.
	shape(name string) ([]int, bool)
	// vector returns a 1-D tensor.
	vector(name string) ([]float64, error)
	// rows returns rows ids of a 2-D tensor, row-major (len(ids)·in).
	rows(name string, ids []int32) ([]float64, error)
	// blocks calls fn with consecutive row blocks [lo, hi) of a 2-D tensor
	// as row-major float64 values, each block at most maxElems values (at
	// least one row); w is reused after fn returns.
	blocks(name string, maxElems int, fn func(lo, hi int, w []float64)) error
}

// refBlockElems is the size of one float64 weight block of the reference
// (8 MiB): large enough for an efficient product, small beside a matrix.
const refBlockElems = 1 << 20

// refLogits runs the float reference over ids (all positions at once, one
// layer after the other) and returns the logits, row-major [len(ids),
// vocab]. layerDone, when set, is called after each layer (0-based) and
// once with -1 after the output head.
//
// The arithmetic is transformers' LlamaModel forward with BitNet's sub-norms
// (modeling_bitnet.py: attn_sub_norm before o_proj, ffn_sub_norm before
// down_proj, when the checkpoint has them): RMSNorm x·rsqrt(mean(x²)+eps)·w,
// rotate_half RoPE, causal softmax attention with grouped KV heads, SiLU or
// squared-ReLU gate, all in float64 with float activations (no int8, no F16
// cache). Matrix products over all prompt positions are gonum's
// blas64.Gemm; there is no summation order to reproduce.
func refLogits(w refWeights, g refGeometry, ids []int32, layerDone func(layer int)) ([]float64, error) {
	P := len(ids)
	if P == 0 {
		return nil, fmt.Errorf("no positions")
	}
	for _, id := range ids {
		if id < 0 || int(id) >= g.vocab {
			return nil, fmt.Errorf("token id %d out of range [0, %d)", id, g.vocab)
		}
	}
	qDim, kvDim := g.heads*g.headDim, g.kvHeads*g.headDim
	if err := checkMatrix(w, "token_embd.weight", g.vocab, g.hidden); err != nil {
		return nil, err
	}
	x, err := w.rows("token_embd.weight", ids)
	if err != nil {
		return nil, err
	}
	proj := func(name string, in []float64, inDim, outDim int) ([]float64, error) {
		if err := checkMatrix(w, name, outDim, inDim); err != nil {
			return nil, err
		}
		in, nerr := refNormIn(w, g, name, in, inDim)
		if nerr != nil {
			return nil, nerr
		}
		if g.observe != nil {
			g.observe(name, in, inDim)
		}
		out := make([]float64, P*outDim)
		err := w.blocks(name, refBlockElems, func(lo, hi int, blk []float64) {
			gemmNT(P, hi-lo, inDim, in, inDim, blk, out[lo:], outDim)
		})
		return out, err
	}
	norm := func(name string, in []float64, n int, optional bool) ([]float64, error) {
		s, ok := w.shape(name)
		if !ok && optional {
			return in, nil
		}
		if !ok || len(s) != 1 || s[0] != n {
			return nil, shapeError(name, s, ok, []int{n})
		}
		v, err := w.vector(name)
		if err != nil {
			return nil, err
		}
		return rmsNormRows(in, v, g.eps), nil
	}
	for li := 0; li < g.layers; li++ {
		b := fmt.Sprintf("blk.%d.", li)
		a, err := norm(b+"attn_norm.weight", x, g.hidden, false)
		if err != nil {
			return nil, err
		}
		q, err := proj(b+"attn_q.weight", a, g.hidden, qDim)
		if err != nil {
			return nil, err
		}
		k, err := proj(b+"attn_k.weight", a, g.hidden, kvDim)
		if err != nil {
			return nil, err
		}
		v, err := proj(b+"attn_v.weight", a, g.hidden, kvDim)
		if err != nil {
			return nil, err
		}
		if err := refQKV(w, g, b, q, k, v, P); err != nil {
			return nil, err
		}
		rot := rotateHalf
		if g.adjacentRope {
			rot = rotateAdjacent
		}
		posScale := g.posScale
		if posScale == 0 {
			posScale = 1
		}
		for p := 0; p < P; p++ {
			pos := float64(p) * posScale
			rot(q[p*qDim:(p+1)*qDim], g.heads, g.headDim, pos, g.theta)
			rot(k[p*kvDim:(p+1)*kvDim], g.kvHeads, g.headDim, pos, g.theta)
		}
		att := attention(q, k, v, P, g)
		if att, err = norm(b+"attn_sub_norm.weight", att, qDim, true); err != nil {
			return nil, err
		}
		o, err := proj(b+"attn_output.weight", att, qDim, g.hidden)
		if err != nil {
			return nil, err
		}
		addTo(x, o)
		f, err := norm(b+"ffn_norm.weight", x, g.hidden, false)
		if err != nil {
			return nil, err
		}
		gate, err := proj(b+"ffn_gate.weight", f, g.hidden, g.ff)
		if err != nil {
			return nil, err
		}
		up, err := proj(b+"ffn_up.weight", f, g.hidden, g.ff)
		if err != nil {
			return nil, err
		}
		for i, gv := range gate {
			if g.relu2 {
				r := math.Max(gv, 0)
				gate[i] = r * r * up[i]
			} else {
				gate[i] = gv / (1 + math.Exp(-gv)) * up[i]
			}
		}
		if gate, err = norm(b+"ffn_sub_norm.weight", gate, g.ff, true); err != nil {
			return nil, err
		}
		d, err := proj(b+"ffn_down.weight", gate, g.ff, g.hidden)
		if err != nil {
			return nil, err
		}
		addTo(x, d)
		if layerDone != nil {
			layerDone(li)
		}
	}
	h, err := norm("output_norm.weight", x, g.hidden, false)
	if err != nil {
		return nil, err
	}
	head := "output.weight"
	if _, ok := w.shape(head); !ok {
		head = "token_embd.weight" // tied
	}
	logits, err := proj(head, h, g.hidden, g.vocab)
	if layerDone != nil && err == nil {
		layerDone(-1)
	}
	return logits, err
}

// gemmNT computes C = A·Bᵀ for A [m, k] (stride lda), B [n, k] (stride k)
// and C [m, n] (stride ldc), all row-major float64 (gonum blas64.Gemm).
func gemmNT(m, n, k int, a []float64, lda int, b []float64, c []float64, ldc int) {
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: m, Cols: k, Stride: lda, Data: a},
		blas64.General{Rows: n, Cols: k, Stride: k, Data: b[:n*k]},
		0, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// checkMatrix checks that name is a 2-D tensor of HF shape [out, in].
func checkMatrix(w refWeights, name string, out, in int) error {
	s, ok := w.shape(name)
	if !ok || len(s) != 2 || s[0] != out || s[1] != in {
		return shapeError(name, s, ok, []int{out, in})
	}
	return nil
}

func shapeError(name string, s []int, ok bool, want []int) error {
	if !ok {
		return fmt.Errorf("tensor %s is missing from the checkpoint", name)
	}
	return fmt.Errorf("tensor %s has HF shape %v, config.json implies %v", name, s, want)
}

// rmsNormRows is HF LlamaRMSNorm on each row of x (row length len(w)):
// x · rsqrt(mean(x²) + eps) · w, into a new slice.
func rmsNormRows(x, w []float64, eps float64) []float64 {
	n := len(w)
	out := make([]float64, len(x))
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		var ss float64
		for _, v := range row {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(n)+eps)
		for i, v := range row {
			out[r+i] = v * s * w[i]
		}
	}
	return out
}

func addTo(dst, x []float64) {
	for i, v := range x {
		dst[i] += v
	}
}

// rotateHalf applies HF's rotary embedding (apply_rotary_pos_emb with
// rotate_half: dimension i pairs with i + d/2) to each head of x in place.
// pos is the (scaled) position.
func rotateHalf(x []float64, nHeads, d int, pos float64, theta float64) {
	half := d / 2
	for i := 0; i < half; i++ {
		freq := math.Pow(theta, -2*float64(i)/float64(d))
		s, c := math.Sincos(pos * freq)
		for h := 0; h < nHeads; h++ {
			v := x[h*d : (h+1)*d]
			x0, x1 := v[i], v[i+half]
			v[i] = x0*c - x1*s
			v[i+half] = x1*c + x0*s
		}
	}
}

// rotateAdjacent is rotateHalf with dimension 2i paired with 2i + 1.
func rotateAdjacent(x []float64, nHeads, d int, pos float64, theta float64) {
	for i := 0; i < d/2; i++ {
		freq := math.Pow(theta, -2*float64(i)/float64(d))
		s, c := math.Sincos(pos * freq)
		for h := 0; h < nHeads; h++ {
			v := x[h*d : (h+1)*d]
			x0, x1 := v[2*i], v[2*i+1]
			v[2*i] = x0*c - x1*s
			v[2*i+1] = x1*c + x0*s
		}
	}
}

// attention is causal softmax(q·kᵀ/√d)·v per head over all P positions,
// query head h reading KV head h / (heads/kvHeads); q [P, heads·d], k and v
// [P, kvHeads·d]; the result is [P, heads·d].
func attention(q, k, v []float64, P int, g refGeometry) []float64 {
	d := g.headDim
	qDim, kvDim := g.heads*d, g.kvHeads*d
	group := g.heads / g.kvHeads
	scale := 1 / math.Sqrt(float64(d))
	out := make([]float64, P*qDim)
	scores := make([]float64, P)
	var ss float64 // Σ score², for observeScores
	for p := 0; p < P; p++ {
		for h := 0; h < g.heads; h++ {
			qh := q[p*qDim+h*d : p*qDim+(h+1)*d]
			kh := (h / group) * d
			mx := math.Inf(-1)
			for t := 0; t <= p; t++ {
				kt := k[t*kvDim+kh : t*kvDim+kh+d]
				var s float64
				for i := range qh {
					s += qh[i] * kt[i]
				}
				scores[t] = s * scale
				mx = math.Max(mx, scores[t])
				ss += scores[t] * scores[t]
			}
			var sum float64
			for t := 0; t <= p; t++ {
				scores[t] = math.Exp(scores[t] - mx)
				sum += scores[t]
			}
			o := out[p*qDim+h*d : p*qDim+(h+1)*d]
			for t := 0; t <= p; t++ {
				vt := v[t*kvDim+kh : t*kvDim+kh+d]
				wt := scores[t] / sum
				for i := range o {
					o[i] += wt * vt[i]
				}
			}
		}
	}
	if g.observeScores != nil {
		g.observeScores(math.Sqrt(ss / float64(g.heads*P*(P+1)/2)))
	}
	return out
}

// referenceLogits runs the float reference of the checkpoint over seq,
// with the error model of the file whose tensor types are types observing
// every projection (thresholds.go).
func referenceLogits(src *convert.Source, dir string, seq []int32, types func(string) (gguf.Type, bool)) ([]float64, *errorModel, error) {
	g, err := refGeometryOf(src.Config())
	if err != nil {
		return nil, nil, err
	}
	_, g.adjacentRope = src.Plan().Converter.(convert.RopePermuter)
	if g.normInEps == 0 && bitDistillNorms(src.Plan()) {
		g.normInEps = bitDistillNormEps
	}
	w, err := openSourceWeights(src, dir)
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	em := newErrorModel(types, g)
	g.observe, g.observeScores = em.observe, em.observeScores
	ref, err := refLogits(w, g, seq, nil)
	return ref, em, err
}
