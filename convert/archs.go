package convert

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// ArchInfo describes one convertible Hugging Face architecture, read from the
// converter registry (hf2gguf --list-archs).
type ArchInfo struct {
	// HF is config.json's architectures[0].
	HF string `json:"hf"`
	// ModelType is the config.json model_type that also selects the
	// converter ("" when only architectures does).
	ModelType string `json:"model_type,omitempty"`
	// GGUF lists the general.architecture values written, each with what
	// selects it (e.g. "bitnet-b1.58 (hidden_act relu2)").
	GGUF []string `json:"gguf"`
	// OutTypes are the accepted --outtype values.
	OutTypes []OutType `json:"outtypes"`
	// Embedding marks a sentence-embedding model (no output head).
	Embedding bool `json:"embedding,omitempty"`
	// VocabOnly marks an architecture only --vocab-only accepts (its weights
	// are not convertible yet).
	VocabOnly bool `json:"vocab_only,omitempty"`
}

// archVariants is an optional Converter hook: the GGUF arch names the
// converter writes and what in config.json selects each.
type archVariants interface{ ArchVariants() []string }

// ArchVariants lists bitnetActArch: the FFN activation picks the arch.
func (m *bitnetModel) ArchVariants() []string {
	byArch := map[string][]string{}
	for act, arch := range bitnetActArch {
		if act == "" {
			act = "absent"
		}
		byArch[arch] = append(byArch[arch], act)
	}
	var out []string
	for arch, acts := range byArch {
		sort.Strings(acts)
		out = append(out, fmt.Sprintf("%s (hidden_act %s)", arch, strings.Join(acts, " or ")))
	}
	sort.Strings(out)
	return out
}

// Architectures lists every registered converter (sorted by HF name) and the
// architectures only --vocab-only accepts. Each converter is built from a
// config.json holding only its architectures entry, so the list is what the
// registry really does, not a hand-kept copy.
func Architectures() []ArchInfo {
	// A model_type key selects the converter whose GGUF arch it builds.
	byArch := map[string]string{}
	for k, f := range registry {
		if mt, ok := strings.CutPrefix(k, "model_type:"); ok {
			if conv, err := f(&hf.Config{Path: "config.json", Raw: map[string]any{"model_type": mt}}); err == nil {
				byArch[conv.Arch()] = mt
			}
		}
	}
	var out []ArchInfo
	for _, name := range Supported() {
		cfg := &hf.Config{Path: "config.json", Raw: map[string]any{"architectures": []any{name}}}
		conv, err := registry[name](cfg)
		if err != nil {
			// LlamaForCausalLM converts only with a BitNet
			// quantization_config.
			cfg.Raw["quantization_config"] = map[string]any{"quant_method": "bitnet"}
			if conv, err = registry[name](cfg); err != nil {
				continue
			}
		}
		info := ArchInfo{HF: name, ModelType: byArch[conv.Arch()], Embedding: conv.Embedding(), OutTypes: slices.Clone(OutTypes)}
		if v, ok := conv.(archVariants); ok {
			info.GGUF = v.ArchVariants()
		} else {
			info.GGUF = []string{conv.Arch()}
		}
		if lim, ok := conv.(interface{ OutTypes() []OutType }); ok {
			info.OutTypes = slices.Clone(lim.OutTypes())
		}
		out = append(out, info)
	}
	for _, name := range VocabOnlyArchs() {
		out = append(out, ArchInfo{HF: name, GGUF: []string{vocabOnlyArchs[name]}, VocabOnly: true})
	}
	return out
}
