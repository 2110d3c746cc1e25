package tensormap

// BitNet is the table for BitnetForCausalLM / BitNetForCausalLM checkpoints
// (GGUF archs bitnet and bitnet-b1.58). Both sub-norm spellings are
// accepted: 1bitLLM's self_attn.inner_attn_ln / mlp.ffn_layernorm and
// 2B-4T's self_attn.attn_sub_norm / mlp.ffn_sub_norm (spec §5.5).
var BitNet = New([]Rule{
	{HF: "model.embed_tokens", GGUF: "token_embd", Class: Embedding, Shape: Shape{DimVocab, DimHidden}},
	{HF: "model.norm", GGUF: "output_norm", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "lm_head", GGUF: "output", Class: Output, Shape: Shape{DimVocab, DimHidden}},
	{HF: "model.layers.{bid}.input_layernorm", GGUF: "blk.{bid}.attn_norm", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "model.layers.{bid}.self_attn.q_proj", GGUF: "blk.{bid}.attn_q", Class: Projection, Shape: Shape{DimQ, DimHidden}},
	{HF: "model.layers.{bid}.self_attn.k_proj", GGUF: "blk.{bid}.attn_k", Class: Projection, Shape: Shape{DimKV, DimHidden}},
	{HF: "model.layers.{bid}.self_attn.v_proj", GGUF: "blk.{bid}.attn_v", Class: Projection, Shape: Shape{DimKV, DimHidden}},
	{HF: "model.layers.{bid}.self_attn.o_proj", GGUF: "blk.{bid}.attn_output", Class: Projection, Shape: Shape{DimHidden, DimQ}},
	{HF: "model.layers.{bid}.self_attn.inner_attn_ln", GGUF: "blk.{bid}.attn_sub_norm", Class: Norm, Shape: Shape{DimQ}},
	{HF: "model.layers.{bid}.self_attn.attn_sub_norm", GGUF: "blk.{bid}.attn_sub_norm", Class: Norm, Shape: Shape{DimQ}},
	{HF: "model.layers.{bid}.post_attention_layernorm", GGUF: "blk.{bid}.ffn_norm", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "model.layers.{bid}.mlp.gate_proj", GGUF: "blk.{bid}.ffn_gate", Class: Projection, Shape: Shape{DimFF, DimHidden}},
	{HF: "model.layers.{bid}.mlp.up_proj", GGUF: "blk.{bid}.ffn_up", Class: Projection, Shape: Shape{DimFF, DimHidden}},
	{HF: "model.layers.{bid}.mlp.down_proj", GGUF: "blk.{bid}.ffn_down", Class: Projection, Shape: Shape{DimHidden, DimFF}},
	{HF: "model.layers.{bid}.mlp.ffn_layernorm", GGUF: "blk.{bid}.ffn_sub_norm", Class: Norm, Shape: Shape{DimFF}},
	{HF: "model.layers.{bid}.mlp.ffn_sub_norm", GGUF: "blk.{bid}.ffn_sub_norm", Class: Norm, Shape: Shape{DimFF}},
})

