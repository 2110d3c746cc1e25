// Package gguf holds what the GGUF reader and writer share: the ggml tensor
// type table (block size and bytes per block, as data), the GGUF metadata
// value types, and the llama file-type numbers.
//
// Conventions: tensor shapes are given in GGUF ne order (ne[0] is the
// fastest-varying dimension, so a Hugging Face [out, in] matrix has
// ne = [in, out]). Sizes are in bytes and computed in uint64 with overflow
// checks; functions that can overflow return an error rather than wrapping.
//
// The type ids and sizes follow ggml as built by bitnet.cpp (microsoft/BitNet
// c82b5e66 with its llama.cpp fork at 406a5036): I2_S is 36, TL1 38, TL2 39.
package gguf
