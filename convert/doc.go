// Package convert turns a Hugging Face BitNet checkpoint directory into a GGUF
// file that bitnet.cpp runs, in one pass and tensor by tensor.
//
// The work is split in two steps that share one data structure:
//
//   - Plan reads config.json, the safetensors headers and the tokenizer, and
//     decides every output tensor (GGUF name, ne, ggml type, bytes) and every
//     KV. `--dry-run` prints a Plan; nothing is written.
//   - Convert streams the planned tensors to a GGUF writer: for each tensor it
//     reads the input (mmapped, released afterwards), ternarizes or unpacks the
//     seven projections, packs them (I2_S, TL1, TL2) or converts them (F32,
//     F16, BF16), and writes the bytes. The work inside one tensor is split over
//     goroutines by fixed chunks, so the output is byte-identical for any
//     GOMAXPROCS.
//
// Architectures are registered converters (Register) keyed by the
// checkpoint's config.json "architectures" entry; each one is a small file
// (convert_bitnet.go, …) holding its tensor-name table and hyper-parameter
// rules. The tensor type policy is a table (policy.go). The BitNet
// sentence-embedding models (Qwen3Model → arch qwen3, Gemma3TextModel → arch
// gemma3; embedding.go, convert_qwen3.go, convert_gemma3.go, pooling.go) are
// rows of one table: no output head, the per-projection *_norm_in weights,
// Gemma's (1 + w) norm fix, head_dim in three keys and the pooling type from
// the sentence-transformers files (spec §1.4, §5.5, §6).
//
// LlamaForCausalLM checkpoints with quantization_config.quant_method
// "bitnet" (Llama3-8B-1.58, Falcon3 1.58bit) convert to GGUF arch llama
// (convert_llama.go): plain llama names, untied output, q/k rows interleaved
// for llama's rope (the RopePermuter hook). Falcon-E (use_rms_norm) is
// refused.
//
// # Adding an architecture
//
//  1. tensormap/tables.go: a Table of name rules (HF stem → GGUF stem,
//     class, flags). Expected shapes come from Plan.checkShapes by GGUF stem;
//     a new stem needs a row there.
//  2. convert/convert_<arch>.go: a Converter (Arch, Table, StripPrefix,
//     HParams, Geometry, Embedding) registered in init under the HF
//     architectures[0] name, plus only the optional hooks it needs:
//     OutTypeLimiter, OptionalTensors, ExtraKVser, TokenizerJSONPreferrer,
//     VocabFixer, GemmaNormFixer, RopePermuter (declared in convert.go).
//     Refuse configs you cannot convert exactly in the NewFunc, one line
//     naming config.json and the key.
//  3. runtime/model.go: a row of archs (FFN activation, rope pairing,
//     sub-norms, attention operand rounding) when the graph is one of the
//     existing ones; embedding models are rows of runtime/embed.go.
//  4. dummy/layout.go: a row of families (the checkpoint's tensor names and
//     shapes), and a preset in presets/ when the model is public.
//  5. verify: the float reference (verify/reference.go) is an independent
//     implementation on purpose; teach it the graph difference, if any.
//  6. gguf/types.go tl2Archs when bitnet.cpp writes TL2 files for the arch.
//  7. Tests: a dummy of the real shapes through hf2gguf, run and verify; a
//     bitnet.cpp reference in testdata when the oracle can load the arch.
//
// Shapes: HF shapes are [out, in] (row-major, in fastest); GGUF ne is the
// reverse ([in, out]). Plans keep both.
//
// Rules and their sources: ternarization matches bitnet.cpp
// BitnetModel.weight_quant (spec conversion.md §2.1), packed checkpoints §2.4
// (with our weight_scale rule), the I2_S layout §3.1, KVs §1.2 and §5,
// tensor order §5.4.
package convert