// embeddingCommon holds the rules shared by the BitNet embedding models
// (convert-bitnet-embedding-to-gguf.py). Names are given without the
// optional leading "model." prefix, which callers strip.
var embeddingCommon = []Rule{
	{HF: "embed_tokens", GGUF: "token_embd", Class: Embedding, Shape: Shape{DimVocab, DimHidden}},
	{HF: "layers.{bid}.input_layernorm", GGUF: "blk.{bid}.attn_norm", Class: Norm, Shape: Shape{DimHidden}, Flags: []string{"gemma-norm"}},
	{HF: "layers.{bid}.self_attn.q_proj", GGUF: "blk.{bid}.attn_q", Class: Projection, Shape: Shape{DimQ, DimHidden}},
	{HF: "layers.{bid}.self_attn.k_proj", GGUF: "blk.{bid}.attn_k", Class: Projection, Shape: Shape{DimKV, DimHidden}},
	{HF: "layers.{bid}.self_attn.v_proj", GGUF: "blk.{bid}.attn_v", Class: Projection, Shape: Shape{DimKV, DimHidden}},
	{HF: "layers.{bid}.self_attn.o_proj", GGUF: "blk.{bid}.attn_output", Class: Projection, Shape: Shape{DimHidden, DimQ}},
	{HF: "layers.{bid}.self_attn.q_norm", GGUF: "blk.{bid}.attn_q_norm", Class: Norm, Shape: Shape{DimHeadDim}, Flags: []string{"gemma-norm"}},
	{HF: "layers.{bid}.self_attn.k_norm", GGUF: "blk.{bid}.attn_k_norm", Class: Norm, Shape: Shape{DimHeadDim}, Flags: []string{"gemma-norm"}},
	{HF: "layers.{bid}.self_attn.q_proj.norm", GGUF: "blk.{bid}.attn_q_norm_in", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "layers.{bid}.self_attn.k_proj.norm", GGUF: "blk.{bid}.attn_k_norm_in", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "layers.{bid}.self_attn.v_proj.norm", GGUF: "blk.{bid}.attn_v_norm_in", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "layers.{bid}.self_attn.o_proj.norm", GGUF: "blk.{bid}.attn_output_norm_in", Class: Norm, Shape: Shape{DimQ}},
	{HF: "layers.{bid}.mlp.gate_proj", GGUF: "blk.{bid}.ffn_gate", Class: Projection, Shape: Shape{DimFF, DimHidden}},
	{HF: "layers.{bid}.mlp.up_proj", GGUF: "blk.{bid}.ffn_up", Class: Projection, Shape: Shape{DimFF, DimHidden}},
	{HF: "layers.{bid}.mlp.down_proj", GGUF: "blk.{bid}.ffn_down", Class: Projection, Shape: Shape{DimHidden, DimFF}},
	{HF: "layers.{bid}.mlp.gate_proj.norm", GGUF: "blk.{bid}.ffn_gate_norm_in", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "layers.{bid}.mlp.up_proj.norm", GGUF: "blk.{bid}.ffn_up_norm_in", Class: Norm, Shape: Shape{DimHidden}},
	{HF: "layers.{bid}.mlp.down_proj.norm", GGUF: "blk.{bid}.ffn_down_norm_in", Class: Norm, Shape: Shape{DimFF}},
	{HF: "norm", GGUF: "output_norm", Class: Norm, Shape: Shape{DimHidden}, Flags: []string{"gemma-norm"}},
	// An LM head, if a checkpoint carries one, is recognised so the
	// converter can drop it with a warning (spec §5.5: no output head).
	{HF: "lm_head", GGUF: "output", Class: Output, Shape: Shape{DimVocab, DimHidden}},
}

// Qwen3Embedding is the table of the BitNet embedding 0.6B (HF model_type
// qwen3, GGUF arch qwen3).
var Qwen3Embedding = New(append(append([]Rule{}, embeddingCommon...),
	Rule{HF: "layers.{bid}.post_attention_layernorm", GGUF: "blk.{bid}.ffn_norm", Class: Norm, Shape: Shape{DimHidden}},
))

// Gemma3Embedding is the table of the BitNet embedding 270M (HF model_type
// gemma3_text, GGUF arch gemma3). Rules flagged "gemma-norm" get the (1 + w)
// fix; the per-projection *_norm_in weights do not.
var Gemma3Embedding = New(append(append([]Rule{}, embeddingCommon...),
	Rule{HF: "layers.{bid}.post_attention_layernorm", GGUF: "blk.{bid}.post_attention_norm", Class: Norm, Shape: Shape{DimHidden}, Flags: []string{"gemma-norm"}},
	Rule{HF: "layers.{bid}.pre_feedforward_layernorm", GGUF: "blk.{bid}.ffn_norm", Class: Norm, Shape: Shape{DimHidden}, Flags: []string{"gemma-norm"}},
	Rule{HF: "layers.{bid}.post_feedforward_layernorm", GGUF: "blk.{bid}.post_ffw_norm", Class: Norm, Shape: Shape{DimHidden}, Flags: []string{"gemma-norm"}},
))

