package runtime

import (
	"fmt"
	"slices"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// This file holds the parts of the causal graph beyond BitNet's and
// llama's, each computed as mainline llama.cpp computes it
// (ggml-org/llama.cpp src/models/qwen2.cpp and qwen3.cpp):
//
//   - qwen2: q, k and v biases (blk.N.attn_{q,k,v}.bias, F32), added to the
//     projection's output (ggml_add) before the heads are roped;
//   - qwen3: per-head RMS norms of q and k (blk.N.attn_q_norm.weight,
//     attn_k_norm.weight, [head_dim]) with the model's eps, after the
//     projection and before the rope;
//   - per-projection input norms (blk.N.<proj>_norm_in.weight, the names
//     bitnet.cpp's embedding converter writes; HF `<proj>.rms_norm.weight`
//     of transformers' use_rms_norm and BitDistill's `<proj>.norm.weight`):
//     an RMS norm of the projection's input with that weight before that
//     projection, on the llama, qwen2 and qwen3 graphs. Mainline has no such
//     tensor; the norm is ggml's rms_norm followed by the mul with the
//     weight (rmsNorm), its eps {arch}.attention.norm_in_rms_epsilon, else
//     the model's attention.layer_norm_rms_epsilon (docs/glossary.md
//     "per-projection input norm").

// Indexes of the seven projections of a block, in the order of
// normInNames.
const (
	projQ = iota
	projK
	projV
	projO
	projGate
	projUp
	projDown
	numProj
)

// normInNames are the per-projection input-norm tensors (blk.N.<name>.weight)
// and the length of each: the projection's input width.
var normInNames = [numProj]struct {
	name string
	dim  vecDim
}{
	{"attn_q_norm_in", vHidden}, {"attn_k_norm_in", vHidden}, {"attn_v_norm_in", vHidden},
	{"attn_output_norm_in", vQ},
	{"ffn_gate_norm_in", vHidden}, {"ffn_up_norm_in", vHidden}, {"ffn_down_norm_in", vFF},
}

// normInEpsKey is the KV (after "{arch}.") holding the eps of the
// per-projection norms (BitDistill's are 1e-8, the block norms' 1e-6).
const normInEpsKey = "attention.norm_in_rms_epsilon"

// graphExtra are a block's tensors of the qwen graphs and of the
// per-projection norms; nil where the file has none.
type graphExtra struct {
	bq, bk, bv   []float32 // attn_{q,k,v}.bias: [q dim], [kv dim], [kv dim]
	qNorm, kNorm []float32 // attn_q_norm, attn_k_norm: [head_dim]
	// normIn[p] is projection p's input norm (normInNames[p]).
	normIn [numProj][]float32
}

// qkNormRows are qwen3's per-head q and k norm vectors.
var qkNormRows = []vecRow[layer]{
	{"attn_q_norm", vHeadDim, func(l *layer) *[]float32 { return &l.qNorm }},
	{"attn_k_norm", vHeadDim, func(l *layer) *[]float32 { return &l.kNorm }},
}

// qwen3Norms are the per-layer vectors of the causal qwen3 graph.
var qwen3Norms = append(slices.Clone(blockNorms), qkNormRows...)

// loadGraphExtra loads what spec's graph needs beyond loadLayers' rows:
// qwen2's q/k/v biases (required), and the per-projection input norms
// where spec allows them (each layer has none, or the same set as layer 0;
// their eps from normInEpsKey, else the model's). A bias on another arch,
// an attn_output.bias, or a norm_in tensor on a graph without them is
// refused naming the tensor: the runtime would otherwise compute a
// different model.
func loadGraphExtra(l *loader, h *header, spec archSpec, layers []layer, eps *float32) error {
	qDim, kvDim := h.NHead*h.HeadDim, h.NHeadKV*h.HeadDim
	*eps = h.RMSEps
	if spec.normIn {
		l.r.float(eps, normInEpsKey, h.RMSEps, false)
		l.r.positive(normInEpsKey, float64(*eps))
		if l.r.err != nil {
			return l.r.err
		}
	}
	var first [numProj]bool
	for i := range layers {
		b := fmt.Sprintf("blk.%d.", i)
		x := &layers[i].graphExtra
		for _, bias := range []struct {
			name string
			n    int
			dst  *[]float32
		}{{"attn_q.bias", qDim, &x.bq}, {"attn_k.bias", kvDim, &x.bk}, {"attn_v.bias", kvDim, &x.bv}, {"attn_output.bias", 0, nil}} {
			_, has := l.infos[b+bias.name]
			if !spec.biases || bias.dst == nil {
				if has {
					return fmt.Errorf("tensor %s: the runtime's %s graph has no such bias (mainline llama.cpp's neither); convert without it or report the model", b+bias.name, l.arch)
				}
				continue
			}
			v, err := l.vector(b+bias.name, bias.n)
			if err != nil {
				return err
			}
			*bias.dst = v
		}
		for p, row := range normInNames {
			name := b + row.name + ".weight"
			_, has := l.infos[name]
			if i == 0 {
				first[p] = has
			}
			switch {
			case has && !spec.normIn:
				return fmt.Errorf("tensor %s: a per-projection norm, which the runtime's %s graph does not take (only llama, qwen2 and qwen3 do)", name, l.arch)
			case has != first[p] && has:
				return fmt.Errorf("tensor %s: layer 0 has no %s; every layer must have the same per-projection norms", name, row.name)
			case has != first[p]:
				return fmt.Errorf("tensor %s: %w (layer 0 has it; every layer must have the same per-projection norms)", name, ErrMissing)
			case !has:
				continue
			}
			v, err := l.vector(name, h.size(row.dim))
			if err != nil {
				return err
			}
			x.normIn[p] = v
		}
	}
	return nil
}

// matrix returns projection p of the block.
func (l *layer) matrix(p int) *Matrix {
	return [numProj]*Matrix{l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown}[p]
}

// project computes dst = W_p · in for every row, where W_p is projection p
// of block l; with an input norm for p, each row is first RMS-normed with
// that weight (NormInRMSEps) into scratch, and in is left unchanged.
func (s *Session) project(l *layer, p int, dst, in [][]float32) {
	w, th := l.matrix(p), s.m.opts.Threads
	norm := l.normIn[p]
	if norm == nil {
		w.matMul(dst, in, &s.mm, th)
		return
	}
	if len(s.nin) < len(in) || (len(in) > 0 && cap(s.nin[0]) < len(norm)) {
		s.nin = rows(max(len(in), s.rowsCap), max(s.m.Params.NEmbd, s.m.Params.NHead*s.m.Params.HeadDim, s.m.Params.NFF))
	}
	x := s.nin[:len(in)]
	for t := range in {
		x[t] = x[t][:len(norm)]
		s.rmsNorm(x[t], in[t], norm, s.m.Params.NormInRMSEps)
	}
	w.matMul(dst, x, &s.mm, th)
}

// qkvExtra applies block l's q/k/v biases and per-head q/k norms to the
// projection rows q, k and v (before the rope), as mainline's qwen2 and
// qwen3 graphs do: q += bq (ggml_add, one float32 addition per element);
// each head of q and of k RMS-normed with attn_q_norm / attn_k_norm and the
// model's eps.
func (s *Session) qkvExtra(l *layer, q, k, v [][]float32) {
	p := s.m.Params
	for t := range q {
		addBias(q[t], l.bq)
		addBias(k[t], l.bk)
		addBias(v[t], l.bv)
		headNorms(s, q[t], l.qNorm, p.HeadDim, p.RMSEps)
		headNorms(s, k[t], l.kNorm, p.HeadDim, p.RMSEps)
	}
}

// addBias adds b to x element by element (nothing when b is nil).
func addBias(x, b []float32) {
	for i, v := range b {
		x[i] += v
	}
}

// headNorms RMS-norms each hd-wide head of x in place with weight w (ggml
// rms_norm over ne0 = head_dim, then mul), nothing when w is nil.
func headNorms(s *Session, x, w []float32, hd int, eps float32) {
	if w == nil {
		return
	}
	for h := 0; h+hd <= len(x); h += hd {
		s.rmsNorm(x[h:h+hd], x[h:h+hd], w, eps)
	}
}

// IsEmbeddingFile reports whether a GGUF file with these KVs and tensors
// is a sentence-embedding model (LoadEmbedding) rather than a causal LM
// (Load). Arch gemma3 is always an embedding model. Arch qwen3 names both
// bitnet.cpp's embedding models and causal Qwen3 LMs; the file is an
// embedding model when it has qwen3.pooling_type (our and bitnet.cpp's
// embedding converters write it), else when it has no output.weight, no
// qwen3.attention.norm_in_rms_epsilon (written only for causal files) and
// blk.0.attn_q_norm_in.weight (every embedding layer has all seven input
// norms). Any other arch is not.
func IsEmbeddingFile(kvs []gguf.KV, tensors []gguf.TensorInfo) bool {
	v, ok := gguf.Lookup(kvs, "general.architecture")
	if !ok {
		return false
	}
	arch, _ := v.V.(string)
	if !IsEmbeddingArch(arch) {
		return false
	}
	if _, causal := archs[arch]; !causal {
		return true
	}
	if _, ok := gguf.Lookup(kvs, arch+".pooling_type"); ok {
		return true
	}
	if _, ok := gguf.Lookup(kvs, arch+"."+normInEpsKey); ok {
		return false
	}
	var qIn bool
	for _, ti := range tensors {
		switch ti.Name {
		case "output.weight":
			return false
		case "blk.0.attn_q_norm_in.weight":
			qIn = true
		}
	}
	return qIn
}
