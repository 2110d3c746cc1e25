// Package hfexport turns a ternary GGUF back into a Hugging Face checkpoint
// in the layout transformers' BitNet integration loads (the `gguf2hf`
// command): the layout of microsoft/bitnet-b1.58-2B-4T.
//
//   - Projections (blk.N.attn_q … ffn_down, any type the format table reads:
//     I2_S in every layout, TL1/TL2 with their kernel configuration,
//     TQ1_0/TQ2_0, IQ1_BN/IQ2_BN, and F32/F16/BF16 projections of a ternary
//     model) become U8 [out/4, in] packed as transformers'
//     integrations/bitnet.py pack_weights packs them: code c = t + 1 in
//     {0, 1, 2}, byte [r, k] holds row r + i·R in bits 2i..2i+1, R = out/4
//     (packing along dim 0, block-strided rows). Each gets a 0-d
//     "<base>.weight_scale" holding the one tensor scale (multiplied, as
//     quantization_config {quant_method bitnet, linear_class autobitlinear,
//     quantization_mode offline} says). A tensor whose scale groups (blocks,
//     rows) carry different scales is refused naming it: the HF layout has
//     one scale per tensor; groups whose codes are all 0 are ignored (their
//     stored scale may be 0). A decoded code outside −1…+1 (Q2_0's code 3)
//     is refused.
//   - The llama arch stores attn_q/attn_k rows rope-permuted (bitnet.cpp
//     convert-hf-to-gguf-bitnet.py LlamaModel.permute; convert.RopePermuter):
//     their rows are put back in HF order. The bitnet archs store them
//     unpermuted and they are copied as they are.
//   - Norms, embeddings, an untied head and the scales are BF16 (as 2B-4T
//     publishes them, torch_dtype bfloat16), or F32 with DType "f32", which
//     keeps every value exact.
//   - config.json (sorted keys, as transformers' to_json_string writes it),
//     generation_config.json, tokenizer.model (SentencePiece-style vocabs)
//     or tokenizer.json (byte-level BPE) and tokenizer_config.json are
//     rebuilt from the GGUF keys.
//   - The tensors are written to model.safetensors, or to
//     model-0000i-of-0000n.safetensors shards with model.safetensors.index.json
//     when they exceed MaxShardSize (huggingface_hub's split rule: a tensor
//     that would overflow the current shard starts a new one).
//
// Tensor data is read with pread one tensor (projections) or one row block
// (float tensors) at a time, so memory stays at about the largest projection
// whatever the model size. The directory is built under a temporary name next
// to the target and renamed when complete: the target appears complete or not
// at all.
//
// Sources of the facts (read, not copied): huggingface/transformers
// src/transformers/integrations/bitnet.py (pack_weights, unpack_weights,
// AutoBitLinear), src/transformers/models/bitnet/configuration_bitnet.py,
// modeling_utils.py save_pretrained (max_shard_size "5GB");
// huggingface_hub serialization split_state_dict_into_shards_factory.
package hfexport
