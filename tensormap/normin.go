package tensormap

import "strings"

// Flag values of Rule.Flags used by the per-projection norm rules.
const (
	// FlagOptional marks a rule whose tensor a complete checkpoint may lack
	// (Expected does not list it); the converter that uses such a table
	// checks the set of optional tensors itself.
	FlagOptional = "optional"
	// FlagNormIn marks the RMSNorm weight applied to a projection's input
	// before its activation quantization (GGUF "*_norm_in").
	FlagNormIn = "norm-in"
)

// NormInSpelling is how a checkpoint names the RMSNorm before a projection.
type NormInSpelling string

// The two spellings of a per-projection input norm in HF checkpoints.
const (
	// SpellRMSNorm is "<proj>.rms_norm.weight": transformers'
	// integrations/bitnet.py, BitLinear/AutoBitLinear with
	// quantization_config.use_rms_norm (LlamaRMSNorm(in_features,
	// eps=rms_norm_eps)); formats-2026.md §1, §4.
	SpellRMSNorm NormInSpelling = "rms_norm"
	// SpellNorm is "<proj>.norm.weight": BitNet Distillation's BitLinear
	// (microsoft/BitNet PR #382, bitdistill tools/bitnet/bitnetsrc/core.py,
	// Qwen2RMSNorm(in_features, eps=1e-8)) and the BitNet embedding models
	// (convert-bitnet-embedding-to-gguf.py); formats-2026.md §3.
	SpellNorm NormInSpelling = "norm"
)

// NormInProjection is one projection that may carry an input norm: its HF
// module under the layer ("self_attn.q_proj"), its GGUF stem under blk.N
// ("attn_q") and the norm's width (the projection's input).
type NormInProjection struct {
	HF, GGUF string
	In       Dim
}

// NormInProjections are the seven projections that may carry an input norm,
// as (HF module under the layer, GGUF stem under blk.N, input width):
// q/k/v/gate/up read hidden_size, o reads heads·head_dim, down reads
// intermediate_size. The GGUF names are those of bitnet.cpp's
// convert-bitnet-embedding-to-gguf.py (microsoft/BitNet 16da220).
var NormInProjections = []NormInProjection{
	{"self_attn.q_proj", "attn_q", DimHidden},
	{"self_attn.k_proj", "attn_k", DimHidden},
	{"self_attn.v_proj", "attn_v", DimHidden},
	{"self_attn.o_proj", "attn_output", DimQ},
	{"mlp.gate_proj", "ffn_gate", DimHidden},
	{"mlp.up_proj", "ffn_up", DimHidden},
	{"mlp.down_proj", "ffn_down", DimFF},
}

// NormInRules returns, for every projection of NormInProjections and both
// spellings, the optional rule "<layers>{bid}.<proj>.<spelling>" →
// "blk.{bid}.<stem>_norm_in" (class Norm, shape [input width], flags
// FlagOptional and FlagNormIn). layers is the HF prefix of a layer, e.g.
// "model.layers.".
func NormInRules(layers string) []Rule {
	var out []Rule
	for _, p := range NormInProjections {
		for _, s := range []NormInSpelling{SpellRMSNorm, SpellNorm} {
			out = append(out, Rule{
				HF:    layers + "{bid}." + p.HF + "." + string(s),
				GGUF:  "blk.{bid}." + p.GGUF + "_norm_in",
				Class: Norm, Shape: Shape{p.In},
				Flags: []string{FlagOptional, FlagNormIn},
			})
		}
	}
	return out
}

// NormInOf reports, for an HF tensor name matched by a NormInRules rule, the
// spelling it uses and the GGUF stem of its projection ("attn_q", …).
func NormInOf(m Match) (NormInSpelling, string, bool) {
	if !m.HasFlag(FlagNormIn) {
		return "", "", false
	}
	for _, s := range []NormInSpelling{SpellRMSNorm, SpellNorm} {
		if strings.HasSuffix(m.Rule.HF, "."+string(s)) {
			stem := strings.TrimSuffix(strings.TrimPrefix(m.Rule.GGUF, "blk.{bid}."), "_norm_in")
			return s, stem, true
		}
	}
	return "", "", false
}

// With returns a new table holding t's rules followed by rules (t is not
// modified).
func (t *Table) With(rules ...Rule) *Table {
	all := make([]Rule, 0, len(t.rules)+len(rules))
	for _, r := range t.rules {
		all = append(all, r.Rule)
	}
	return New(append(all, rules...))
}
