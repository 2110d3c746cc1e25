package kernels

import "math"

// Row-range forms of the ternary kernels (ternary.go): one call computes
// the results of len(dst) consecutive rows of rowB bytes against one
// prepared activation, so a matrix-vector product costs one call per range
// of rows instead of one per row. Each dst[r] equals the one-row function
// on row r, bit for bit (TestTernaryRowsMatchRow).

// AccTQ2_0Rows writes, for each row r of the len(dst) consecutive TQ2_0
// rows of rowB bytes in rows (rowB a multiple of 66), the row's AccTQ2_0
// lanes from zero reduced as hsum_float_8 ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)),
// i.e. ggml_vec_dot_tq2_0_q8_K's AVX2 result, into dst[r]. q, bsums, d are
// the Q8_K activation (AccTQ2_0). It panics if rowB is not a positive
// multiple of 66, len(rows) < len(dst)·rowB, or the activation is shorter
// than a row.
func AccTQ2_0Rows(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused bool) {
	checkTQRows(dst, rows, rowB, q, bsums, d, tq2Bytes)
	if len(dst) > 0 {
		accTQRows(dst, rows, rowB, q, bsums, d, fused, false)
	}
}

// AccTQ1_0Rows is AccTQ2_0Rows for TQ1_0 rows (rowB a multiple of 54):
// ggml_vec_dot_tq1_0_q8_K's AVX2 result per row (AccTQ1_0, then
// hsum_float_8).
func AccTQ1_0Rows(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused bool) {
	checkTQRows(dst, rows, rowB, q, bsums, d, tq1Bytes)
	if len(dst) > 0 {
		accTQRows(dst, rows, rowB, q, bsums, d, fused, true)
	}
}

func checkTQRows(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, blockBytes int) {
	nb := rowB / blockBytes
	if rowB <= 0 || rowB%blockBytes != 0 || len(rows) < len(dst)*rowB || len(q) < 256*nb || len(bsums) < 16*nb || len(d) < nb {
		panic("kernels: AccTQ*Rows length mismatch")
	}
}

// hsumF8 is hsum_float_8: (a0+a4 + a2+a6) + (a1+a5 + a3+a7) in that order.
func hsumF8(a *[8]float32) float32 {
	b0, b1, b2, b3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return (b0 + b2) + (b1 + b3)
}

// accTQRowsRef is AccTQ1_0Rows (tq1) / AccTQ2_0Rows in Go.
func accTQRowsRef(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	for r := range dst {
		var acc [8]float32
		accTQRef(&acc, rows[r*rowB:(r+1)*rowB], q, bsums, d, fused, tq1)
		dst[r] = hsumF8(&acc)
	}
}

// DotIQ2BNRows writes, for each of the len(dst) consecutive IQ2_BN rows
// of rowB bytes in rows (an f32 row scale, then (rowB − 4)/16 blocks of
// SumsIQ2BN's layout), the product with a Q8_K64 activation (codes q,
// group scales d, group offsets minus = d_g·Σq of the group) as
// ik_llama.cpp's mul_mat_iq2bn_q8_K64 (ggml/src/iqk/iqk_gemm_1bit.cpp,
// AVX2) finishes it: with S_g = SumsIQ2BN's group sums, v_g =
// fma(d_g, float32(S_g), −minus_g), then scale·((v_0 + v_2) + (v_1 + v_3)).
// The sums are exact integers, so the AVX-512 VNNI kernel (VPDPBUSD in
// 512-bit lanes, where the CPU has it) and the AVX2 one give the same
// results. It panics if rowB − 4 is not a positive multiple of 16, len(rows) <
// len(dst)·rowB or len(q) < 4·(rowB − 4).
func DotIQ2BNRows(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32) {
	if rowB <= 4 || (rowB-4)%iq2bnBytes != 0 || len(rows) < len(dst)*rowB || len(q) < 4*(rowB-4) {
		panic("kernels: DotIQ2BNRows length mismatch")
	}
	if len(dst) > 0 {
		dotIQ2BNRows(dst, rows, rowB, q, d, minus)
	}
}

// DotIQ2BNRowsBatch writes, for each of the nr = len(dst)/T consecutive
// IQ2_BN rows of rows and each of the T = len(d) tokens, DotIQ2BNRows'
// result into dst[r·T + t], bit for bit: token t's Q8_K64 codes are
// q[t·k : (t+1)·k] with k = 4·(rowB − 4), its group scales d[t] and its
// group offsets minus[t]. It is the prompt's product: where IQ2BNBatch8
// reports true, eight tokens share each decoded block (AVX-512 VNNI);
// otherwise each token takes DotIQ2BNRows. It panics if len(minus) !=
// len(d), len(dst) is not a multiple of len(d), rowB − 4 is not a
// positive multiple of 16, or rows or q are too short.
func DotIQ2BNRowsBatch(dst []float32, rows []byte, rowB int, q []int8, d, minus [][4]float32) {
	T := len(d)
	if T == 0 || len(minus) != T || len(dst)%T != 0 || rowB <= 4 || (rowB-4)%iq2bnBytes != 0 ||
		len(rows) < len(dst)/T*rowB || len(q) < T*4*(rowB-4) {
		panic("kernels: DotIQ2BNRowsBatch length mismatch")
	}
	if len(dst) > 0 {
		dotIQ2BNRowsBatch(dst, rows, rowB, q, d, minus)
	}
}

