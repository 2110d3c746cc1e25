package verify

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// embedRef is the float reference of a BitNet sentence-embedding model,
// written from the Hugging Face model definitions (transformers
// Qwen3Model and Gemma3TextModel) plus BitNet's per-projection input
// RMSNorm (`<proj>.norm`, applied to the projection's input). It shares no
// code with package runtime and none of the converter's norm handling:
//
//   - norm weights are read from the checkpoint as stored (HF names, with or
//     without the "model." prefix); Gemma3 norms are applied as x̂·(1 + w)
//     (Gemma3RMSNorm), the per-projection norms as x̂·w for both models;
//   - projection weights are the ternary × scale values the F32 conversion
//     means (convert.Source), as in the LM reference;
//   - everything runs in float64 with float activations (no int8), no F16
//     cache; attention is computed over the whole sequence.
type embedRef struct {
	gemma                               bool
	hidden, heads, kvHeads, headDim, ff int
	eps, theta, thetaLocal, attnScale   float64
	window                              int
	sliding                             []bool
	causal                              bool
	embed                               []float32 // [vocab, hidden]
	vocab                               int
	finalNorm                           []float32 // as stored
	layers                              []embedRefLayer
	embedScale                          float64
}

type embedRefLayer struct {
	inputNorm, postAttnNorm, preFFNorm, postFFNorm []float32 // as stored
	qNorm, kNorm                                   []float32 // as stored
	projNorm                                       map[string][]float32
	proj                                           map[string][]float32 // HF [out, in]
}

// embedProjections are the seven BitLinear projections: HF module path →
// GGUF name stem.
var embedProjections = []struct{ hf, gguf string }{
	{"self_attn.q_proj", "attn_q"}, {"self_attn.k_proj", "attn_k"}, {"self_attn.v_proj", "attn_v"},
	{"self_attn.o_proj", "attn_output"}, {"mlp.gate_proj", "ffn_gate"}, {"mlp.up_proj", "ffn_up"},
	{"mlp.down_proj", "ffn_down"},
}

