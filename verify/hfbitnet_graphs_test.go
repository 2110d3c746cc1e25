package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
)

// TestVerifyHFBitnetGraphs converts reduced HF BitNet dummies of the
// classes beyond BitNet and Llama (dummy → hf2gguf) and runs verify --hf on
// each: Qwen2ForCausalLM (q/k/v biases, tied) packed and as online bf16
// masters to TQ2_0 (mainline's graph), MistralForCausalLM (Llama's graph)
// to I2_S and TQ2_0, Qwen3ForCausalLM (per-head q/k norms, head_dim 128 ≠
// hidden/heads) packed and tied to TQ2_0, online and untied to Q2_0, and group-scaled
// dense (Ternary Bonsai, no quantization_config) to Q2_0, and with
// modules_to_not_convert (down_proj stays float, F16 in the file). The float
// reference reads the class from config.json
// (reference_qwen.go); the logits must pass the error model's thresholds.
// Sizes are reduced (hidden 256, 2 layers, vocabulary 512); the other keys
// are those of Qwen2.5-0.5B, Qwen3-0.6B and Mistral-7B-v0.3
// (testdata/configs).
func TestVerifyHFBitnetGraphs(t *testing.T) {
	qwen2 := func(qc map[string]any) map[string]any {
		return map[string]any{
			"architectures": []any{"Qwen2ForCausalLM"}, "model_type": "qwen2", "hidden_act": "silu",
			"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
			"max_position_embeddings": 32768, "sliding_window": 32768, "use_sliding_window": false,
			"tie_word_embeddings": true, "quantization_config": qc,
		}
	}
	mistral := map[string]any{
		"architectures": []any{"MistralForCausalLM"}, "model_type": "mistral", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
		"max_position_embeddings": 32768, "sliding_window": nil, "tie_word_embeddings": false,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
	qwen3 := func(tied bool, qc map[string]any) map[string]any {
		return map[string]any{
			"architectures": []any{"Qwen3ForCausalLM"}, "model_type": "qwen3", "hidden_act": "silu",
			"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "head_dim": 128, "vocab_size": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
			"max_position_embeddings": 40960, "attention_bias": false, "use_sliding_window": false,
			"tie_word_embeddings": tied, "quantization_config": qc,
		}
	}
	for _, c := range []struct {
		name   string
		cfg    map[string]any
		packed bool
		out    convert.OutType
		groups bool // dummy --group-scaled: dense, one scale per 128 inputs, no quantization_config
	}{
		{"qwen2 packed tq2_0", qwen2(map[string]any{"quant_method": "bitnet"}), true, convert.OutTQ2_0, false},
		{"qwen2 online tq2_0", qwen2(map[string]any{"quant_method": "bitnet", "linear_class": "autobitlinear", "quantization_mode": "online"}), false, convert.OutTQ2_0, false},
		{"qwen3 packed tied tq2_0", qwen3(true, map[string]any{"quant_method": "bitnet"}), true, convert.OutTQ2_0, false},
		{"qwen3 online untied q2_0", qwen3(false, map[string]any{"quant_method": "bitnet", "linear_class": "autobitlinear", "quantization_mode": "online"}), false, convert.OutType("q2_0"), false},
		{"mistral packed i2_s", mistral, true, convert.OutI2S, false},
		{"mistral packed tq2_0", mistral, true, convert.OutTQ2_0, false},
		{"qwen3 online, down_proj not converted, q2_0", qwen3(false, map[string]any{"quant_method": "bitnet", "quantization_mode": "online", "modules_to_not_convert": []any{"down_proj"}}), false, convert.OutType("q2_0"), false},
		{"qwen3 group-scaled (Bonsai) q2_0", func() map[string]any { c := qwen3(true, nil); delete(c, "quantization_config"); return c }(), false, convert.OutType("q2_0"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: c.cfg, Packed: c.packed, GroupScaled: c.groups, Seed: 5}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "o.gguf")
			if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: c.out, NoVocab: true}); err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{GGUF: out, HF: dir, IDs: []int32{1, 5, 9, 13, 2, 40, 7, 33}, Tokens: 4})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Pass || rep.Numbers == nil {
				t.Errorf("verify --hf failed: %v (numbers %+v, notes %v)", rep.Failures, rep.Numbers, rep.Notes)
			} else {
				t.Logf("max |Δ| %.3g (limit %.3g), top-1 %.2f", rep.Numbers.MaxAbsDelta, rep.Thresholds.MaxDelta, rep.Numbers.Top1Agreement)
			}
		})
	}
}
