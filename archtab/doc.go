// Package archtab is the one table of the model architectures bitnet-convert
// converts, runs, verifies, requantizes, exports and generates: one row
// (Arch) per GGUF architecture and Hugging Face class. Every package that
// used to keep its own list of archs reads this table instead: convert (the
// converters' arch names, tensor tables, hyper-parameter keys, the
// requant arch set), runtime (the causal graph variants and the default
// arithmetic), verify (the float reference's graph and the metadata check),
// format (the arch each target runtime loads), gguf (where TL2 may occur),
// hfexport (the HF class written back), gpupack (q/k row order) and dummy
// (the tensor tables of the dummy families).
//
// A row says what a runtime needs to know about a graph, as flags, so that
// an architecture that combines existing features is a new row, not new
// code: the FFN activation, the rope pairing (NEOX halves or adjacent pairs,
// which decides whether the converter interleaves q/k rows), the norm vectors
// (BitNet's sub-LN or plain block norms), q/k/v biases, q/k RMS norms, the
// per-projection input norms (*_norm_in), the tie rule of the output head,
// whether it is an embedding model, the tensormap table, the
// hyper-parameter key set, the GGUF arch name per target runtime (empty when
// that runtime has no graph for it) and TL2 support.
//
// The package imports only tensormap, so the low-level packages (gguf,
// format) can read it without cycles.
//
// Sources: bitnet.cpp utils/convert-hf-to-gguf-bitnet.py (BitnetModel,
// LlamaModel) and its llama.cpp fork's src/llama.cpp (llm_build_bitnet,
// llm_build_llama); ggml-org/llama.cpp src/llama-arch.cpp and
// convert_hf_to_gguf.py (TextModel.set_gguf_parameters, LlamaModel,
// Qwen2Model, Qwen3Model); ikawrakow/ik_llama.cpp src/llama-arch.cpp
// (bitnet, bitnet-25, bitnet-b1.58). The spec files conversion.md §1 and
// formats-2026.md §A3 and §4 summarize them.
package archtab