// buildEmbedRef reads config.json and the weights of the checkpoint dir.
func buildEmbedRef(src *convert.Source, dir string) (*embedRef, error) {
	cfg := src.Config()
	mt, _, _ := cfg.String("model_type")
	r := &embedRef{gemma: mt == "gemma3_text", causal: true}
	ints := []struct {
		dst *int
		key string
	}{{&r.hidden, "hidden_size"}, {&r.heads, "num_attention_heads"}, {&r.ff, "intermediate_size"}, {&r.vocab, "vocab_size"}}
	for _, x := range ints {
		v, ok, err := cfg.Int(x.key)
		if err != nil || !ok || v <= 0 {
			return nil, fmt.Errorf("config.json: %q missing or invalid", x.key)
		}
		*x.dst = v
	}
	layers, ok, err := cfg.Int("num_hidden_layers")
	if err != nil || !ok || layers <= 0 {
		return nil, fmt.Errorf("config.json: num_hidden_layers missing or invalid")
	}
	r.kvHeads = r.heads
	if v, ok, _ := cfg.Int("num_key_value_heads"); ok && v > 0 {
		r.kvHeads = v
	}
	r.headDim = r.hidden / r.heads
	if v, ok, _ := cfg.Int("head_dim"); ok && v > 0 {
		r.headDim = v
	}
	if r.eps, ok, err = cfg.Float("rms_norm_eps"); err != nil || !ok {
		return nil, fmt.Errorf("config.json: rms_norm_eps missing")
	}
	r.theta = 10000
	if v, ok, _ := cfg.Float("rope_theta"); ok {
		r.theta = v
	}
	r.thetaLocal = 10000
	if v, ok, _ := cfg.Float("rope_local_base_freq"); ok {
		r.thetaLocal = v
	}
	r.attnScale = 1 / math.Sqrt(float64(r.headDim))
	r.embedScale = 1
	if r.gemma {
		if v, ok, _ := cfg.Float("query_pre_attn_scalar"); ok {
			r.attnScale = 1 / math.Sqrt(v)
		}
		r.embedScale = math.Sqrt(float64(r.hidden))
		// transformers' Gemma3TextConfig: sliding_window defaults to
		// 4096 (null: none); layer_types, else every
		// sliding_window_pattern-th layer (default 6) is global.
		r.sliding = make([]bool, layers)
		if v, present := cfg.Raw["sliding_window"]; !present || v != nil {
			w, ok, _ := cfg.Int("sliding_window")
			if !ok {
				w = 4096
			}
			if types, ok, _ := cfg.Strings("layer_types"); ok {
				for i, t := range types {
					if i < layers {
						r.sliding[i] = t == "sliding_attention"
					}
				}
			} else {
				n, ok, _ := cfg.Int("sliding_window_pattern")
				if !ok || n <= 0 {
					n = 6
				}
				for i := range r.sliding {
					r.sliding[i] = (i+1)%n != 0
				}
			}
			r.window = w
		}
	} else {
		r.sliding = make([]bool, layers)
	}
	if b, ok, _ := cfg.Bool("use_bidirectional_attention"); ok && b {
		r.causal = false
	}

	ck, err := hf.Open(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	raw := func(name string) ([]float32, error) {
		ref, ok := ck.Lookup(name)
		if !ok {
			if ref, ok = ck.Lookup("model." + name); !ok {
				return nil, fmt.Errorf("tensor %s is not in %s", name, dir)
			}
		}
		d, err := ck.Read(ref)
		if err != nil {
			return nil, err
		}
		defer d.Release()
		return d.Float32s(nil)
	}
	if r.embed, err = raw("embed_tokens.weight"); err != nil {
		return nil, err
	}
	if len(r.embed) != r.vocab*r.hidden {
		return nil, fmt.Errorf("embed_tokens has %d values, want %d×%d", len(r.embed), r.vocab, r.hidden)
	}
	if r.finalNorm, err = raw("norm.weight"); err != nil {
		return nil, err
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("layers.%d.", i)
		L := embedRefLayer{projNorm: map[string][]float32{}, proj: map[string][]float32{}}
		vecs := []struct {
			dst  *[]float32
			name string
		}{{&L.inputNorm, "input_layernorm"}, {&L.postAttnNorm, "post_attention_layernorm"}, {&L.qNorm, "self_attn.q_norm"}, {&L.kNorm, "self_attn.k_norm"}}
		if r.gemma {
			vecs = append(vecs, struct {
				dst  *[]float32
				name string
			}{&L.preFFNorm, "pre_feedforward_layernorm"}, struct {
				dst  *[]float32
				name string
			}{&L.postFFNorm, "post_feedforward_layernorm"})
		}
		for _, v := range vecs {
			if *v.dst, err = raw(p + v.name + ".weight"); err != nil {
				return nil, err
			}
		}
		for _, pr := range embedProjections {
			if L.projNorm[pr.hf], err = raw(p + pr.hf + ".norm.weight"); err != nil {
				return nil, err
			}
			if L.proj[pr.hf], err = src.Float32(fmt.Sprintf("blk.%d.%s.weight", i, pr.gguf)); err != nil {
				return nil, err
			}
		}
		r.layers = append(r.layers, L)
	}
	return r, nil
}

// norm is RMSNorm over x: Qwen3RMSNorm x̂·w, or Gemma3RMSNorm x̂·(1 + w) when
// gemmaStyle.
func (r *embedRef) norm(x []float64, w []float32, gemmaStyle bool) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+r.eps)
	out := make([]float64, len(x))
	for i, v := range x {
		g := float64(w[i])
		if gemmaStyle {
			g += 1
		}
		out[i] = v * inv * g
	}
	return out
}

// linear is the BitLinear of the embedding models: W · RMSNorm(x, proj.norm)
// with W [rows, len(x)] row-major.
func (r *embedRef) linear(L *embedRefLayer, name string, x []float64) []float64 {
	xn := r.norm(x, L.projNorm[name], false)
	w := L.proj[name]
	rows := len(w) / len(xn)
	out := make([]float64, rows)
	for o := 0; o < rows; o++ {
		row := w[o*len(xn) : (o+1)*len(xn)]
		var s float64
		for i, v := range row {
			s += float64(v) * xn[i]
		}
		out[o] = s
	}
	return out
}

