//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../kernels_amd64.s -stubs ../stubs_amd64.go -pkg kernels"

// useAVX2 selects the assembly kernels: they need AVX2 (integer lanes), F16C
// (VCVTPH2PS) and SSE4.1's rounding (VROUNDPS, part of AVX).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// useAVX512 selects the 512-bit version of DotI2SRows where the CPU and
// the OS have AVX-512 F and BW (golang.org/x/sys/cpu checks that the OS
// saves the ZMM state). It gives the
// AVX2 kernel's results bit for bit; tests switch this off to check the
// AVX2 kernel on such CPUs too.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

func impl() string {
	if useAVX512 && useVNNI && hasGFNI {
		return "amd64 AVX2+F16C assembly (AVX-512 I2_S, TQ2_0, Q2_0 and IQ2_BN rows)"
	}
	if useAVX512 && useVNNI {
		return "amd64 AVX2+F16C assembly (AVX-512 I2_S and IQ2_BN rows)"
	}
	if useAVX512 {
		return "amd64 AVX2+F16C assembly (AVX-512 I2_S rows)"
	}
	if useAVX2 {
		return "amd64 AVX2+F16C assembly"
	}
	return "pure Go (no AVX2/F16C)"
}

func accelerated() bool { return useAVX2 }

func dotI2S(row []byte, q []int8) int32 {
	if useAVX2 {
		return dotI2SAVX2(row, q)
	}
	return dotI2SRef(row, q)
}

func dotI2S4(row []byte, q0, q1, q2, q3 []int8) (s [4]int32) {
	if useAVX2 {
		dotI2S4AVX2(row, q0, q1, q2, q3, &s)
		return s
	}
	return dotI2S4Ref(row, q0, q1, q2, q3)
}

func dotI2SRows(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32) {
	if useAVX512 {
		dotI2SRowsAVX512(dst, rows, rowB, q, sumf, s, scale)
		return
	}
	if useAVX2 {
		dotI2SRowsAVX2(dst, rows, rowB, q, sumf, s, scale)
		return
	}
	dotI2SRowsRef(dst, rows, rowB, q, sumf, s, scale)
}

func dotF16Body(w []uint16, x []float32) float32 {
	if useAVX2 {
		return dotF16AVX2(w, x)
	}
	return dotF16BodyRef(w, x)
}

func f32ToF16(dst []uint16, src []float32) {
	if useAVX2 {
		f32ToF16AVX2(dst, src)
		return
	}
	f32ToF16Ref(dst, src)
}

func roundF16s(dst, src []float32) {
	if useAVX2 {
		roundF16sAVX2(dst, src)
		return
	}
	roundF16sRef(dst, src)
}

func ropeNeoxGroups(x, cos, sin []float32) {
	if useAVX2 {
		ropeNeoxAVX2(x, cos, sin)
		return
	}
	ropeNeoxPairs(x, cos, sin, 0, len(cos))
}

func siluGroups(x []float32) int {
	if useAVX2 {
		return siluGroupsAVX2(x)
	}
	return 0
}

func dotF16Rows(dst []float32, w []uint16, stride int, x []float32) {
	if useAVX2 {
		dotF16RowsAVX2(dst, w, stride, x)
		return
	}
	dotF16RowsRef(dst, w, stride, x)
}

func absMaxBits(x []float32) uint32 {
	if useAVX2 {
		return absMaxBitsAVX2(x)
	}
	return absMaxBitsRef(x)
}

func quantI8S(dst []int8, x []float32, scale float32) int32 {
	if useAVX2 {
		return quantI8SAVX2(dst, x, scale)
	}
	return quantI8SRef(dst, x, scale)
}

func addAbs4x8(acc *[32]float32, x []float32) {
	if useAVX2 {
		addAbs4x8AVX2(acc, x)
		return
	}
	addAbs4x8Ref(acc, x)
}

func decodeBF16(dst []float32, raw []byte) bool {
	if useAVX2 {
		return decodeBF16AVX2(dst, raw) != 0
	}
	return decodeBF16Ref(dst, raw)
}

func packI2S(dst []byte, t []int8) bool {
	if useAVX2 {
		return packI2SAVX2(dst, t) == 0xffffffff
	}
	return packI2SRef(dst, t)
}

func ternarize(dst []int8, x []float32, inv float32) {
	if useAVX2 {
		ternarizeAVX2(dst, x, inv)
		return
	}
	ternarizeRef(dst, x, inv)
}

func bf16ToF16(out, raw []byte) bool {
	if useAVX2 {
		return bf16ToF16AVX2(out, raw) == 0
	}
	return bf16ToF16Ref(out, raw)
}

func unpackU8(codes []int8, stride int, packed []byte) {
	if useAVX2 {
		unpackU8AVX2(codes, stride, packed)
		return
	}
	unpackU8Ref(codes, stride, packed)
}

func absSumBF16Blocks(sums []float32, raw []byte, blockLen int) bool {
	if useAVX2 {
		return absSumBF16BlocksAVX2(sums, raw, blockLen) != 0
	}
	return absSumBF16BlocksRef(sums, raw, blockLen)
}

func ternarizePackI2S(dst, raw []byte, inv float32) {
	if useAVX2 {
		ternarizePackI2SAVX2(dst, raw, inv)
		return
	}
	ternarizePackI2SRef(dst, raw, inv)
}

