package tensormap

import (
	"fmt"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
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

// TestShapes: every rule of every table declares its HF shape, and the
// shapes follow the geometry (q rows heads·head_dim, k/v rows
// kv_heads·head_dim, head norms head_dim, the rest hidden/FFN/vocab),
// with the explanation the converter's mismatch error prints.
func TestShapes(t *testing.T) {
	g := hf.Geometry{Hidden: 3072, FF: 23040, Heads: 12, HeadsKV: 4, HeadDim: 256, Vocab: 131072, Layers: 2}
	tables := map[string]*Table{"bitnet": BitNet, "llama": Llama, "qwen3": Qwen3Embedding, "gemma3": Gemma3Embedding}
	for name, tab := range tables {
		for _, r := range tab.rules {
			if len(r.Shape) == 0 || len(r.Shape) > 2 || (r.Class == Norm) != (len(r.Shape) == 1) {
				t.Errorf("%s %s: shape %v for class %s", name, r.HF, r.Shape, r.Class)
			}
		}
	}
	cases := []struct {
		hf   string
		want []uint64
		why  string
	}{
		{"model.embed_tokens.weight", []uint64{131072, 3072}, ""},
		{"lm_head.weight", []uint64{131072, 3072}, ""},
		{"model.layers.0.self_attn.q_proj.weight", []uint64{3072, 3072}, " (num_attention_heads 12 × head_dim 256 = 3072)"},
		{"model.layers.0.self_attn.k_proj.weight", []uint64{1024, 3072}, " (num_key_value_heads 4 × head_dim 256 = 1024)"},
		{"model.layers.0.self_attn.o_proj.weight", []uint64{3072, 3072}, " (num_attention_heads 12 × head_dim 256 = 3072)"},
		{"model.layers.1.mlp.down_proj.weight", []uint64{3072, 23040}, ""},
		{"model.layers.1.mlp.gate_proj.weight", []uint64{23040, 3072}, ""},
		{"model.layers.1.post_attention_layernorm.weight", []uint64{3072}, ""},
	}
	for _, c := range cases {
		m, ok := Llama.Lookup(c.hf)
		if !ok {
			t.Fatalf("%s: no match", c.hf)
		}
		if got := m.Rule.Shape.Sizes(g); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: shape %v, want %v", c.hf, got, c.want)
		}
		if got := m.Rule.Shape.Why(g); got != c.why {
			t.Errorf("%s: why %q, want %q", c.hf, got, c.why)
		}
	}
	for hfName, want := range map[string]uint64{"layers.0.self_attn.q_norm.weight": 256, "layers.0.self_attn.o_proj.norm.weight": 3072, "layers.0.mlp.down_proj.norm.weight": 23040} {
		m, _ := Gemma3Embedding.Lookup(hfName)
		if got := m.Rule.Shape.Sizes(g); len(got) != 1 || got[0] != want {
			t.Errorf("%s: shape %v, want [%d]", hfName, got, want)
		}
	}
	if m, _ := BitNet.Lookup("model.layers.0.mlp.ffn_sub_norm.weight"); fmt.Sprint(m.Rule.Shape.Sizes(g)) != "[23040]" {
		t.Errorf("ffn_sub_norm: shape %v", m.Rule.Shape.Sizes(g))
	}
}
