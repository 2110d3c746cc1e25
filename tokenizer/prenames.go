package tokenizer

import "slices"

// llamaCppPres are the tokenizer.ggml.pre values llama.cpp's vocabulary
// loader recognises for a BPE ("gpt2") vocabulary (llama.cpp
// src/llama-vocab.cpp, llama_vocab::impl::load, the tokenizer_pre chain).
// The runtime of this tool tokenizes only some of them (preTokenizers); the
// rest may still be written with --pre for llama.cpp.
var llamaCppPres = []string{
	"default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
	"deepseek-llm", "deepseek-coder", "deepseek-v3", "falcon", "mpt", "starcoder",
	"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
	"jina-v1-en", "jina-v2-code", "roberta-bpe", "refact", "command-r", "qwen2", "deepseek-r1-qwen", "kormo",
	"stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat", "glm4", "chatglm-bpe", "viking", "jais", "tekken",
	"smollm", "codeshell", "bloom", "gpt3-finnish", "exaone", "exaone4", "chameleon", "minerva-7b", "megrez",
	"gpt-4o", "llama4", "superbpe", "trillion", "granite-docling", "bailingmoe", "bailingmoe2", "llada-moe",
	"seed-coder", "hunyuan", "hunyuan-dense", "kimi-k2", "grok-2", "afmoe", "minimax-m2",
}

// KnownPre reports whether name is a tokenizer.ggml.pre value llama.cpp
// knows. hf2gguf refuses --pre with any other name (a usage error, defect
// D14): llama.cpp builds of bitnet.cpp's age refuse to load such a file.
func KnownPre(name string) bool {
	return slices.Contains(llamaCppPres, name) || slices.Contains(bitnetCppPres, name)
}

// bitnetCppPres are tokenizer.ggml.pre values only bitnet.cpp's llama.cpp
// fork knows (build B, src/llama.cpp llm_load_vocab: falcon_e, added with
// microsoft/BitNet PR #268). Mainline llama.cpp refuses them ("unknown
// pre-tokenizer type"); falcon3 splits identically and loads everywhere.
var bitnetCppPres = []string{"falcon_e"}
