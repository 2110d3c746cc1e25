//go:build purego || !amd64

package kernels

func i2sBatchAccelerated() bool { return false }

func dotI2SBatch(sums []int32, rows []byte, rowB, nb int, xt []int8) {
	dotI2SBatchRef(sums, rows, rowB, nb, xt)
}

func expSub(dst, src []float32, m float32) { expSubRef(dst, src, m) }
