//go:build !purego

package kernels

// The row-range kernels run in assembly with AVX2 and FMA; where the CPU
// has them (useVNNI, hasGFNI) TQ2_0 and Q2_0 take AVX-512 VNNI and GFNI
// kernels and IQ2_BN an AVX-512 VNNI one, with the same results. A row
// whose assembly result is a NaN is recomputed by the reference (FMA32 and the
// hardware may pick different NaN payloads), as dotQ2_0 and accTQ do.

func accTQRows(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	if !useFMA {
		accTQRowsRef(dst, rows, rowB, q, bsums, d, fused, tq1)
		return
	}
	switch {
	case tq1:
		accTQ1_0RowsAVX2(dst, rows, rowB, q, bsums, d, fused)
	case useVNNI && hasGFNI:
		accTQ2_0RowsZ(dst, rows, rowB, q, bsums, d, fused)
	default:
		accTQ2_0RowsAVX2(dst, rows, rowB, q, bsums, d, fused)
	}
	for r, v := range dst {
		if v != v {
			accTQRowsRef(dst[r:r+1], rows[r*rowB:(r+1)*rowB], rowB, q, bsums, d, fused, tq1)
		}
	}
}

// tqPairsStack is the number of blocks per row whose bsums pairs
// accTQ2_0RowsZ keeps on the stack (K ≤ 32768).
const tqPairsStack = 128

// accTQ2_0RowsZ runs accTQ2_0RowsVNNI, which takes each block's bsums as
// the eight negated pair sums −(bsums[16b+2L] + bsums[16b+2L+1]) (exact in
// int32) computed here once per call.
func accTQ2_0RowsZ(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused bool) {
	nb := rowB / tq2Bytes
	var buf [8 * tqPairsStack]int32
	pairs := buf[:]
	if nb > tqPairsStack {
		pairs = make([]int32, 8*nb)
	}
	pairs = pairs[:8*nb]
	for i := range pairs {
		pairs[i] = -(int32(bsums[2*i]) + int32(bsums[2*i+1]))
	}
	accTQ2_0RowsVNNI(dst, rows, rowB, q, pairs, d, fused)
}

func dotIQ2BNRows(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32) {
	if !useFMA {
		dotIQ2BNRowsRef(dst, rows, rowB, q, d, minus)
		return
	}
	if useVNNI {
		dotIQ2BNRowsVNNI(dst, rows, rowB, q, d, minus)
	} else {
		dotIQ2BNRowsAVX2(dst, rows, rowB, q, d, minus)
	}
	for r, v := range dst {
		if v != v {
			dotIQ2BNRowsRef(dst[r:r+1], rows[r*rowB:(r+1)*rowB], rowB, q, d, minus)
		}
	}
}

func iq2bnBatch8() bool { return useFMA && useVNNI }

// dotIQ2BNRowsBatch runs eight tokens through dotIQ2BNRows8VNNI where the
// CPU has it, a NaN result again through the one-token kernel (whose NaN
// path is the reference's), and any other batch one token at a time.
func dotIQ2BNRowsBatch(dst []float32, rows []byte, rowB int, q []int8, d, minus [][4]float32) {
	if len(d) != 8 || !iq2bnBatch8() {
		dotIQ2BNRowsBatchRef(dst, rows, rowB, q, d, minus)
		return
	}
	var dm [64]float32
	for t := range 8 {
		copy(dm[8*t:8*t+4], d[t][:])
		copy(dm[8*t+4:8*t+8], minus[t][:])
	}
	k := 4 * (rowB - 4)
	dotIQ2BNRows8VNNI(dst, rows, rowB, q, k, &dm)
	for i, v := range dst {
		if v != v {
			r, t := i/8, i%8
			dotIQ2BNRows(dst[i:i+1], rows[r*rowB:(r+1)*rowB], rowB, q[t*k:(t+1)*k], &d[t], &minus[t])
		}
	}
}

func dotQ2_0Rows(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32) {
	if !useFMA {
		dotQ2_0RowsRef(dst, rows, rowB, qp, qsum, d)
		return
	}
	n16 := 0
	if useVNNI && hasGFNI {
		// Sixteen rows per ZMM register, the float chains in its lanes;
		// the last len(dst) mod 16 rows take the AVX2 kernels.
		n16 = len(dst) &^ 15
		if n16 > 0 {
			dotQ2_0RowsAVX512(dst[:n16], rows, rowB, qp, qsum, d)
		}
	}
	if n16 < len(dst) {
		dotQ2_0RowsPairs(dst[n16:], rows[n16*rowB:], rowB, qp, qsum, d)
	}
	for r, v := range dst {
		if v != v {
			dotQ2_0RowsRef(dst[r:r+1], rows[r*rowB:(r+1)*rowB], rowB, qp, qsum, d)
		}
	}
}

// dotQ2_0RowsPairs is the AVX2 form of dotQ2_0Rows: pairs of rows
// interleave their float chains; an odd last row takes the one-row loop.
func dotQ2_0RowsPairs(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32) {
	even := len(dst) &^ 1
	if even > 0 {
		dotQ2_0Rows2AVX2(dst[:even], rows, rowB, qp, qsum, d)
	}
	if even < len(dst) {
		dotQ2_0RowsAVX2(dst[even:], rows[even*rowB:], rowB, qp, qsum, d)
	}
}
