//go:build purego || !amd64

package kernels

// The kernels below have assembly on amd64 only: every other build (arm64
// included, and the purego tag everywhere) runs their pure-Go references.
// The F16 conversions and SiLU are per-token work of the runtime; the rest
// are the converter's kernels, whose speed target is on amd64.

func f32ToF16(dst []uint16, src []float32) { f32ToF16Ref(dst, src) }

func roundF16s(dst, src []float32) { roundF16sRef(dst, src) }

func ropeNeoxGroups(x, cos, sin []float32) { ropeNeoxPairs(x, cos, sin, 0, len(cos)) }

// siluGroups does no group: SiLU runs its reference.
func siluGroups([]float32) int { return 0 }

func fma32Acc(acc, b []float32, c float32) { fma32AccRef(acc, b, c) }

func addAbs4x8(acc *[32]float32, x []float32)          { addAbs4x8Ref(acc, x) }
func decodeBF16(dst []float32, raw []byte) bool        { return decodeBF16Ref(dst, raw) }
func packI2S(dst []byte, t []int8) bool                { return packI2SRef(dst, t) }
func ternarize(dst []int8, x []float32, inv float32)   { ternarizeRef(dst, x, inv) }
func bf16ToF16(out, raw []byte) bool                   { return bf16ToF16Ref(out, raw) }
func unpackU8(codes []int8, stride int, packed []byte) { unpackU8Ref(codes, stride, packed) }
func absSumBF16Blocks(sums []float32, raw []byte, blockLen int) bool {
	return absSumBF16BlocksRef(sums, raw, blockLen)
}

func ternarizePackI2S(dst, raw []byte, inv float32) { ternarizePackI2SRef(dst, raw, inv) }

func attnKQIK(s []float32, sStride int, k []uint16, stride, n int, q []float32, g int) {
	attnKQIKRef(s, sStride, k, stride, n, q, g)
}

func attnPVIK(out []float32, v []uint16, stride int, p []float32, pStride, n, g int) {
	attnPVIKRef(out, v, stride, p, pStride, n, g)
}

func absMaxQ8K64(x []float32) [4]uint32 { return absMaxQ8K64Ref(x) }

func quantQ8K64(q []int8, x []float32, id *[4]float32) [4]int32 {
	return quantQ8K64Ref(q, x, id)
}

func mulScaled(dst, x, w []float32, scale float32) { mulScaledRef(dst, x, w, scale) }

func scaleMul(dst, x, w []float32, scale float32) { scaleMulRef(dst, x, w, scale) }

func fmaF16Acc(acc, v []uint16, c float32) { fmaF16AccRef(acc, v, c) }

func scaleF16(acc []uint16, c float32) { scaleF16Ref(acc, c) }

func quantizeQ8_0(qs []int8, d []float32, x []float32) { quantizeQ8_0Ref(qs, d, x) }
