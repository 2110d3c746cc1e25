package tensormap

import (
	"fmt"
	"testing"
)

func TestBitNetTable(t *testing.T) {
	cases := []struct {
		hf, gguf string
		class    Class
		block    int
	}{
		{"model.embed_tokens.weight", "token_embd.weight", Embedding, -1},
		{"model.norm.weight", "output_norm.weight", Norm, -1},
		{"lm_head.weight", "output.weight", Output, -1},
		{"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", Norm, 0},
		{"model.layers.12.self_attn.q_proj.weight", "blk.12.attn_q.weight", Projection, 12},
		{"model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight", Projection, 3},
		{"model.layers.1.self_attn.inner_attn_ln.weight", "blk.1.attn_sub_norm.weight", Norm, 1},
		{"model.layers.1.self_attn.attn_sub_norm.weight", "blk.1.attn_sub_norm.weight", Norm, 1},
		{"model.layers.1.mlp.ffn_layernorm.weight", "blk.1.ffn_sub_norm.weight", Norm, 1},
		{"model.layers.1.mlp.ffn_sub_norm.weight", "blk.1.ffn_sub_norm.weight", Norm, 1},
		{"model.layers.29.mlp.down_proj.weight", "blk.29.ffn_down.weight", Projection, 29},
		{"model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight", Norm, 0},
	}
	for _, c := range cases {
		m, ok := BitNet.Lookup(c.hf)
		if !ok {
			t.Errorf("%s: no match", c.hf)
			continue
		}
		if m.GGUF != c.gguf || m.Class != c.class || m.Block != c.block {
			t.Errorf("%s: got %q %v %d, want %q %v %d", c.hf, m.GGUF, m.Class, m.Block, c.gguf, c.class, c.block)
		}
	}
	for _, bad := range []string{"model.layers.0.mlp.down_proj.weight_scale", "model.layers.x.mlp.down_proj.weight", "model.layers.0.self_attn.rotary_emb.inv_freq", "model.layers.0.self_attn.q_proj.norm.weight", "foo"} {
		if m, ok := BitNet.Lookup(bad); ok {
			t.Errorf("%s: unexpected match %q", bad, m.GGUF)
		}
	}
}

// BR-18: the embedding models' per-projection norms and the Gemma/Qwen
// difference for post_attention_layernorm.
func TestEmbeddingTables(t *testing.T) {
	common := map[string]string{
		"layers.0.self_attn.q_proj.norm.weight": "blk.0.attn_q_norm_in.weight",
		"layers.0.self_attn.k_proj.norm.weight": "blk.0.attn_k_norm_in.weight",
		"layers.0.self_attn.v_proj.norm.weight": "blk.0.attn_v_norm_in.weight",
		"layers.0.self_attn.o_proj.norm.weight": "blk.0.attn_output_norm_in.weight",
		"layers.0.mlp.gate_proj.norm.weight":    "blk.0.ffn_gate_norm_in.weight",
		"layers.0.mlp.up_proj.norm.weight":      "blk.0.ffn_up_norm_in.weight",
		"layers.0.mlp.down_proj.norm.weight":    "blk.0.ffn_down_norm_in.weight",
		"layers.0.self_attn.q_norm.weight":      "blk.0.attn_q_norm.weight",
		"layers.0.self_attn.k_norm.weight":      "blk.0.attn_k_norm.weight",
		"layers.0.input_layernorm.weight":       "blk.0.attn_norm.weight",
		"layers.0.self_attn.q_proj.weight":      "blk.0.attn_q.weight",
		"layers.0.mlp.down_proj.weight":         "blk.0.ffn_down.weight",
		"embed_tokens.weight":                   "token_embd.weight",
		"norm.weight":                           "output_norm.weight",
	}
	for _, tc := range []struct {
		name  string
		table *Table
		extra map[string]string
		none  []string
	}{
		{"qwen3", Qwen3Embedding, map[string]string{"layers.0.post_attention_layernorm.weight": "blk.0.ffn_norm.weight"},
			[]string{"layers.0.pre_feedforward_layernorm.weight"}},
		{"gemma3", Gemma3Embedding, map[string]string{
			"layers.0.post_attention_layernorm.weight":   "blk.0.post_attention_norm.weight",
			"layers.0.pre_feedforward_layernorm.weight":  "blk.0.ffn_norm.weight",
			"layers.0.post_feedforward_layernorm.weight": "blk.0.post_ffw_norm.weight",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for hf, want := range common {
				checkMap(t, tc.table, hf, want)
			}
			for hf, want := range tc.extra {
				checkMap(t, tc.table, hf, want)
			}
			// lm_head is recognised as an Output so the converter drops it
			// with a warning instead of failing on an unmapped name.
			if m, ok := tc.table.Lookup("lm_head.weight"); !ok || m.Class != Output {
				t.Errorf("lm_head.weight: %v %v, want an Output match", m, ok)
			}
			for _, hf := range tc.none {
				if m, ok := tc.table.Lookup(hf); ok {
					t.Errorf("%s: unexpected match %q", hf, m.GGUF)
				}
			}
		})
	}
	// The (1+w) flag is on Gemma's own norms and never on a *_norm_in.
	m, _ := Gemma3Embedding.Lookup("layers.0.mlp.up_proj.norm.weight")
	if m.HasFlag("gemma-norm") {
		t.Error("ffn_up_norm_in must not carry the gemma-norm flag")
	}
	m, _ = Gemma3Embedding.Lookup("layers.0.post_feedforward_layernorm.weight")
	if !m.HasFlag("gemma-norm") {
		t.Error("post_ffw_norm must carry the gemma-norm flag")
	}
}

func checkMap(t *testing.T, table *Table, hf, want string) {
	t.Helper()
	m, ok := table.Lookup(hf)
	if !ok {
		t.Errorf("%s: no match", hf)
		return
	}
	if m.GGUF != want {
		t.Errorf("%s: got %q, want %q", hf, m.GGUF, want)
	}
}

func ExampleTable_Lookup() {
	m, _ := BitNet.Lookup("model.layers.7.mlp.ffn_sub_norm.weight")
	fmt.Println(m.GGUF, m.Class, m.Block)
	// Output: blk.7.ffn_sub_norm.weight norm 7
}
