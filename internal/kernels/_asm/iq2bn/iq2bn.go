// Package iq2bn holds the assembly generators' code shared by the IQ2_BN
// row kernels of ../ternary.go (AVX2) and ../prompt (AVX-512 VNNI).
package iq2bn

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Finish ends one row and token of an IQ2_BN kernel from s, an XMM
// register whose int32 lane g holds group g's integer sum: the lanes
// converted (exact), v = d·S − minus in one fused multiply-subtract (minus
// a register or memory), (v_0 + v_2) + (v_1 + v_3), times the row scale,
// stored to out: dotIQ2BNRowsRef's float order. s is overwritten.
func Finish(s, d VecVirtual, minus Op, scale VecVirtual, out Mem) {
	VCVTDQ2PS(s, s)
	VFMSUB213PS(minus, d, s) // s = d·s − minus
	u := XMM()
	VMOVHLPS(s, s, u)
	VADDPS(u, s, u)
	w := XMM()
	VMOVSHDUP(u, w)
	VADDSS(w, u, u)
	VMULSS(scale, u, u)
	VMOVSS(u, out)
}
