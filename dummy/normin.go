package dummy

import (
	"slices"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// familyOf is the layout of arch for config cfg: families[arch], plus, for
// the HF classes whose converter reads quantization_config.use_rms_norm
// (readsUseRMSNorm) when it is
// true, the per-projection RMSNorm "<proj>.rms_norm.weight" (shape: the
// projection's input width) right after each projection and its
// weight_scale, where transformers' BitLinear keeps its rms_norm submodule
// in the state dict (huggingface/transformers integrations/bitnet.py).
// Falcon-E read with use_rms_norm is made this way.
func familyOf(arch string, cfg map[string]any) family {
	fam := families[arch]
	qc, _ := cfg["quantization_config"].(map[string]any)
	if on, _ := qc["use_rms_norm"].(bool); !on || !readsUseRMSNorm(arch) {
		return fam
	}
	var layer []rule
	for _, r := range fam.layer {
		layer = append(layer, r)
		if r.role != Projection {
			continue
		}
		for _, p := range tensormap.NormInProjections {
			if r.name == "layers.{i}."+p.HF+".weight" {
				layer = append(layer, rule{name: "layers.{i}." + p.HF + "." + string(tensormap.SpellRMSNorm) + ".weight", role: Norm, shape: tensormap.Shape{p.In}})
			}
		}
	}
	fam.layer = layer
	return fam
}

// readsUseRMSNorm reports whether the HF class arch is one whose converter
// reads quantization_config.use_rms_norm: the causal rows of the llama
// table and the transformers-integration rows (archtab.Arch.Generic: Qwen2,
// Qwen3 causal), the rows whose graphs take *_norm_in.
func readsUseRMSNorm(arch string) bool {
	return slices.ContainsFunc(archtab.ByHF(arch), func(a *archtab.Arch) bool {
		return !a.Embedding && (a == archtab.Llama || a.Generic)
	})
}
