//go:build purego || !amd64

package kernels

func accTQRows(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	accTQRowsRef(dst, rows, rowB, q, bsums, d, fused, tq1)
}

func dotIQ2BNRows(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32) {
	dotIQ2BNRowsRef(dst, rows, rowB, q, d, minus)
}

func dotQ2_0Rows(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32) {
	dotQ2_0RowsRef(dst, rows, rowB, qp, qsum, d)
}

func dotIQ2BNRowsBatch(dst []float32, rows []byte, rowB int, q []int8, d, minus [][4]float32) {
	dotIQ2BNRowsBatchRef(dst, rows, rowB, q, d, minus)
}

func iq2bnBatch8() bool { return false }
