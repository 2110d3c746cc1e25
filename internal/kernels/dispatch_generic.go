//go:build purego || !(amd64 || arm64)

package kernels

func impl() string { return "pure Go" }

func accelerated() bool { return false }

func dotI2S(row []byte, q []int8) int32 { return dotI2SRef(row, q) }
func dotI2S4(row []byte, q0, q1, q2, q3 []int8) [4]int32 {
	return dotI2S4Ref(row, q0, q1, q2, q3)
}
func dotI2SRows(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32) {
	dotI2SRowsRef(dst, rows, rowB, q, sumf, s, scale)
}
func dotF16Body(w []uint16, x []float32) float32 { return dotF16BodyRef(w, x) }
func dotF16Rows(dst []float32, w []uint16, stride int, x []float32) {
	dotF16RowsRef(dst, w, stride, x)
}
func absMaxBits(x []float32) uint32                         { return absMaxBitsRef(x) }
func quantI8S(dst []int8, x []float32, scale float32) int32 { return quantI8SRef(dst, x, scale) }

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
