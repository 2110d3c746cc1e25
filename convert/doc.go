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
// Shapes: HF shapes are [out, in] (row-major, in fastest); GGUF ne is the
// reverse ([in, out]). Plans keep both.
//
// Rules and their sources: ternarization matches bitnet.cpp
// BitnetModel.weight_quant (spec conversion.md §2.1), packed checkpoints §2.4
// (with our weight_scale rule), the I2_S layout §3.1, KVs §1.2 and §5,
// tensor order §5.4.
package convert
