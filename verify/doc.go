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
// squared-ReLU gate; Llama-class checkpoints without sub-norms and with an
// untied head fit the same code) and shares no code with package runtime: it
// uses the weights an F32 conversion writes (ternary × scale for the
// projections), computes in float64 with gonum's blas64 products over all
// prompt positions, has no int8 activations and no F16 KV cache. It also
// reads the model geometry from config.json itself (refGeometry) instead of
// using convert.Geometry, on purpose: a mistake in the shared geometry rule
// would otherwise be made on both sides of the comparison. The class in
// config.json picks the graph (reference_qwen.go): Qwen2ForCausalLM adds
// q/k/v biases, Qwen3ForCausalLM per-head q/k RMS norms, MistralForCausalLM
// is Llama's (a prompt past its sliding_window is refused); per-projection
// input norms (*_norm_in) are applied where the checkpoint has them, with
// quantization_config.rms_norm_eps for use_rms_norm and 1e-8 for BitNet
// Distillation's `<proj>.norm.weight`.
//
// Memory is bounded by the largest matrix, not the model. The structure
// check goes one tensor at a time, the token embedding and output head in
// row blocks, and the file's and checkpoint's mapped pages are released after
// each. The reference runs the whole prompt through one layer, then the
// next, fetching one weight matrix at a time (its ternary codes, one byte per
// weight) and multiplying it in float64 row blocks; the output head is read
// in row blocks and the token embedding only at the prompt's rows. The
// runtime's model and the file's pages are dropped before the reference
// starts, so peak RSS is the larger of what the runtime holds for the file
// and about one matrix plus the activations (docs/performance.md).
//
// Run's stages are, in order: load the runtime model; check the structure
// and the metadata against the checkpoint (structure.go: checkStructure;
// metadata.go: checkMetadata, with the rope scaling and tokenizer KVs);
// run the prompt in the runtime (runRuntime, checkSanity); run the float
// reference (referenceLogits), which also feeds the error model
// (thresholds.go); compare (compare.go: compareNumbers). When the structure
// differs the numeric comparison is skipped, with a note. Without a
// checkpoint only the runtime sanity check runs, and the report says so.
//
// With Options.RefGGUF (refgguf.go) the file B is compared with another
// GGUF A of the same model, the input of a requant: tensor by tensor (the
// same codes, scales within the coarser stored rounding), then the logits.
// When every projection runs the same kernel on the same stored values the
// runtime's logits of A and B must be bit-identical. Otherwise both A's and
// B's runtime logits are held to the derived limits (the looser of A's and
// B's error models) against the float reference above built from A's GGUF instead of a checkpoint
// (refgguf_weights.go: ggufWeights, one tensor at a time in row blocks,
// ternary tensors as code·scale decoded by package format; the geometry
// from A's KVs by refGeometryOfGGUF, verify's own reading of them), and the
// report gives both sets of metrics (Report.Numbers for B, RefNumbers for
// A). Comparing the two int8-activation runtimes with each other under
// limits made for runtime-vs-float would demand twice the accuracy.
//
// The logit thresholds of a causal LM are derived per file and prompt by the
// error model of thresholds.go: each projection's kernel family (Family:
// F32, F16, BF16, I2_S/TL, TQ, IQ*_BN, Q2_0) rounds its activations and
// stores its weights with a known rounding; the reference measures that
// rounding's noise on its own activations (refGeometry.observe), sums it
// over the layers into the logits' relative error r and scales it by the
// reference logits' spread (Bound, printed by verify -v). DefaultThresholds
// are the starting values (the runtime-only spread bound, the embedding
// models' cosine); the mutation corpus (mutation_test.go) proves the
// derived limits on the bundled models.
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
