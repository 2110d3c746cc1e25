package tensormap

import (
	"slices"
	"testing"
)

// TestLlamaNormIn: both spellings of a per-projection input norm map to the
// fork's *_norm_in names with the projection's input width, are flagged
// optional (Expected lists exactly Llama's tensors) and report their
// spelling; Llama itself is unchanged.
func TestLlamaNormIn(t *testing.T) {
	LlamaNormIn := Llama.With(NormInRules("model.layers.")...)
	cases := []struct {
		hf, gguf string
		spell    NormInSpelling
		stem     string
		shape    Shape
	}{
		{"model.layers.3.self_attn.q_proj.rms_norm.weight", "blk.3.attn_q_norm_in.weight", SpellRMSNorm, "attn_q", Shape{DimHidden}},
		{"model.layers.0.self_attn.o_proj.norm.weight", "blk.0.attn_output_norm_in.weight", SpellNorm, "attn_output", Shape{DimQ}},
		{"model.layers.12.mlp.down_proj.rms_norm.weight", "blk.12.ffn_down_norm_in.weight", SpellRMSNorm, "ffn_down", Shape{DimFF}},
		{"model.layers.1.mlp.up_proj.norm.weight", "blk.1.ffn_up_norm_in.weight", SpellNorm, "ffn_up", Shape{DimHidden}},
	}
	for _, tc := range cases {
		m, ok := LlamaNormIn.Lookup(tc.hf)
		if !ok || m.GGUF != tc.gguf || m.Class != Norm || !slices.Equal(m.Rule.Shape, tc.shape) {
			t.Errorf("%s → %+v %v, want %s norm %v", tc.hf, m, ok, tc.gguf, tc.shape)
			continue
		}
		sp, stem, ok := NormInOf(m)
		if !ok || sp != tc.spell || stem != tc.stem {
			t.Errorf("%s: NormInOf = %q %q %v, want %q %q", tc.hf, sp, stem, ok, tc.spell, tc.stem)
		}
		if _, ok := Llama.Lookup(tc.hf); ok {
			t.Errorf("%s: plain Llama table maps it", tc.hf)
		}
	}
	if m, ok := LlamaNormIn.Lookup("model.layers.0.self_attn.q_proj.weight"); !ok || m.GGUF != "blk.0.attn_q.weight" {
		t.Errorf("q_proj → %+v", m)
	} else if _, _, ok := NormInOf(m); ok {
		t.Error("a projection reported as an input norm")
	}
	if got, want := LlamaNormIn.Expected(2), Llama.Expected(2); !slices.Equal(got, want) {
		t.Errorf("Expected(2) with optional norms = %v, want Llama's %v", got, want)
	}
	if n := len(NormInRules("model.layers.")); n != 14 {
		t.Errorf("%d rules, want 7 projections × 2 spellings", n)
	}
}
