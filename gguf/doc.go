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
//
// The 2026 type-id map (layouts.go): mainline's Q2_0 (42, 64-weight blocks)
// shares its id with PrismML's legacy g128 Q2_0 (TypeQ2_0G128), and Prism's
// PQ2_0 (142) and PTQ1_0 (143) follow. Ids 40–42, 142 and 143 are decided
// per tensor by ResolveLayout from the tensor's span (its size padded to the
// alignment must fill the bytes to the next tensor); a span no documented
// layout fits gives LayoutUnknown, one that several fit a note (the reader's
// File.Layouts), never a guess from the id alone.
package gguf
