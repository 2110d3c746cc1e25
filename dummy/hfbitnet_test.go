package dummy

import (
	"fmt"
	"strings"
	"testing"
)

// TestHFBitnetFamilies: the HF BitNet families of other causal graphs lay
// out their tensors as transformers' BitNet integration saves them: a
// packed projection as U8 [out/4, in] then its 0-d weight_scale, Qwen2's
// q/k/v biases as bf16 [out] after their weight (never packed), Mistral with
// llama's names, Qwen3's q/k norms [head_dim] after o_proj; an untied head
// only when tie_word_embeddings is false.
func TestHFBitnetFamilies(t *testing.T) {
	base := func(arch string, tied bool) map[string]any {
		return map[string]any{"architectures": []any{arch}, "hidden_size": 256, "intermediate_size": 512,
			"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512, "num_hidden_layers": 1,
			"tie_word_embeddings": tied}
	}
	cases := []struct {
		arch string
		tied bool
		want string
	}{
		{"Qwen2ForCausalLM", true, `model.embed_tokens.weight BF16 [512 256]
model.layers.0.self_attn.q_proj.weight U8 [64 256]
model.layers.0.self_attn.q_proj.weight_scale BF16 []
model.layers.0.self_attn.q_proj.bias BF16 [256]
model.layers.0.self_attn.k_proj.weight U8 [32 256]
model.layers.0.self_attn.k_proj.weight_scale BF16 []
model.layers.0.self_attn.k_proj.bias BF16 [128]
model.layers.0.self_attn.v_proj.weight U8 [32 256]
model.layers.0.self_attn.v_proj.weight_scale BF16 []
model.layers.0.self_attn.v_proj.bias BF16 [128]
model.layers.0.self_attn.o_proj.weight U8 [64 256]
model.layers.0.self_attn.o_proj.weight_scale BF16 []
model.layers.0.mlp.gate_proj.weight U8 [128 256]
model.layers.0.mlp.gate_proj.weight_scale BF16 []
model.layers.0.mlp.up_proj.weight U8 [128 256]
model.layers.0.mlp.up_proj.weight_scale BF16 []
model.layers.0.mlp.down_proj.weight U8 [64 512]
model.layers.0.mlp.down_proj.weight_scale BF16 []
model.layers.0.input_layernorm.weight BF16 [256]
model.layers.0.post_attention_layernorm.weight BF16 [256]
model.norm.weight BF16 [256]`},
		{"MistralForCausalLM", false, `model.embed_tokens.weight BF16 [512 256]
model.layers.0.self_attn.q_proj.weight U8 [64 256]
model.layers.0.self_attn.q_proj.weight_scale BF16 []
model.layers.0.self_attn.k_proj.weight U8 [32 256]
model.layers.0.self_attn.k_proj.weight_scale BF16 []
model.layers.0.self_attn.v_proj.weight U8 [32 256]
model.layers.0.self_attn.v_proj.weight_scale BF16 []
model.layers.0.self_attn.o_proj.weight U8 [64 256]
model.layers.0.self_attn.o_proj.weight_scale BF16 []
model.layers.0.mlp.gate_proj.weight U8 [128 256]
model.layers.0.mlp.gate_proj.weight_scale BF16 []
model.layers.0.mlp.up_proj.weight U8 [128 256]
model.layers.0.mlp.up_proj.weight_scale BF16 []
model.layers.0.mlp.down_proj.weight U8 [64 512]
model.layers.0.mlp.down_proj.weight_scale BF16 []
model.layers.0.input_layernorm.weight BF16 [256]
model.layers.0.post_attention_layernorm.weight BF16 [256]
model.norm.weight BF16 [256]
lm_head.weight BF16 [512 256]`},
		// bf16 masters (online), head_dim 128 > hidden/heads as Qwen3-0.6B
		{"Qwen3ForCausalLM", false, `model.embed_tokens.weight BF16 [512 256]
model.layers.0.self_attn.q_proj.weight BF16 [512 256]
model.layers.0.self_attn.k_proj.weight BF16 [256 256]
model.layers.0.self_attn.v_proj.weight BF16 [256 256]
model.layers.0.self_attn.o_proj.weight BF16 [256 512]
model.layers.0.self_attn.q_norm.weight BF16 [128]
model.layers.0.self_attn.k_norm.weight BF16 [128]
model.layers.0.mlp.gate_proj.weight BF16 [512 256]
model.layers.0.mlp.up_proj.weight BF16 [512 256]
model.layers.0.mlp.down_proj.weight BF16 [256 512]
model.layers.0.input_layernorm.weight BF16 [256]
model.layers.0.post_attention_layernorm.weight BF16 [256]
model.norm.weight BF16 [256]
lm_head.weight BF16 [512 256]`},
	}
	for _, c := range cases {
		ts, err := Layout(base(c.arch, c.tied), true)
		if c.arch == "Qwen3ForCausalLM" {
			cfg := base(c.arch, c.tied)
			cfg["head_dim"] = 128
			ts, err = Layout(cfg, false)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.arch, err)
		}
		var lines []string
		for _, x := range ts {
			lines = append(lines, fmt.Sprintf("%s %s %v", x.Name, x.DType, x.Shape))
			if strings.HasSuffix(x.Name, ".bias") && x.Role != Bias {
				t.Errorf("%s: role %s, want bias", x.Name, x.Role)
			}
		}
		if got := strings.Join(lines, "\n"); got != c.want {
			t.Errorf("%s layout:\n%s\nwant:\n%s", c.arch, got, c.want)
		}
	}
}
