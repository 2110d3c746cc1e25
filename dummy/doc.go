// Package dummy writes Hugging Face checkpoints in the exact layout of the
// real BitNet-family models (tensor names, HF [out, in] shapes, dtypes,
// sharding, config.json, tokenizer files) with seeded random weights, so
// conversions can be tested and measured at full size without downloading
// the real weights.
//
// Layout derives the tensor list from a config.json map through a table
// keyed by architectures[0] (families): 1bitLLM BitnetForCausalLM with
// inner_attn_ln / ffn_layernorm sub-norms, Microsoft BitNetForCausalLM (2B-4T)
// with attn_sub_norm / ffn_sub_norm, LlamaForCausalLM (Falcon3, Llama3-8B-1.58)
// with plain llama names, and the embedding models Qwen3Model and
// Gemma3TextModel (no "model." prefix, seven per-projection "<proj>.norm"
// RMSNorms per layer, q_norm/k_norm, Gemma's extra block norms). lm_head is
// written only when tie_word_embeddings is false. Packed checkpoints store
// each projection as U8 [out/4, in] (four 2-bit codes per byte, unpacked
// along rows as spec conversion.md §2.4 describes) plus a bf16 0-d
// weight_scale.
//
// Generate streams the values tensor by tensor through hf.WriteSafetensors:
// memory stays at a few megabytes whatever the model size, and the bytes
// depend only on the seed (not on the thread count).
package dummy