// IQ2BNBatch8 reports whether DotIQ2BNRowsBatch has a kernel that shares
// each decoded block between eight tokens on this CPU (batches of eight
// tokens are then worth forming).
func IQ2BNBatch8() bool { return iq2bnBatch8() }

// dotIQ2BNRowsBatchRef is DotIQ2BNRowsBatch through DotIQ2BNRows, one
// token and one row at a time.
func dotIQ2BNRowsBatchRef(dst []float32, rows []byte, rowB int, q []int8, d, minus [][4]float32) {
	T, k := len(d), 4*(rowB-4)
	for r := 0; r < len(dst)/T; r++ {
		for t := range T {
			dotIQ2BNRows(dst[r*T+t:r*T+t+1], rows[r*rowB:(r+1)*rowB], rowB, q[t*k:(t+1)*k], &d[t], &minus[t])
		}
	}
}

// dotIQ2BNRowsRef is DotIQ2BNRows in Go.
func dotIQ2BNRowsRef(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32) {
	for r := range dst {
		row := rows[r*rowB : (r+1)*rowB]
		var s [4]int32
		sumsIQ2BNRef(&s, row[4:], q)
		var v [4]float32
		for g := range v {
			v[g] = fma32(-minus[g], d[g], float32(s[g]))
		}
		scale := math.Float32frombits(uint32(row[0]) | uint32(row[1])<<8 | uint32(row[2])<<16 | uint32(row[3])<<24)
		dst[r] = scale * ((v[0] + v[2]) + (v[1] + v[3]))
	}
}

// PermuteQ2_0 prepares a Q8_0 activation (codes q, len a multiple of 64)
// for DotQ2_0Rows: in each 64-code block i, qp[64i + 16s + j] = q[64i +
// 4j + s] (the code under weight 4j + s, whose 2-bit code sits at bits 2s
// of the Q2_0 block's byte j), and qsum[2i + k] = Σ q[64i + 32k …
// 64i + 32k + 31]. It panics if len(q) is not a multiple of 64, len(qp) <
// len(q) or len(qsum) < len(q)/32.
func PermuteQ2_0(qp []int8, qsum []int32, q []int8) {
	if len(q)%64 != 0 || len(qp) < len(q) || len(qsum) < len(q)/32 {
		panic("kernels: PermuteQ2_0 length mismatch")
	}
	for i := 0; i < len(q)/64; i++ {
		src := q[64*i : 64*i+64 : 64*i+64]
		dst := qp[64*i : 64*i+64 : 64*i+64]
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			for s := 0; s < 4; s++ {
				dst[16*s+j] = src[4*j+s]
			}
		}
		for j := 0; j < 32; j++ {
			s0 += int32(src[j])
			s1 += int32(src[32+j])
		}
		qsum[2*i], qsum[2*i+1] = s0, s1
	}
}

// DotQ2_0Rows writes DotQ2_0(row_r, q, d) for each of the len(dst)
// consecutive Q2_0 rows of rowB bytes in rows (rowB a multiple of 18),
// bit for bit, from the activation as PermuteQ2_0 prepared it (qp, qsum)
// and the Q8_0 block scales d. It panics if rowB is not a positive
// multiple of 18, len(rows) < len(dst)·rowB, len(qp) < 64·blocks or
// len(qsum), len(d) < 2·blocks.
func DotQ2_0Rows(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32) {
	nb := rowB / q2_0Bytes
	if rowB <= 0 || rowB%q2_0Bytes != 0 || len(rows) < len(dst)*rowB || len(qp) < 64*nb || len(qsum) < 2*nb || len(d) < 2*nb {
		panic("kernels: DotQ2_0Rows length mismatch")
	}
	if len(dst) > 0 {
		dotQ2_0Rows(dst, rows, rowB, qp, qsum, d)
	}
}

// dotQ2_0RowsRef is DotQ2_0Rows in Go: the permuted codes' Σ c·q per half
// minus the half's Σq, then dotQ2_0Ref's float steps.
func dotQ2_0RowsRef(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32) {
	nb := rowB / q2_0Bytes
	for r := range dst {
		row := rows[r*rowB : (r+1)*rowB]
		var sumf float32
		for i := 0; i < nb; i++ {
			blk := row[q2_0Bytes*i : q2_0Bytes*(i+1)]
			qb := qp[64*i : 64*i+64 : 64*i+64]
			var sums [2]int32
			for j, c := range blk[2:] {
				v := int32(c&3)*int32(qb[j]) + int32(c>>2&3)*int32(qb[16+j]) +
					int32(c>>4&3)*int32(qb[32+j]) + int32(c>>6)*int32(qb[48+j])
				sums[j/8] += v
			}
			dx := f16Table[uint16(blk[0])|uint16(blk[1])<<8]
			var sumi float32
			for k := 0; k < 2; k++ {
				sumi = fma32(sumi, d[2*i+k], float32(sums[k]-qsum[2*i+k]))
			}
			sumf = fma32(sumf, dx, sumi)
		}
		dst[r] = sumf
	}
}
