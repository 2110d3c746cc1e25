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

// dotF16Rows takes the NEON kernel of consecutive rows once per row when
// the rows are further apart.
func dotF16Rows(dst []float32, w []uint16, stride int, x []float32) {
	k := len(x)
	if stride == k {
		dotF16RowsNEON(dst, w, x)
		return
	}
	for r := range dst {
		dotF16RowsNEON(dst[r:r+1], w[r*stride:r*stride+k], x)
	}
}

func absMaxBits(x []float32) uint32 { return absMaxBitsNEON(x) }

func quantI8S(dst []int8, x []float32, scale float32) int32 { return quantI8SNEON(dst, x, scale) }

// The TQ1_0, TQ2_0, Q2_0, IQ1_BN and IQ2_BN sums and the Q8_0 and Q6_K
// head accumulations in NEON. Those with float steps take the reference's
// result wherever the kernel's holds a NaN: the fused multiply-adds round
// every other result as FMA32 does, but NaN payloads may differ.

func sumsQ2_0(sums []int32, row []byte, q []int8)    { q2NEON(row, q, sums, nil) }
func sumsIQ2BN(s *[4]int32, blocks []byte, q []int8) { sumsIQ2BNNEON(s, blocks, q) }
func sumsIQ1BN(s *[4]int32, blocks []byte, q []int8) { sumsIQ1BNNEON(s, blocks, q) }
func lanesTQ2_0(lanes []int32, row []byte, q []int8) { tq2NEON(row, q, lanes, nil, nil, nil, 0) }
func lanesTQ1_0(lanes []int32, row []byte, q []int8) { tq1NEON(row, q, lanes, nil, nil, nil, 0) }

func ternaryAccelerated() bool { return true }

func dotQ2_0(row []byte, q []int8, d []float32) float32 {
	if r := q2NEON(row, q, nil, d); r == r {
		return r
	}
	return dotQ2_0Ref(row, q, d)
}

func accTQ(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	mode := 1
	if fused {
		mode = 2
	}
	a := *acc
	if tq1 {
		tq1NEON(row, q, nil, &a, bsums, d, mode)
	} else {
		tq2NEON(row, q, nil, &a, bsums, d, mode)
	}
	if !hasNaN(&a) {
		*acc = a
		return
	}
	accTQRef(acc, row, q, bsums, d, fused, tq1)
}

func accQ8_0(acc *[8]float32, row []byte, q []int8, d []float32) {
	a := *acc
	accQ8_0NEON(&a, row, q, d)
	if !hasNaN(&a) {
		*acc = a
		return
	}
	accQ8_0Ref(acc, row, q, d)
}

func accQ6K(acc *[8]float32, row []byte, q []int8, d []float32) {
	a := *acc
	accQ6KNEON(&a, row, q, d)
	if !hasNaN(&a) {
		*acc = a
		return
	}
	accQ6KRef(acc, row, q, d)
}
