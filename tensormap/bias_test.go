package tensormap

import (
	"slices"
	"testing"
)

// TestBiasRules: a Bias rule maps only the ".bias" tensor of its stem (the
// projection rule of the same stem keeps ".weight"), Expected lists the
// biases with ".bias", and HFName maps them back.
func TestBiasRules(t *testing.T) {
	for name, want := range map[string]struct {
		gguf  string
		class Class
	}{
		"model.layers.3.self_attn.q_proj.bias":   {"blk.3.attn_q.bias", Bias},
		"model.layers.3.self_attn.q_proj.weight": {"blk.3.attn_q.weight", Projection},
		"model.layers.0.self_attn.v_proj.bias":   {"blk.0.attn_v.bias", Bias},
	} {
		m, ok := Qwen2.Lookup(name)
		if !ok || m.GGUF != want.gguf || m.Class != want.class {
			t.Errorf("Qwen2.Lookup(%s) = %v %v, want %s %s", name, m.GGUF, m.Class, want.gguf, want.class)
		}
	}
	// o_proj has no bias rule: its .bias falls to the projection rule,
	// which the converter refuses (BitNet projections have no bias).
	if m, _ := Qwen2.Lookup("model.layers.0.self_attn.o_proj.bias"); m.Class != Projection {
		t.Errorf("o_proj.bias class %s, want projection", m.Class)
	}
	exp := Qwen2.Expected(2)
	for _, n := range []string{"blk.1.attn_q.bias", "blk.1.attn_k.bias", "blk.0.attn_v.bias", "blk.0.attn_q.weight"} {
		if !slices.Contains(exp, n) {
			t.Errorf("Expected lacks %s", n)
		}
	}
	if slices.Contains(exp, "blk.0.attn_q.bias.weight") || slices.Contains(exp, "blk.0.attn_output.bias") {
		t.Errorf("Expected has a wrong bias name: %v", exp)
	}
	if hf, ok := Qwen2.HFName("blk.1.attn_k.bias"); !ok || hf != "model.layers.1.self_attn.k_proj.bias" {
		t.Errorf("HFName(blk.1.attn_k.bias) = %q %v", hf, ok)
	}
	if hf, ok := Qwen2.HFName("blk.1.attn_k.weight"); !ok || hf != "model.layers.1.self_attn.k_proj.weight" {
		t.Errorf("HFName(blk.1.attn_k.weight) = %q %v", hf, ok)
	}
	if Bias.String() != "bias" {
		t.Errorf("Bias.String() = %q", Bias.String())
	}
}
