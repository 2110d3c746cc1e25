package dummy

import (
	"slices"
	"strings"
	"testing"
)

// TestLayoutUseRMSNorm: a LlamaForCausalLM config with
// quantization_config.use_rms_norm gets "<proj>.rms_norm.weight" (bf16,
// input width) right after each packed projection's weight_scale, seven
// per layer (also Mistral, Qwen2 and causal Qwen3); without the key, or
// for BitNetForCausalLM, the layout is unchanged.
func TestLayoutUseRMSNorm(t *testing.T) {
	cfg := func(arch string, on bool) map[string]any {
		return map[string]any{
			"architectures": []any{arch}, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
			"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 64, "tie_word_embeddings": false,
			"quantization_config": map[string]any{"quant_method": "bitnet", "use_rms_norm": on},
		}
	}
	names := func(ts []Tensor) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	with, err := Layout(cfg("LlamaForCausalLM", true), true)
	if err != nil {
		t.Fatal(err)
	}
	without, err := Layout(cfg("LlamaForCausalLM", false), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(with) != len(without)+14 {
		t.Fatalf("%d tensors with use_rms_norm, %d without; want 14 more", len(with), len(without))
	}
	n := names(with)
	for name, want := range map[string][]uint64{
		"model.layers.0.self_attn.q_proj.rms_norm.weight": {256},
		"model.layers.1.self_attn.o_proj.rms_norm.weight": {128}, // heads × head_dim
		"model.layers.1.mlp.down_proj.rms_norm.weight":    {512},
	} {
		i := slices.Index(n, name)
		if i < 1 || !slices.Equal(with[i].Shape, want) || with[i].Role != Norm {
			t.Errorf("%s: index %d, tensor %+v; want a norm of shape %v", name, i, with, want)
			continue
		}
		if base := name[:len(name)-len("rms_norm.weight")]; n[i-1] != base+"weight_scale" {
			t.Errorf("%s follows %s, want %sweight_scale", name, n[i-1], base)
		}
	}
	// The transformers-integration classes read use_rms_norm too: the same
	// seven norms per layer (hf2gguf refuses the checkpoint without them).
	for _, arch := range []string{"Qwen2ForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM"} {
		w, err := Layout(cfg(arch, true), true)
		if err != nil {
			t.Fatal(err)
		}
		wo, err := Layout(cfg(arch, false), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != len(wo)+14 || !slices.Contains(names(w), "model.layers.1.mlp.gate_proj.rms_norm.weight") {
			t.Errorf("%s: %d tensors with use_rms_norm, %d without; want 14 more", arch, len(w), len(wo))
		}
	}
	other, err := Layout(cfg("BitNetForCausalLM", true), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names(other) {
		if strings.HasSuffix(name, ".rms_norm.weight") {
			t.Errorf("BitNetForCausalLM got %s", name)
		}
	}
}
