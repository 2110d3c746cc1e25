package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// checkRequantOutType refuses the outtypes hf2gguf refuses for the file's
// arch (the converter's OutTypes, as Architectures lists them): requant
// writes nothing that hf2gguf would not, so a BitNet embedding model
// (qwen3, gemma3) stays F32/F16/BF16/I2_S, which is what bitnet.cpp's
// embedding pipeline runs; no other runtime knows their per-projection input
// norms. An arch no converter writes is not limited here. When an arch
// names both a causal and an embedding model (qwen3), embedding (the file
// has {arch}.pooling_type) picks whose outtypes apply.
func checkRequantOutType(arch string, embedding bool, t OutType) error {
	var limits []OutType
	known := false
	both := archtab.Causal(arch) != nil && archtab.Embedding(arch) != nil
	for _, info := range Architectures() {
		if info.VocabOnly || !slices.Contains(archNames(info), arch) || (both && info.Embedding != embedding) {
			continue
		}
		known = true
		for _, o := range info.OutTypes {
			if !slices.Contains(limits, o) {
				limits = append(limits, o)
			}
		}
	}
	if a := archtab.Causal(arch); a != nil && a.BitNet() && !known {
		// a BitNet arch another converter wrote (llama.cpp's "bitnet",
		// ik_llama.cpp's "bitnet-25"): every outtype
		return nil
	}
	if !known {
		return fmt.Errorf("general.architecture %s is not an architecture requant reads (%s); fix the GGUF metadata", reader.Quote(arch), strings.Join(RequantArchs(), ", "))
	}
	if slices.Contains(limits, t) {
		return nil
	}
	return fmt.Errorf("--outtype %s is not supported for arch %s (supported: %s)", t, arch, joinOutTypes(limits))
}

// archNames is info.GGUF without what selects each arch ("bitnet-b1.58
// (hidden_act relu2)" gives bitnet-b1.58).
func archNames(info ArchInfo) []string {
	var out []string
	for _, g := range info.GGUF {
		name, _, _ := strings.Cut(g, " ")
		out = append(out, name)
	}
	return out
}

// RequantArchs lists, sorted, the general.architecture values requant
// reads: the archs the converters write (Architectures, not vocab-only)
// and the BitNet rows of archtab (the archs of the other runtimes too:
// llama.cpp's bitnet, ik_llama.cpp's bitnet-25).
func RequantArchs() []string {
	var out []string
	for _, info := range Architectures() {
		if !info.VocabOnly {
			out = append(out, archNames(info)...)
		}
	}
	for _, a := range archtab.All() {
		if a.BitNet() {
			out = append(out, a.GGUF)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