// hidden returns the last hidden state (after the final norm) of every
// position of ids.
func (r *embedRef) hiddenStates(ids []int32) ([][]float64, error) {
	n := len(ids)
	x := make([][]float64, n)
	for t, id := range ids {
		if id < 0 || int(id) >= r.vocab {
			return nil, fmt.Errorf("token id %d out of range [0, %d)", id, r.vocab)
		}
		row := r.embed[int(id)*r.hidden : (int(id)+1)*r.hidden]
		x[t] = make([]float64, r.hidden)
		for i, v := range row {
			x[t][i] = float64(v) * r.embedScale
		}
	}
	hd := r.headDim
	group := r.heads / r.kvHeads
	g := r.gemma
	for li := range r.layers {
		L := &r.layers[li]
		theta := r.theta
		window := 0
		if r.sliding[li] {
			theta, window = r.thetaLocal, r.window
		}
		qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for t := 0; t < n; t++ {
			h := r.norm(x[t], L.inputNorm, g)
			qs[t] = r.linear(L, "self_attn.q_proj", h)
			ks[t] = r.linear(L, "self_attn.k_proj", h)
			vs[t] = r.linear(L, "self_attn.v_proj", h)
			for hh := 0; hh < r.heads; hh++ {
				copy(qs[t][hh*hd:], r.norm(qs[t][hh*hd:(hh+1)*hd], L.qNorm, g))
			}
			for hh := 0; hh < r.kvHeads; hh++ {
				copy(ks[t][hh*hd:], r.norm(ks[t][hh*hd:(hh+1)*hd], L.kNorm, g))
			}
			rotateHalf(qs[t], r.heads, hd, float64(t), theta)
			rotateHalf(ks[t], r.kvHeads, hd, float64(t), theta)
		}
		for t := 0; t < n; t++ {
			att := make([]float64, r.heads*hd)
			for hh := 0; hh < r.heads; hh++ {
				kv := hh / group
				w := make([]float64, n)
				mx := math.Inf(-1)
				for j := 0; j < n; j++ {
					if !r.visible(t, j, window) {
						continue
					}
					var s float64
					for i := 0; i < hd; i++ {
						s += qs[t][hh*hd+i] * ks[j][kv*hd+i]
					}
					w[j] = s * r.attnScale
					mx = math.Max(mx, w[j])
				}
				var sum float64
				for j := 0; j < n; j++ {
					if r.visible(t, j, window) {
						w[j] = math.Exp(w[j] - mx)
						sum += w[j]
					}
				}
				for j := 0; j < n; j++ {
					if !r.visible(t, j, window) {
						continue
					}
					for i := 0; i < hd; i++ {
						att[hh*hd+i] += w[j] / sum * vs[j][kv*hd+i]
					}
				}
			}
			o := r.linear(L, "self_attn.o_proj", att)
			if g {
				o = r.norm(o, L.postAttnNorm, true)
			}
			for i := range o {
				x[t][i] += o[i]
			}
			var f []float64
			if g {
				f = r.norm(x[t], L.preFFNorm, true)
			} else {
				f = r.norm(x[t], L.postAttnNorm, false)
			}
			gate := r.linear(L, "mlp.gate_proj", f)
			up := r.linear(L, "mlp.up_proj", f)
			for i, v := range gate {
				if g {
					gate[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))) * up[i]
				} else {
					gate[i] = v / (1 + math.Exp(-v)) * up[i]
				}
			}
			d := r.linear(L, "mlp.down_proj", gate)
			if g {
				d = r.norm(d, L.postFFNorm, true)
			}
			for i := range d {
				x[t][i] += d[i]
			}
		}
	}
	out := make([][]float64, n)
	for t := range x {
		out[t] = r.norm(x[t], r.finalNorm, g)
	}
	return out, nil
}

// visible reports whether position t attends to position j: j ≤ t when
// causal, and within the sliding window (t − j < window) when one applies.
func (r *embedRef) visible(t, j, window int) bool {
	if r.causal && j > t {
		return false
	}
	if window > 0 && (t-j >= window || j-t >= window) {
		return false
	}
	return true
}

// embedding pools the hidden states ("mean", "cls", "last") and
// L2-normalises the result.
func (r *embedRef) embedding(ids []int32, pooling string) ([]float64, error) {
	hs, err := r.hiddenStates(ids)
	if err != nil {
		return nil, err
	}
	out := make([]float64, r.hidden)
	switch strings.ToLower(pooling) {
	case "mean":
		for _, h := range hs {
			for i, v := range h {
				out[i] += v / float64(len(hs))
			}
		}
	case "cls":
		copy(out, hs[0])
	case "last":
		copy(out, hs[len(hs)-1])
	default:
		return nil, fmt.Errorf("unknown pooling %q", pooling)
	}
	var ss float64
	for _, v := range out {
		ss += v * v
	}
	if ss > 0 {
		inv := 1 / math.Sqrt(ss)
		for i := range out {
			out[i] *= inv
		}
	}
	return out, nil
}
