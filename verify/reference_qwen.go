package verify

import (
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// This file is the float reference's part of the graphs beyond BitNet's
// and Llama's, read from config.json as transformers computes them:
//
//   - Qwen2ForCausalLM (models/qwen2 Qwen2Attention): q_proj, k_proj and
//     v_proj carry biases (GGUF blk.N.attn_{q,k,v}.bias), added to the
//     projection before the rope;
//   - Qwen3ForCausalLM (models/qwen3 Qwen3Attention): q_norm and k_norm,
//     a Qwen3RMSNorm over each head (GGUF attn_q_norm / attn_k_norm,
//     [head_dim], eps rms_norm_eps) after the projection, before the rope;
//   - MistralForCausalLM: Llama's graph (its sliding window only matters
//     past sliding_window positions, which the reference refuses);
//   - per-projection norms (GGUF blk.N.<proj>_norm_in.weight): an RMS
//     norm of the projection's input before the projection. transformers'
//     use_rms_norm (integrations/bitnet.py, `<proj>.rms_norm.weight`) takes
//     quantization_config.rms_norm_eps (default 1e-6); BitNet
//     Distillation's BitLinear (microsoft/BitNet PR #382,
//     bitdistill/tools/bitnet/bitnetsrc/core.py, `<proj>.norm.weight`) uses
//     eps 1e-8 (spec formats-2026.md §3, §4).

// bitDistillNormEps is the eps of BitNet Distillation's per-projection
// Qwen2RMSNorm (fixed in its BitLinear, not in config.json).
const bitDistillNormEps = 1e-8

// useRMSNormEps is transformers' BitNetQuantConfig rms_norm_eps default.
const useRMSNormEps = 1e-6

// refGraph is what refGeometryOf reads of the graph beyond the sizes.
type refGraph struct {
	// qkvBias: q/k/v projections have biases (Qwen2).
	qkvBias bool
	// qkNorm: q and k are RMS-normed per head (Qwen3).
	qkNorm bool
	// normInEps is the eps of the per-projection norms (0: rms_norm_eps;
	// set by use_rms_norm or by a BitDistill checkpoint's tensor names).
	normInEps float64
	// window is Mistral's sliding_window (0: none).
	window int
}

// refGraphOf reads the graph variant from cfg: the class (architectures[0],
// else model_type) and quantization_config.use_rms_norm. Errors name
// config.json and the key.
func refGraphOf(cfg *hf.Config) (refGraph, error) {
	var r refGraph
	class := ""
	if as, ok, err := cfg.Strings("architectures"); err != nil {
		return r, err
	} else if ok && len(as) > 0 {
		class = as[0]
	}
	mt, _, err := cfg.String("model_type")
	if err != nil {
		return r, err
	}
	switch {
	case class == "Qwen2ForCausalLM" || (class == "" && mt == "qwen2"):
		r.qkvBias = true
	case class == "Qwen3ForCausalLM" || (class == "" && mt == "qwen3"):
		r.qkNorm = true
	case class == "MistralForCausalLM" || (class == "" && mt == "mistral"):
		if w, ok, err := cfg.Int("sliding_window"); err == nil && ok && w > 0 {
			r.window = w
		}
	}
	if qc, ok := cfg.Sub("quantization_config"); ok {
		use, _, err := qc.Bool("use_rms_norm")
		if err != nil {
			return r, err
		}
		if use {
			r.normInEps = useRMSNormEps
			if e, ok, err := qc.Float("rms_norm_eps"); err != nil {
				return r, err
			} else if ok {
				if !(e > 0) {
					return r, fmt.Errorf("%s: quantization_config.rms_norm_eps %v must be positive", cfg.Path, e)
				}
				r.normInEps = e
			}
		}
	}
	return r, nil
}

// bitDistillNorms reports whether the plan maps BitNet Distillation's
// per-projection norms (`<proj>.norm.weight` to *_norm_in), whose eps is
// bitDistillNormEps.
func bitDistillNorms(p *convert.Plan) bool {
	for _, t := range p.Tensors {
		if strings.HasSuffix(t.GGUFName, "_norm_in.weight") && strings.HasSuffix(t.HFName, "_proj.norm.weight") {
			return true
		}
	}
	return false
}

// refNormIn returns in RMS-normed with the per-projection norm of the
// projection name ("blk.N.attn_q.weight" → "blk.N.attn_q_norm_in.weight")
// when the weights have it, else in unchanged.
func refNormIn(w refWeights, g refGeometry, name string, in []float64, n int) ([]float64, error) {
	stem, ok := strings.CutSuffix(name, ".weight")
	if !ok || !strings.HasPrefix(name, "blk.") {
		return in, nil
	}
	nn := stem + "_norm_in.weight"
	s, ok := w.shape(nn)
	if !ok {
		return in, nil
	}
	if len(s) != 1 || s[0] != n {
		return nil, shapeError(nn, s, ok, []int{n})
	}
	v, err := w.vector(nn)
	if err != nil {
		return nil, err
	}
	eps := g.normInEps
	if eps == 0 {
		eps = g.eps
	}
	return rmsNormRows(in, v, eps), nil
}

// refQKV applies block b's q/k/v biases (Qwen2) and per-head q/k norms
// (Qwen3) to the projections q [P, heads·d], k and v [P, kvHeads·d], in
// place. A bias or head norm the class does not have is an error naming
// the tensor (the reference would compute another model), as is a prompt
// longer than Mistral's sliding window.
func refQKV(w refWeights, g refGeometry, b string, q, k, v []float64, P int) error {
	if g.window > 0 && P > g.window {
		return fmt.Errorf("%d positions exceed sliding_window %d: the float reference has no sliding-window attention", P, g.window)
	}
	for _, x := range []struct {
		name string
		rows []float64
		n    int
	}{{"attn_q.bias", q, g.heads * g.headDim}, {"attn_k.bias", k, g.kvHeads * g.headDim}, {"attn_v.bias", v, g.kvHeads * g.headDim}} {
		s, ok := w.shape(b + x.name)
		if !g.qkvBias {
			if ok {
				return fmt.Errorf("tensor %s: config.json's class has no q/k/v biases", b+x.name)
			}
			continue
		}
		if !ok || len(s) != 1 || s[0] != x.n {
			return shapeError(b+x.name, s, ok, []int{x.n})
		}
		bias, err := w.vector(b + x.name)
		if err != nil {
			return err
		}
		for r := 0; r+x.n <= len(x.rows); r += x.n {
			addTo(x.rows[r:r+x.n], bias)
		}
	}
	for _, x := range []struct {
		name string
		rows []float64
	}{{"attn_q_norm.weight", q}, {"attn_k_norm.weight", k}} {
		s, ok := w.shape(b + x.name)
		if !g.qkNorm {
			if ok {
				return fmt.Errorf("tensor %s: config.json's class has no q/k norms", b+x.name)
			}
			continue
		}
		if !ok || len(s) != 1 || s[0] != g.headDim {
			return shapeError(b+x.name, s, ok, []int{g.headDim})
		}
		nw, err := w.vector(b + x.name)
		if err != nil {
			return err
		}
		// Every head of every position is one row of head_dim values.
		copy(x.rows, rmsNormRows(x.rows, nw, g.eps))
	}
	return nil
}