// Llama is the table for LlamaForCausalLM checkpoints with a BitNet
// quantization_config (HF1BitLLM Llama3-8B-1.58, tiiuae Falcon3 1.58bit;
// GGUF arch llama): the BitNet names without the sub-norms, and an untied
// lm_head (bitnet.cpp utils/convert-hf-to-gguf-bitnet.py, LlamaModel, maps
// them through gguf-py's llama tensor table).
var Llama = New(llamaRules())

// llamaRules are the rules of the Llama table, for it and the tables that
// extend it.
func llamaRules() []Rule {
	return []Rule{
		{HF: "model.embed_tokens", GGUF: "token_embd", Class: Embedding, Shape: Shape{DimVocab, DimHidden}},
		{HF: "model.norm", GGUF: "output_norm", Class: Norm, Shape: Shape{DimHidden}},
		{HF: "lm_head", GGUF: "output", Class: Output, Shape: Shape{DimVocab, DimHidden}},
		{HF: "model.layers.{bid}.input_layernorm", GGUF: "blk.{bid}.attn_norm", Class: Norm, Shape: Shape{DimHidden}},
		{HF: "model.layers.{bid}.self_attn.q_proj", GGUF: "blk.{bid}.attn_q", Class: Projection, Shape: Shape{DimQ, DimHidden}},
		{HF: "model.layers.{bid}.self_attn.k_proj", GGUF: "blk.{bid}.attn_k", Class: Projection, Shape: Shape{DimKV, DimHidden}},
		{HF: "model.layers.{bid}.self_attn.v_proj", GGUF: "blk.{bid}.attn_v", Class: Projection, Shape: Shape{DimKV, DimHidden}},
		{HF: "model.layers.{bid}.self_attn.o_proj", GGUF: "blk.{bid}.attn_output", Class: Projection, Shape: Shape{DimHidden, DimQ}},
		{HF: "model.layers.{bid}.post_attention_layernorm", GGUF: "blk.{bid}.ffn_norm", Class: Norm, Shape: Shape{DimHidden}},
		{HF: "model.layers.{bid}.mlp.gate_proj", GGUF: "blk.{bid}.ffn_gate", Class: Projection, Shape: Shape{DimFF, DimHidden}},
		{HF: "model.layers.{bid}.mlp.up_proj", GGUF: "blk.{bid}.ffn_up", Class: Projection, Shape: Shape{DimFF, DimHidden}},
		{HF: "model.layers.{bid}.mlp.down_proj", GGUF: "blk.{bid}.ffn_down", Class: Projection, Shape: Shape{DimHidden, DimFF}},
	}
}

// Qwen2 is the table for Qwen2ForCausalLM checkpoints with a BitNet
// quantization_config (GGUF arch qwen2): the llama names plus the float
// q/k/v biases (attention_bias; o_proj has none), as ggml-org/llama.cpp
// gguf-py's tensor map names them (attn_q.bias, attn_k.bias, attn_v.bias).
// The bias rules come first: a projection rule would match ".bias" too.
var Qwen2 = New(append([]Rule{
	{HF: "model.layers.{bid}.self_attn.q_proj", GGUF: "blk.{bid}.attn_q", Class: Bias, Shape: Shape{DimQ}},
	{HF: "model.layers.{bid}.self_attn.k_proj", GGUF: "blk.{bid}.attn_k", Class: Bias, Shape: Shape{DimKV}},
	{HF: "model.layers.{bid}.self_attn.v_proj", GGUF: "blk.{bid}.attn_v", Class: Bias, Shape: Shape{DimKV}},
}, llamaRules()...))

// Qwen3 is the table for Qwen3ForCausalLM checkpoints with a BitNet
// quantization_config (GGUF arch qwen3, causal): the llama names plus the
// per-head q/k RMS norms [head_dim] (gguf-py: attn_q_norm, attn_k_norm).
// The output head is lm_head, or token_embd when tie_word_embeddings.
var Qwen3 = New(append(llamaRules(),
	Rule{HF: "model.layers.{bid}.self_attn.q_norm", GGUF: "blk.{bid}.attn_q_norm", Class: Norm, Shape: Shape{DimHeadDim}},
	Rule{HF: "model.layers.{bid}.self_attn.k_norm", GGUF: "blk.{bid}.attn_k_norm", Class: Norm, Shape: Shape{DimHeadDim}},
))
