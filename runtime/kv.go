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
