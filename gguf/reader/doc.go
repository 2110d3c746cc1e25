// Package reader parses GGUF files (versions 2 and 3) without trusting them.
//
// Open maps the file read-only (internal/osx.Map: mmap on Unix,
// MapViewOfFile on Windows; a file that cannot be mapped is read with ReadAt
// when it is at most osx.ReadFallbackLimit bytes) and Parse reads from memory; both decode the header, every metadata value (arrays
// into Go slices: []string, []int32, []float32, []uint8, …) and the
// tensor-info table, and validate before anything is allocated:
//
//   - every count and length is bounded by the bytes that remain, so a header
//     claiming 2^60 KVs or a 2^60-byte string fails at once;
//   - every size is computed in 64-bit arithmetic with overflow checks
//     (gguf.NBytes), so ne = [4, 2^30−1, 2^30+1, 1] F32 (2^64−16 bytes) is
//     rejected (llama.cpp #26978, our BR-28);
//   - tensor offsets are multiples of the alignment, every tensor lies inside
//     the file, and no two tensors overlap;
//   - duplicate keys and tensor names are rejected, as ggml's loader does.
//
// Tensor types come from the gguf type table, which includes bitnet.cpp's
// I2_S (36), TL1 (38) and TL2 (39); TensorData returns exactly NBytes bytes
// (for I2_S: n/4 packed bytes, the float32 scale and 28 tail bytes).
//
// Errors carry context from the outside in, e.g.
// "gguf model.gguf: read tensor info 3 (blk.0.attn_q.weight): ne[1]: unexpected EOF";
// the sentinels (ErrBadMagic, ErrTruncated, gguf.ErrOverflow, …) are testable
// with errors.Is. Shapes are in GGUF ne order.
//
// A File is safe for concurrent reads (Get, Tensor, TensorData) from many
// goroutines; Close must not race with them. The mapping is read-only and
// shared: if another process truncates the file while it is mapped, touching
// the lost pages faults (SIGBUS), as with any mmap reader.
package reader
