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
//
// Mainline ggml (llama.cpp, ik_llama.cpp) gives id 39 to MXFP4 and has
// NVFP4 = 40 and Q1_0 = 41. The table names all three (sizes from llama.cpp
// ggml/src/ggml.c type_traits and ggml-common.h); id 39 is decided per
// tensor by ResolveCollision (TL2 only in a BitNet arch and when the TL2 size
// fits before the next tensor). general.file_type 40 is I2_S in bitnet.cpp
// but Q1_0 in mainline llama.h (FileTypeName). The runtime refuses these
// types; they are never written.
package gguf
