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
package verify
