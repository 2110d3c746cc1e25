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

// q2NEON computes the two half sums Σ(c − 1)·q of each 18-byte Q2_0 block of row (len(row) a positive multiple of 18; len(q) ≥ 64·blocks): with d nil it stores them to sums (len ≥ 2·blocks) and returns 0; otherwise (len(d) ≥ 2·blocks, sums unused) it returns dotQ2_0Ref's float result.
//
//go:noescape
func q2NEON(row []byte, q []int8, sums []int32, d []float32) float32

// sumsIQ2BNNEON stores the four group sums Σ c·q of the IQ2_BN blocks (len(blocks) a positive multiple of 16) in s; len(q) ≥ 4·len(blocks).
//
//go:noescape
func sumsIQ2BNNEON(s *[4]int32, blocks []byte, q []int8)

// sumsIQ1BNNEON stores the four group sums Σ digit·q of the IQ1_BN blocks (len(blocks) a positive multiple of 13) in s; len(q) ≥ 64·len(blocks)/13.
//
//go:noescape
func sumsIQ1BNNEON(s *[4]int32, blocks []byte, q []int8)

// tq2NEON computes the eight int32 lanes of each 66-byte TQ2_0 block of row (len(row) a positive multiple of 66; len(q) ≥ 256·blocks): mode 0 stores them to lanes (len ≥ 8·blocks); modes 1 (unfused) and 2 (fused) add them to acc as accTQRef does instead (len(bsums) ≥ 16·blocks, len(d) ≥ blocks).
//
//go:noescape
func tq2NEON(row []byte, q []int8, lanes []int32, acc *[8]float32, bsums []int16, d []float32, mode int)

// tq1NEON is tq2NEON for 54-byte TQ1_0 blocks.
//
//go:noescape
func tq1NEON(row []byte, q []int8, lanes []int32, acc *[8]float32, bsums []int16, d []float32, mode int)

// accQ8_0NEON adds the float lanes of each Q8_0 block of row (len(row) a positive multiple of 34) to acc as accQ8_0Ref does; len(q) ≥ 32·blocks, len(d) ≥ blocks.
//
//go:noescape
func accQ8_0NEON(acc *[8]float32, row []byte, q []int8, d []float32)

// accQ6KNEON adds the float lanes of each Q6_K block of row (len(row) a positive multiple of 210) to acc as accQ6KRef does; len(q) ≥ 256·blocks, len(d) ≥ blocks.
//
//go:noescape
func accQ6KNEON(acc *[8]float32, row []byte, q []int8, d []float32)
