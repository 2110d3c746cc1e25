package runtime

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// kvReader reads the {arch}.* hyper-parameters of a GGUF file for Load and
// LoadEmbedding. The first error (a missing required key, a wrong type, a
// value out of range) is kept in err, naming the key; later reads do nothing.
type kvReader struct {
	arch string
	kv   func(string) (gguf.Value, bool)
	err  error
}

func (r *kvReader) uint(dst *int, key string, def int, required bool) {
	if r.err != nil {
		return
	}
	v, ok := r.kv(r.arch + "." + key)
	if !ok {
		if required {
			r.err = fmt.Errorf("key %s.%s: %w", r.arch, key, ErrMissing)
		}
		*dst = def
		return
	}
	u, ok := v.Uint()
	if !ok {
		r.err = fmt.Errorf("key %s.%s: want a non-negative integer, have %s", r.arch, key, v.Type)
		return
	}
	if u > maxHyperParam {
		r.err = fmt.Errorf("key %s.%s: value %d is out of range (at most %d); fix the GGUF metadata", r.arch, key, u, maxHyperParam)
		return
	}
	*dst = int(u)
}

func (r *kvReader) float(dst *float32, key string, def float32, required bool) {
	if r.err != nil {
		return
	}
	v, ok := r.kv(r.arch + "." + key)
	if !ok {
		if required {
			r.err = fmt.Errorf("key %s.%s: %w", r.arch, key, ErrMissing)
		}
		*dst = def
		return
	}
	x, ok := v.Float()
	if !ok {
		r.err = fmt.Errorf("key %s.%s: want a float, have %s", r.arch, key, v.Type)
		return
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		r.err = fmt.Errorf("key %s.%s: value %v is not finite; fix the GGUF metadata", r.arch, key, x)
		return
	}
	*dst = float32(x)
}

// positive fails when the value read for key is not above zero (a rope base
// or context length of 0 gives NaN logits or no room for a token, defects
// D15 and D17).
func (r *kvReader) positive(key string, x float64) {
	if r.err == nil && !(x > 0) {
		r.err = fmt.Errorf("key %s.%s: value %v must be positive; fix the GGUF metadata", r.arch, key, x)
	}
}

// ropeScaling sets dst to the rope frequency scale the file asks for, read
// as llama.cpp's loader does (src/llama-model.cpp, load_hparams;
// src/llama-context.cpp): {arch}.rope.scaling.factor, else the older
// {arch}.rope.scale_linear, gives freq_scale = 1/factor (float32); a
// {arch}.rope.scaling.type of "none" never scales; an absent type is linear.
// The runtime implements linear scaling only (ggml's rope_yarn with
// ext_factor 0 and attn_factor 1: every angle is freq_scale·θ), so another
// type (yarn, longrope, …) and a factor that is not a positive finite
// number are errors naming the key. Without the keys dst is 1.
func (r *kvReader) ropeScaling(dst *float32) {
	*dst = 1
	if r.err != nil {
		return
	}
	typ := "linear"
	typeKey := r.arch + ".rope.scaling.type"
	if v, ok := r.kv(typeKey); ok {
		s, isStr := v.V.(string)
		if !isStr {
			r.err = fmt.Errorf("key %s: a %s, want the string linear or none; fix the GGUF metadata", typeKey, v.Type)
			return
		}
		typ = s
	}
	switch typ {
	case "linear", "none":
	default:
		r.err = fmt.Errorf("key %s: rope scaling %q is not supported (only linear, or none); convert a checkpoint without it or with linear scaling", typeKey, typ)
		return
	}
	key := "rope.scaling.factor"
	if _, ok := r.kv(r.arch + "." + key); !ok {
		if _, ok := r.kv(r.arch + ".rope.scale_linear"); ok {
			key = "rope.scale_linear"
		} else {
			return
		}
	}
	var factor float32
	r.float(&factor, key, 1, false)
	if r.err != nil {
		return
	}
	if !(factor > 0) {
		r.err = fmt.Errorf("key %s.%s: factor %v must be positive (freq_scale = 1/factor); fix the GGUF metadata", r.arch, key, factor)
		return
	}
	if typ == "linear" {
		*dst = 1 / factor
	}
}

// activation overrides dst with the FFN activation the file records under
// {arch}.hidden_activation (format.HiddenActivationSuffix; our converter
// writes it, and llama.cpp loaders that read it — ggml-org/llama.cpp PR
// #26751, microsoft/BitNet PRs #603/#605 — take "relu2" or "silu"). Without
// the key dst keeps the arch's default; any other value or type is an error
// naming the key.
func (r *kvReader) activation(dst *FFNActivation) {
	if r.err != nil {
		return
	}
	key := r.arch + format.HiddenActivationSuffix
	v, ok := r.kv(key)
	if !ok {
		return
	}
	s, isStr := v.V.(string)
	switch {
	case isStr && s == "relu2":
		*dst = ReLU2
	case isStr && s == "silu":
		*dst = SiLU
	case isStr:
		r.err = fmt.Errorf("key %s: activation %q is not supported (relu2 or silu); fix the GGUF metadata", key, s)
	default:
		r.err = fmt.Errorf("key %s: a %s, want the string relu2 or silu; fix the GGUF metadata", key, v.Type)
	}
}

// fixedActivation checks {arch}.hidden_activation on an arch whose FFN
// activation is fixed (the embedding archs: gemma3 runs GELU with the tanh
// approximation, llama.cpp's ggml_gelu in src/llama-model.cpp; qwen3 runs
// SiLU): the key may be absent or name the arch's own activation, one of
// names (HF's hidden_activation value or ggml's op name); any other value
// or type is an error naming the key, as activation's.
func (r *kvReader) fixedActivation(names []string) {
	if r.err != nil {
		return
	}
	key := r.arch + format.HiddenActivationSuffix
	v, ok := r.kv(key)
	if !ok {
		return
	}
	s, isStr := v.V.(string)
	switch {
	case isStr && slices.Contains(names, s):
	case isStr:
		r.err = fmt.Errorf("key %s: activation %q is not %s's (%s); fix the GGUF metadata", key, s, r.arch, strings.Join(names, " or "))
	default:
		r.err = fmt.Errorf("key %s: a %s, want the string %s; fix the GGUF metadata", key, v.Type, names[0])
	}
}
