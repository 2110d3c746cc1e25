// Package writer writes GGUF v3 files in one streaming pass.
//
// New takes the complete metadata (KVs, in the order given) and tensor-info
// list up front, computes every tensor's data offset in 64-bit arithmetic,
// and writes the header (in pieces of about 64 KiB as it is encoded); the
// caller then streams each tensor's bytes in order with WriteTensor,
// WriteTensorFrom or WriteTensorChunks. Nothing is held in memory but the
// caller's data, so the output can go through an atomicfile temp file.
//
// Layout (ggml's gguf.c and gguf-py's GGUFWriter agree on it):
//
//	"GGUF" u32 version=3 | u64 n_tensors | u64 n_kv
//	n_kv × (string key | u32 value type | value)
//	n_tensors × (string name | u32 n_dims | n_dims × u64 ne | u32 type | u64 offset)
//	zero padding to the alignment
//	tensor data, each tensor followed by zero padding to the alignment
//	(the last one included)
//
// A string is a u64 byte length and the bytes (no NUL); an array is a u32
// element type, a u64 count and the elements; a bool is one byte. All numbers
// are little-endian. Tensor shapes are in GGUF ne order (ne[0] fastest).
//
// The Writer issues one Write per tensor (per piece with
// WriteTensorChunks) and one per padding run, so large tensors go to an
// *os.File without a copy; for many small tensors wrap it in a bufio.Writer
// (and flush it after Close).
//
// A duplicate key is refused (the reference converter once wrote
// general.architecture twice, which the loader then refused: llama.cpp PR
// #4062, our BR-27).
package writer
