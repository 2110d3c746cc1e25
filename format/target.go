package format

import (
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// HiddenActivationSuffix is the KV ({arch}.hidden_activation) that records
// the FFN activation of a BitNet file: "relu2" for 2B-4T, "silu" for the
// 1bitLLM models. The loader fixes under discussion for the relu² FFN
// (microsoft/BitNet PRs #603/#605, ggml-org/llama.cpp PR #26751) read it and
// default to SiLU without it; loaders that do not know it ignore it.
const HiddenActivationSuffix = ".hidden_activation"

// ArchActivation is the FFN activation each BitNet GGUF arch implies in
// bitnet.cpp and ik_llama.cpp ("bitnet" is SiLU, "bitnet-b1.58" and
// "bitnet-25" relu²): the BitNet rows of archtab.
var ArchActivation = func() map[string]string {
	m := map[string]string{}
	for _, a := range archtab.All() {
		if a.BitNet() {
			m[a.GGUF] = string(a.FFN)
		}
	}
	return m
}()

// TargetArch returns the GGUF arch a runtime family loads for a model
// written as arch by bitnet.cpp's converter (archtab.TargetArch): mainline
// llama.cpp knows only "bitnet" (ggml-org/llama.cpp src/llama-arch.cpp), so
// every BitNet arch becomes "bitnet" there; bitnet.cpp and ik_llama.cpp
// (ikawrakow/ik_llama.cpp src/llama-arch.cpp: bitnet, bitnet-25,
// bitnet-b1.58) keep it. Other archs are unchanged.
func TargetArch(arch, runtime string) string {
	return archtab.TargetArch(arch, archtab.Runtime(runtime))
}

// RenameArch returns kvs with general.architecture set to to and every key
// "from.…" renamed "to.…" (order and values kept). kvs is not modified.
func RenameArch(kvs []gguf.KV, from, to string) []gguf.KV {
	out := make([]gguf.KV, len(kvs))
	copy(out, kvs)
	if from == to {
		return out
	}
	for i, kv := range out {
		if kv.Key == "general.architecture" {
			out[i].Value = gguf.String(to)
		} else if rest, ok := strings.CutPrefix(kv.Key, from+"."); ok {
			out[i].Key = to + "." + rest
		}
	}
	return out
}

// Relu2Notice is printed when a relu² model is written for mainline
// llama.cpp (arch "bitnet"), whose graph runs SiLU unless it reads
// {arch}.hidden_activation.
const Relu2Notice = "notice: this model's FFN is relu² (squared ReLU) but mainline llama.cpp runs arch bitnet with SiLU unless it reads bitnet.hidden_activation (ggml-org/llama.cpp PR #26751); the file records relu2 there, and a loader without that fix computes wrong logits"
