//go:build !purego

package kernels

// The NEON kernels of kernels_arm64.s (preconditions as for the amd64 ones).

// dotI2SNEON returns Σ code·q for the I2_S row; len(row) is a multiple of 32 and len(q) ≥ 4·len(row).
//
//go:noescape
func dotI2SNEON(row []byte, q []int8) int32

// dotF16NEON returns the reduced 8×4 accumulators of ggml's vec_dot_f16 over len(w) elements (a multiple of 32); len(x) ≥ len(w).
//
//go:noescape
func dotF16NEON(w []uint16, x []float32) float32

// absMaxBitsNEON returns max_k bits(x_k) & 0x7fffffff over len(x) elements (a multiple of 32).
//
//go:noescape
func absMaxBitsNEON(x []float32) uint32

// quantI8SNEON quantizes len(x) elements (a multiple of 16, all finite) of x with scale into dst (len(dst) ≥ len(x)) and returns the sum of the codes.
//
//go:noescape
func quantI8SNEON(dst []int8, x []float32, scale float32) int32

// dotI2SRowsNEON writes the I2_S dot product of each of len(dst) consecutive rows of rowB bytes (a multiple of 32, > 0) with q (len(q) ≥ 4·rowB), with bitnet.cpp's epilogue, into dst; len(rows) ≥ len(dst)·rowB.
//
//go:noescape
func dotI2SRowsNEON(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32)

// dotF16RowsNEON writes dotF16NEON of each of len(dst) consecutive rows of len(x) weights (a multiple of 32, > 0) into dst; len(w) ≥ len(dst)·len(x).
//
//go:noescape
func dotF16RowsNEON(dst []float32, w []uint16, x []float32)
