// Package runtime is a small pure-Go inference engine for BitNet b1.58 GGUF
// files (GGUF archs "bitnet", "bitnet-b1.58" and its legacy alias
// "bitnet-25"; the embedding archs live in embed*.go). It exists to check
// converted files and reproduces bitnet.cpp's logits bit for bit (x86 AVX2
// builds, one token per llama_decode): arch bitnet against bitnet.cpp
// c82b5e66 with its llama.cpp fork 406a5036 (the golden tiny model in I2_S,
// F32, Q8_0 token_embd and TL2, and the full-size bitnet_b1_58-large shape),
// arch bitnet-b1.58 against bitnet.cpp eb60fc3 (the full-size 2B-4T shape;
// testdata/golden/fullsize), and TQ1_0/TQ2_0 (mainline llama.cpp's
// types) against build A's own TQ files of the golden tiny model
// (testdata/golden/ecosystems), and Q6_K / Q4_K token_embd against build A
// (testdata/golden/q6k-embd, q4k-embd). Options.F32Attention computes
// attention and RMS norms as ik_llama.cpp 8337e4cd does (ik.go): with the
// Q8_K64 kernels of iqbn.go its IQ1_BN/IQ2_BN logits of b158-h512 are
// matched within 2e-6, its F32 ones within 4e-3. Options.Batched switches to the
// reference's whole-prompt arithmetic (llama-embedding, the non-_seq_
// golden files). Options.Arith = ArithMainline computes the graph as
// mainline llama.cpp 3f545bec's gcc AVX2 build does (arith.go: its CPU
// flash attention with an F16 accumulator and glibc expf, the Q8_K
// kernels' block sums as fused multiply-adds, tinyBLAS for a batch's F16
// head): bit for bit on our TQ1_0/TQ2_0 files of the golden tiny model and
// of a Llama-class dummy (testdata/golden/mainline-home); DefaultArith
// picks each file's home runtime.
//
// Entry points: Open / LoadFile / Load build a Model (its weights used in
// place in the mapped file); Model.NewSession gives a Session whose Eval
// runs one token and returns its logits, EvalBatch runs many (a prompt, a
// perplexity chunk) through each layer at once with the same bits, Hidden
// the final normed state for pooling (Pool); Perplexity scores a token
// stream as llama-perplexity does, PerplexityBase also writing its
// --kl-divergence-base file and KLDivergence comparing with one (kld.go).
// Matrix, QuantizeI8S, QuantizeQ8_0 and QuantizeQ8K64 expose the kernels
// for tests elsewhere (BR-09). TL1/TL2 (and ARM or 1×4 I2_S) tensors are
// repacked to the x86 I2_S layout, rows whose K is not a multiple of 128
// padded with zero weights (tl.go; bitnet_b1_58-3B's ffn_down, K = 8640).
//
// Conventions:
//   - Weight shapes are given in GGUF ne order: ne = [K, M] is a matrix with M
//     output rows of K inputs each (HF [out, in] = [M, K]).
//   - Every matrix-vector product computes y[r] = Σ_k W[r][k]·x[k] for one
//     token; the arithmetic follows ggml's per-type vec_dot: I2_S quantizes the
//     activation row to int8 (one scale per token row) and corrects with the
//     activation sum; F16 and Q8_0 weights first round the activation to F16 or
//     to Q8_0 blocks; F32 and BF16 weights take f32 activations; TQ1_0 and
//     TQ2_0 quantize it to ggml's Q8_K (per 256-element block: int8 codes,
//     a float scale and 16-element sums, quantize_row_q8_K_ref) and take
//     the integer lanes and float accumulation of the AVX2
//     vec_dot_tq{1,2}_0_q8_K (tq.go); a Q6_K or Q4_K LM head takes Q8_K
//     as well (vec_dot_q{6,4}_K_q8_K, q6k.go, q4k.go) and such a
//     token_embd row is dequantized as get_rows does; IQ1_BN and IQ2_BN
//     weights take ik_llama.cpp's Q8_K64 activations (four scales per row)
//     and its kernels' integer sums and float order (iqbn.go, checked
//     against ik_llama.cpp 8337e4cd's logits).
//   - Work is split over goroutines (internal/parallel) by output rows,
//     tokens or attention heads, each result computed whole by one
//     goroutine, so results never depend on the thread count.
//   - Batches: each token row is quantized on its own and every dot product
//     keeps its order; the I2_S kernels compute the same exact integer
//     sums, int16 lane wrap included: with assembly
//     (internal/kernels.Accelerated) DotI2S per row and DotI2S4 for four
//     tokens of a batch, else the pure-Go tables of i2s_batch.go (a
//     four-token lookup table for batches, a 256-entry one for single
//     tokens), dotI2S being the definition. The kernels are plain
//     functions over slices. The integer sums and float lanes of TQ1_0,
//     TQ2_0, Q2_0, IQ1_BN, IQ2_BN, Q8_0 and Q6_K come from
//     internal/kernels too (assembly on amd64 with AVX2 and FMA, pure-Go
//     twins elsewhere: the same bits).
//   - The rope's cos/sin are glibc's cosf/sinf, step by step (libmf.go),
//     as the reference calls the C library.
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
// RMSNorm → gate/up → silu (bitnet) or relu² (bitnet-b1.58; the KV
// {arch}.hidden_activation, "relu2" or "silu", overrides the arch) →
// ffn_sub_norm → W_down → residual; then output_norm and the LM head (output, or the tied
// token_embd). Arch llama (Llama3-8B-1.58, Falcon3 1.58bit as bitnet.cpp
// loads them) is a row of the same table: no sub-norms, silu, and llama's
// adjacent-pair rope on the q/k rows the converter interleaved; ternary
// projections run with per-token int8 activations (I2_S, TL1/TL2) or in
// float (F16/F32) as for the BitNet archs.
//
// Archs qwen2 and qwen3 (causal) are mainline llama.cpp's graphs
// (graph_qwen.go, run with its arithmetic by default, DefaultArith): NEOX
// rope, SiLU FFN, no sub-norms, output head or tied; qwen2 adds its q/k/v
// biases after the projections, qwen3 RMS-norms each q and k head before
// the rope (head dimension from qwen3.attention.key_length). The llama and
// qwen3 graphs take optional per-projection input norms
// (blk.N.<proj>_norm_in.weight: all seven, or any set that every layer
// shares), an RMS norm of the projection's input with eps
// {arch}.attention.norm_in_rms_epsilon (else the model's). A qwen3 file is
// a causal LM unless IsEmbeddingFile says it is one of the embedding models
// below (pooling_type, or all input norms with no output head and no
// norm_in eps key).
//
// Sentence-embedding models (GGUF arch qwen3 and gemma3 as bitnet.cpp's
// embedding converter writes them: BitNet embedding 0.6B and 270M) load with
// LoadEmbedding / OpenEmbedding into an EmbeddingModel (embed*.go): the whole
// sequence runs at once with float32 attention, an RMSNorm (*_norm_in) in
// front of every ternary projection, q/k RMSNorm per head, and per arch the
// FFN activation, Gemma3's √hidden embedding scale and post norms (a table,
// embedArchs); Embed pools (mean, cls, last) and L2-normalises.
//
// Both entry points share one loader (loader.go): the architecture lookup,
// the header keys, the layer-count bound, the head-dimension rule and the
// tensor loading with shape checks (every matrix type and I2_S layout for
// both). What differs per family or architecture is data: a headerRule
// (default context, whether feed_forward_length is required, where the head
// dimension comes from) and the list of per-layer norm vectors of each
// archs / embedArchs row.
package runtime
