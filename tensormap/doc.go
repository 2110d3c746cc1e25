// Package tensormap maps Hugging Face tensor names to GGUF tensor names with
// tables, one per architecture family, as data rather than code.
//
// A Table is a list of rules "HF pattern → GGUF template" where the pattern
// may hold the placeholder {bid} for the block (layer) index, e.g.
// "model.layers.{bid}.self_attn.q_proj" → "blk.{bid}.attn_q". The suffix after
// the matched stem (".weight", ".bias") is kept. Names that match no rule are
// reported, never silently dropped.
//
// Each rule also carries the tensor's Class (projection, norm, embedding, …),
// which the converters' type policy tables key on.
//
// The BitNet names follow bitnet.cpp's convert-hf-to-gguf-bitnet.py and its
// gguf-py tensor map (merge-dev 406a5036); the embedding-model names follow
// convert-bitnet-embedding-to-gguf.py (microsoft/BitNet 16da220). See
// spec conversion.md §5.5.
package tensormap
