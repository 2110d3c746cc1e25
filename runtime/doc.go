// Package runtime is a small pure-Go inference engine for BitNet b1.58 GGUF
// files (GGUF archs "bitnet", "bitnet-b1.58" and its legacy alias
// "bitnet-25"; the embedding archs live in embed*.go). It exists to check
// converted files: fed one token per call it reproduces the logits of
// bitnet.cpp (c82b5e66 with its llama.cpp fork 406a5036, x86 AVX2 I2_S and
// TL2 builds) bit for bit on the golden tiny model (I2_S, F32, Q8_0
// token_embd, TL2), and ik_llama.cpp's bitnet-b1.58 logits within 1.5e-3.
// Options.Batched switches to the reference's whole-prompt arithmetic
// (llama-embedding, the non-_seq_ golden files).
//
// Entry points: Open / LoadFile / Load build a Model; Model.NewSession gives
// a Session whose Eval runs one token and returns its logits, Hidden the
// final normed state for pooling (Pool); Perplexity scores a token stream as
// llama-perplexity does. Matrix, QuantizeI8S and QuantizeQ8_0 expose the
// kernels for tests elsewhere (BR-09).
//
// Conventions:
//   - Weight shapes are given in GGUF ne order: ne = [K, M] is a matrix with M
//     output rows of K inputs each (HF [out, in] = [M, K]).
//   - Every matrix-vector product computes y[r] = Σ_k W[r][k]·x[k] for one
//     token; the arithmetic follows ggml's per-type vec_dot: I2_S quantizes the
//     activation row to int8 (one scale per token row) and corrects with the
//     activation sum; F16 and Q8_0 weights first round the activation to F16 or
//     to Q8_0 blocks; F32 and BF16 weights take f32 activations.
//   - Work is split over goroutines by output rows only, so results never
//     depend on the thread count.
//   - Float code follows the reference's operation order: ggml's AVX2
//     vec_dot lane structure (dot.go), the fused multiply-adds clang forms
//     (rope, dot tails) via fma32, the vector exponential of softmax and
//     SiLU (vexp.go), the int16 lanes of the I2_S kernel, the KV length
//     padded to 32. Nothing is left to the Go compiler's optional FMA
//     fusion where it could change a result, so amd64 and arm64 give
//     bit-identical logits (TestArm64SameNumbers runs the tests under
//     qemu-aarch64).
//   - Programmer errors (length mismatches) panic with a "runtime: " message;
//     data errors (a missing tensor, a bad shape) are returned as errors that
//     name the key or tensor.
//
// The graph (see spec/runtime.md): per layer RMSNorm → Q/K/V → NEOX rope →
// F16 KV cache → softmax attention (GQA) → attn_sub_norm → W_o → residual;
// RMSNorm → gate/up → silu (bitnet) or relu² (bitnet-b1.58) → ffn_sub_norm →
// W_down → residual; then output_norm and the LM head (output, or the tied
// token_embd). Arch llama (Llama3-8B-1.58, Falcon3 1.58bit as bitnet.cpp
// loads them) is a row of the same table: no sub-norms, silu, and llama's
// adjacent-pair rope on the q/k rows the converter interleaved; ternary
// projections run with per-token int8 activations (I2_S, TL1/TL2) or in
// float (F16/F32) as for the BitNet archs.
//
// Sentence-embedding models (GGUF arch qwen3 and gemma3 as bitnet.cpp's
// embedding converter writes them: BitNet embedding 0.6B and 270M) load with
// LoadEmbedding / OpenEmbedding into an EmbeddingModel (embed*.go): the whole
// sequence runs at once with float32 attention, an RMSNorm (*_norm_in) in
// front of every ternary projection, q/k RMSNorm per head, and per arch the
// FFN activation, Gemma3's √hidden embedding scale and post norms (a table,
// embedArchs); Embed pools (mean, cls, last) and L2-normalises.
package runtime