func sumsQ2_0(sums []int32, row []byte, q []int8) {
	if useAVX2 {
		sumsQ2_0AVX2(sums, row, q)
		return
	}
	sumsQ2_0Ref(sums, row, q)
}

func sumsIQ2BN(s *[4]int32, blocks []byte, q []int8) {
	if useAVX2 {
		sumsIQ2BNAVX2(s, blocks, q)
		return
	}
	sumsIQ2BNRef(s, blocks, q)
}

func sumsIQ1BN(s *[4]int32, blocks []byte, q []int8) {
	if useAVX2 {
		sumsIQ1BNAVX2(s, blocks, q)
		return
	}
	sumsIQ1BNRef(s, blocks, q)
}

func lanesTQ2_0(lanes []int32, row []byte, q []int8) {
	if useAVX2 {
		lanesTQ2_0AVX2(lanes, row, q)
		return
	}
	lanesTQ2_0Ref(lanes, row, q)
}

func lanesTQ1_0(lanes []int32, row []byte, q []int8) {
	if useAVX2 {
		lanesTQ1_0AVX2(lanes, row, q)
		return
	}
	lanesTQ1_0Ref(lanes, row, q)
}

func ternaryAccelerated() bool { return useAVX2 }

// useFMA selects the ternary kernels that end in fused multiply-adds.
var useFMA = useAVX2 && cpu.X86.HasFMA

// fma32Acc runs the groups of eight through the assembly; a group with a
// NaN result, and the tail, take the reference.
func fma32Acc(acc, b []float32, c float32) {
	byGroups(len(acc), 8, useFMA,
		func(i, n int) int { return fma32AccAVX2(acc[i:n], b[i:n], c) },
		func(i, j int) { fma32AccRef(acc[i:j], b[i:j], c) })
}

// fmaF16Acc and scaleF16 run the groups of eight through the assembly
// (fmaF16Acc where the CPU has FMA); a group with a NaN result, and the
// tail, take the reference (byGroups).
func fmaF16Acc(acc, v []uint16, c float32) {
	byGroups(len(acc), 8, useFMA,
		func(i, n int) int { return fmaF16AccAVX2(acc[i:n], v[i:n], c) },
		func(i, j int) { fmaF16AccRef(acc[i:j], v[i:j], c) })
}

func scaleF16(acc []uint16, c float32) {
	byGroups(len(acc), 8, useAVX2,
		func(i, n int) int { return scaleF16AVX2(acc[i:n], c) },
		func(i, j int) { scaleF16Ref(acc[i:j], c) })
}

// byGroups runs a kernel over n values in groups of g: when fast, asm(i,
// ng) on the groups from i up to ng (n rounded down to a multiple of g),
// which returns how many values it did before the first group it left
// unchanged (a NaN result, a non-finite block); ref(i, i+g) computes that
// group, and ref the tail.
func byGroups(n, g int, fast bool, asm func(i, ng int) int, ref func(i, j int)) {
	i := 0
	if fast {
		ng := n - n%g
		for i < ng {
			i += asm(i, ng)
			if i < ng {
				ref(i, i+g)
				i += g
			}
		}
	}
	ref(i, n)
}

// quantizeQ8_0 runs the blocks through the assembly; a block with a NaN or
// an infinity takes the reference.
func quantizeQ8_0(qs []int8, d []float32, x []float32) {
	byGroups(len(d), 1, useAVX2,
		func(b, nb int) int { return quantQ8_0AVX2(qs[32*b:32*nb], d[b:nb], x[32*b:32*nb]) },
		func(b, e int) { quantizeQ8_0Ref(qs[32*b:32*e], d[b:e], x[32*b:32*e]) })
}

// dotQ2_0, accTQ, accQ8_0 and accQ6K take the reference's result wherever the assembly's
// holds a NaN: FMA32 and the hardware round every other result alike, but
// may pick different NaN payloads.
func dotQ2_0(row []byte, q []int8, d []float32) float32 {
	if useFMA {
		if r := dotQ2_0AVX2(row, q, d); r == r {
			return r
		}
	}
	return dotQ2_0Ref(row, q, d)
}

func accTQ(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	if useFMA {
		a := *acc
		if tq1 {
			accTQ1_0AVX2(&a, row, q, bsums, d, fused)
		} else {
			accTQ2_0AVX2(&a, row, q, bsums, d, fused)
		}
		if !hasNaN(&a) {
			*acc = a
			return
		}
	}
	accTQRef(acc, row, q, bsums, d, fused, tq1)
}

func accQ8_0(acc *[8]float32, row []byte, q []int8, d []float32) {
	if useFMA {
		a := *acc
		accQ8_0AVX2(&a, row, q, d)
		if !hasNaN(&a) {
			*acc = a
			return
		}
	}
	accQ8_0Ref(acc, row, q, d)
}

func accQ6K(acc *[8]float32, row []byte, q []int8, d []float32) {
	if useFMA {
		a := *acc
		accQ6KAVX2(&a, row, q, d)
		if !hasNaN(&a) {
			*acc = a
			return
		}
	}
	accQ6KRef(acc, row, q, d)
}
