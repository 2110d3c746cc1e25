package dummy

import (
	"slices"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// familyOf is the layout of arch for config cfg: families[arch], plus, for
// the HF classes of the llama row when quantization_config.use_rms_norm is
// true, the per-projection RMSNorm "<proj>.rms_norm.weight" (shape: the
// projection's input width) right after each projection and its
// weight_scale, where transformers' BitLinear keeps its rms_norm submodule
// in the state dict (huggingface/transformers integrations/bitnet.py).
// Falcon-E read with use_rms_norm is made this way.
func familyOf(arch string, cfg map[string]any) family {
	fam := families[arch]
	qc, _ := cfg["quantization_config"].(map[string]any)
	if on, _ := qc["use_rms_norm"].(bool); !on || !slices.Contains(archtab.Llama.HF, arch) {
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
