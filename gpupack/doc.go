// Package gpupack writes the two PyTorch checkpoints of bitnet.cpp's GPU
// path (microsoft/BitNet gpu/): model_state_fp16.pt (bf16 weights, the
// prefill model of gpu/generate.py) and model_state_int2.pt (2-bit codes in
// the W2A8 kernel's tile order plus bf16 scales, the decode model), from a
// Hugging Face checkpoint directory or a ternary GGUF, as
// gpu/convert_safetensors.py followed by gpu/convert_checkpoint.py writes
// them (formats-2026.md §6 and table A4).
//
// Keys and shapes (HF [out, in]; 2B-4T figures): per layer i,
// layers.i.attention.wqkv.weight ([q; k; v] rows, q and k permuted from
// Hugging Face's half-rotation order to interleaved rope pairs, permuteRows),
// layers.i.attention.wo.weight, layers.i.feed_forward.w13.weight ([gate;
// up]), layers.i.feed_forward.w2.weight, the norms attention_norm, ffn_norm,
// attention.attn_sub_norm, feed_forward.ffn_sub_norm; then tok_embeddings,
// output (the tied embedding) and norm. In the fp16 file a matrix is bf16
// [N, K]; in the int2 file it is int8 [N, K/4] (PackInt2, Int2Address) with
// a bf16 weight_scale of 4 (ScaleLayout main) or 6 (PR #316) entries.
//
// Ternarization of bf16 master weights is QuantizeBF16 (per sub-matrix, in
// bf16, torch ≥ 2.2's mean); codes read from a GGUF or a packed checkpoint
// are kept, their scale rounded once to bf16 (FromCodes). The files are
// written by package torchpt.
//
// Panics are programmer errors (lengths that do not match a shape) and
// carry the prefix "gpupack: "; data errors are returned.
package gpupack
