//go:build !purego

package kernels

// Every arm64 CPU has NEON (Advanced SIMD), so the NEON kernels need no
// detection. They use SMLAL rather than SDOT for the I2_S dot even where
// golang.org/x/sys/cpu reports SDOT (ARM64.HasASIMDDP): the reference's
// int16 lanes wrap per pair of byte positions, and SDOT's 4-byte int32 sums
// can only reproduce that with twice the instructions (two masked SDOTs and
// a 16-bit wrap per lane pair), which is no faster than SMLAL/SMLAL2.

func impl() string { return "arm64 NEON assembly" }

func accelerated() bool { return true }

func dotI2S(row []byte, q []int8) int32 { return dotI2SNEON(row, q) }

// dotI2S4 has no NEON version of its own: four NEON dots.
func dotI2S4(row []byte, q0, q1, q2, q3 []int8) [4]int32 {
	return [4]int32{dotI2SNEON(row, q0), dotI2SNEON(row, q1), dotI2SNEON(row, q2), dotI2SNEON(row, q3)}
}

func dotI2SRows(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32) {
	dotI2SRowsNEON(dst, rows, rowB, q, sumf, s, scale)
}

func dotF16Body(w []uint16, x []float32) float32 { return dotF16NEON(w, x) }

func dotF16Rows(dst []float32, w []uint16, x []float32) { dotF16RowsNEON(dst, w, x) }

func absMaxBits(x []float32) uint32 { return absMaxBitsNEON(x) }

func quantI8S(dst []int8, x []float32, scale float32) int32 { return quantI8SNEON(dst, x, scale) }

// The TQ1_0, TQ2_0, Q2_0, IQ1_BN and IQ2_BN integer sums have no NEON
// versions yet: the pure-Go references.
func sumsQ2_0(sums []int32, row []byte, q []int8)    { sumsQ2_0Ref(sums, row, q) }
func sumsIQ2BN(s *[4]int32, blocks []byte, q []int8) { sumsIQ2BNRef(s, blocks, q) }
func sumsIQ1BN(s *[4]int32, blocks []byte, q []int8) { sumsIQ1BNRef(s, blocks, q) }
func lanesTQ2_0(lanes []int32, row []byte, q []int8) { lanesTQ2_0Ref(lanes, row, q) }
func lanesTQ1_0(lanes []int32, row []byte, q []int8) { lanesTQ1_0Ref(lanes, row, q) }

func ternaryAccelerated() bool { return false }

func dotQ2_0(row []byte, q []int8, d []float32) float32 { return dotQ2_0Ref(row, q, d) }
func accTQ(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	accTQRef(acc, row, q, bsums, d, fused, tq1)
}

func accQ8_0(acc *[8]float32, row []byte, q []int8, d []float32) { accQ8_0Ref(acc, row, q, d) }
func accQ6K(acc *[8]float32, row []byte, q []int8, d []float32)  { accQ6KRef(acc, row, q, d) }
