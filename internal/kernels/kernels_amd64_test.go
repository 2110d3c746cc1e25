//go:build !purego

package kernels

import "testing"

// TestAVX2WithoutAVX512: on a CPU with AVX-512 the comparisons with the
// references run once more with the AVX-512 kernels switched off, so the
// AVX2 kernels they replace stay tested there too.
func TestAVX2WithoutAVX512(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 here: the other tests already run the AVX2 kernels")
	}
	useAVX512 = false
	defer func() { useAVX512 = true }()
	t.Run("DotI2SRows", TestDotI2SRowsMatchesReference)
}

// BenchmarkDotI2SRowsAVX2 is BenchmarkDotI2SRows with the AVX-512 kernel
// switched off (the AVX2 figures on an AVX-512 machine).
func BenchmarkDotI2SRowsAVX2(b *testing.B) {
	saved := useAVX512
	useAVX512 = false
	defer func() { useAVX512 = saved }()
	BenchmarkDotI2SRows(b)
}

// TestPromptKernelsWithoutVNNI runs the batched I2_S, ExpSub and
// row-range IQ2_BN tests with their AVX-512 kernels switched off (the
// references, or for IQ2_BN the AVX2 kernel, they fall back to on CPUs
// without AVX-512 VNNI).
func TestPromptKernelsWithoutVNNI(t *testing.T) {
	if !useVNNI {
		t.Skip("no AVX-512 VNNI here: the other tests already run the fallbacks")
	}
	useVNNI = false
	defer func() { useVNNI = true }()
	t.Run("DotI2SBatch", TestDotI2SBatchMatchesReference)
	t.Run("ExpSub", TestExpSubMatchesExp)
	t.Run("DotQ2_0Rows", TestDotQ2_0RowsCounts)
	t.Run("TernaryRows", TestTernaryRowsMatchRow)
}

// BenchmarkAccTQ2_0RowsAVX2 is BenchmarkAccTQ2_0Rows with the AVX-512
// kernel switched off (the AVX2 figures on an AVX-512 machine).
func BenchmarkAccTQ2_0RowsAVX2(b *testing.B) {
	saved := useVNNI
	useVNNI = false
	defer func() { useVNNI = saved }()
	BenchmarkAccTQ2_0Rows(b)
}

// BenchmarkDotIQ2BNRowsAVX2 is BenchmarkDotIQ2BNRows with the AVX-512
// VNNI kernel switched off (the AVX2 figures on an AVX-512 machine).
func BenchmarkDotIQ2BNRowsAVX2(b *testing.B) {
	saved := useVNNI
	useVNNI = false
	defer func() { useVNNI = saved }()
	BenchmarkDotIQ2BNRows(b)
}

// BenchmarkDotQ2_0RowsAVX2 is BenchmarkDotQ2_0Rows with the AVX-512
// kernel switched off (the AVX2 figures on an AVX-512 machine).
func BenchmarkDotQ2_0RowsAVX2(b *testing.B) {
	saved := useVNNI
	useVNNI = false
	defer func() { useVNNI = saved }()
	BenchmarkDotQ2_0Rows(b)
}
