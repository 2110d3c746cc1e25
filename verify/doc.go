// Package verify proves a converted GGUF file: it checks every tensor against
// its Hugging Face source (ternary codes exactly, scales within one ulp, float
// tensors exactly after rounding to their stored type), checks the metadata
// against config.json, and runs the file through the bundled runtime next to
// an independent float reference built from the HF weights, reporting top-1
// agreement, max |Δlogit|, mean KL divergence and the perplexity of both on the
// prompt.
//
// The float reference (reference.go) is written from the Hugging Face model
// definitions (BitNet: LlamaModel with the attention and FFN sub-norms, SiLU or
// squared-ReLU gate) and shares no code with package runtime: it keeps f32
// weights (ternary × scale, as the F32 conversion writes them), computes in
// float64, has no int8 activations and no F16 KV cache.
//
// Default thresholds depend on the stored weight type of the projections,
// because I2_S/TL1/TL2 run with per-token int8 activations (bitnet.cpp's
// kernels) while F32/F16/BF16 files run in float: see DefaultThresholds.
//
// Sentence-embedding models (GGUF arch qwen3 / gemma3, the BitNet embedding
// 0.6B and 270M; embed.go) get the same structure and metadata checks, then,
// per prompt (DefaultEmbedPrompts unless one is given), the cosine similarity
// between the runtime's pooled, L2-normalised embedding and that of a float
// reference written from transformers' Qwen3Model / Gemma3TextModel plus the
// per-projection input RMSNorm (reference_embed.go). That reference reads the
// norm weights as stored in the checkpoint and applies Gemma's (1 + w) itself,
// so a converter that applied the fix twice, or to a *_norm_in, is caught.
// The bound is Thresholds.MinCosine (0.999 for ternary files, 0.99999 for
// float files); the first failing prompt is named.
package verify
