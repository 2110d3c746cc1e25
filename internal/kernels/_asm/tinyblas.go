//go:build ignore

// Command tinyblas writes the tinyBLAS-order kernels of package kernels
// (../tinyblas_amd64.s and their declarations ../tinyblas_stubs_amd64.go)
// with github.com/mmcloughlin/avo. It is a program of its own (build tag
// ignore, run by name) so that the shared kernels_amd64.s of gen.go is not
// rewritten with it; `go generate` in internal/kernels runs both
// (tinyblas_amd64.go holds its go:generate line).
//
// The order is that of llamafile's tinyBLAS<8> on AVX2 + FMA (bitnet.cpp's
// llama.cpp fork, ggml/src/llamafile/sgemm.cpp, tinyBLAS::gemm): every
// output has one 8-lane float32 accumulator; step l (K ascending in steps
// of 8) adds lane i's product w[8l+i]·x[8l+i] with one fused multiply-add
// (madd, _mm256_fmadd_ps; F16 weights widened exactly by load, i.e.
// _mm256_cvtph_ps), and hsum(__m256) adds the lanes: the upper half to the
// lower, then (0+2, 1+3) (_mm_movehl_ps), then their sum (_mm_movehdup_ps,
// _mm_add_ss). tinyBLAS's register tiles only decide which outputs share
// a load, never an output's order, so tiles of our own choosing give the
// same bits. References: ../tinyblas_ref.go.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!purego")
	for _, nt := range []int{8, 4, 1} {
		tinyShared(true, nt)
		tinyShared(false, nt)
		tinyLanes(nt)
	}
	Generate()
}

// pointers returns n registers holding base + i·stride (stride in bytes).
func pointers(base, stride Register, n int) []Register {
	p := make([]Register, n)
	for i := range p {
		p[i] = GP64()
		if i == 0 {
			MOVQ(base, p[i])
			continue
		}
		MOVQ(p[i-1], p[i])
		ADDQ(stride, p[i])
	}
	return p
}

// hsum8 leaves tinyBLAS's hsum of the YMM register acc in its low lane.
func hsum8(acc VecVirtual) Register {
	hi := XMM()
	VEXTRACTF128(U8(1), acc, hi)
	lo := acc.AsX()
	VADDPS(lo, hi, lo)
	t := XMM()
	VMOVHLPS(lo, lo, t)
	VADDPS(t, lo, lo)
	VMOVSHDUP(lo, t)
	VADDSS(t, lo, lo)
	return lo
}

// tinyShared: nt outputs of one weight row w (F16 when f16, else F32) and
// nt activation rows x_i = x + i·xs (xs in elements), K = k (a multiple of
// 8, ≥ 0): dst[i] = hsum(lanes of w·x_i). The widened weight vector is
// loaded once per step for all nt rows. Reference: tinyDotsRef.
func tinyShared(f16 bool, nt int) {
	kind, wt := "F32", "[]float32"
	if f16 {
		kind, wt = "F16", "[]uint16"
	}
	name := fmt.Sprintf("tinyDots%sx%dAVX2", kind, nt)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst []float32, w %s, x []float32, xs int, k int)", wt))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s writes to dst[0:%d] tinyBLAS<8>'s dot of the %s row w[:k] with x[i·xs : i·xs+k] for i < %d; k is a multiple of 8; the caller checks every length.", name, nt, kind, nt))
	dst := Load(Param("dst").Base(), GP64())
	w := Load(Param("w").Base(), GP64())
	xb := Load(Param("x").Base(), GP64())
	xs := Load(Param("xs"), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(U8(2), xs)
	xp := pointers(xb, xs, nt)
	acc := make([]VecVirtual, nt)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	o := GP64()
	XORQ(o, o)
	loop, done := name+"Loop", name+"Done"
	Label(loop)
	CMPQ(o, k)
	JAE(LabelRef(done))
	wv := YMM()
	if f16 {
		VCVTPH2PS(Mem{Base: w, Index: o, Scale: 2}, wv)
	} else {
		VMOVUPS(Mem{Base: w, Index: o, Scale: 4}, wv)
	}
	for i := range acc {
		VFMADD231PS(Mem{Base: xp[i], Index: o, Scale: 4}, wv, acc[i])
	}
	ADDQ(U8(8), o)
	JMP(LabelRef(loop))
	Label(done)
	for i := range acc {
		VMOVSS(hsum8(acc[i]), Mem{Base: dst, Disp: 4 * i})
	}
	VZEROUPPER()
	RET()
}

// tinyLanes: nt F16 rows w_i = w + i·wr (wr in elements) against one f32
// x, K = k (a multiple of 8, ≥ 0), continuing the 8-lane accumulators
// lanes[8i:8i+8] (loaded, advanced by k/8 fused multiply-add steps,
// stored back; no hsum). Reference: tinyLanesF16Ref.
func tinyLanes(nt int) {
	name := fmt.Sprintf("tinyLanesF16x%dAVX2", nt)
	TEXT(name, NOSPLIT, "func(lanes []float32, w []uint16, wr int, x []float32, k int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s advances the 8-lane accumulators lanes[8i:8i+8] of the F16 rows w[i·wr : i·wr+k] (i < %d) against x[:k] by tinyBLAS<8>'s fused multiply-adds; k is a multiple of 8; the caller checks every length.", name, nt))
	lp := Load(Param("lanes").Base(), GP64())
	wb := Load(Param("w").Base(), GP64())
	wr := Load(Param("wr"), GP64())
	x := Load(Param("x").Base(), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(U8(1), wr)
	wp := pointers(wb, wr, nt)
	acc := make([]VecVirtual, nt)
	for i := range acc {
		acc[i] = YMM()
		VMOVUPS(Mem{Base: lp, Disp: 32 * i}, acc[i])
	}
	o := GP64()
	XORQ(o, o)
	loop, done := name+"Loop", name+"Done"
	Label(loop)
	CMPQ(o, k)
	JAE(LabelRef(done))
	xv := YMM()
	VMOVUPS(Mem{Base: x, Index: o, Scale: 4}, xv)
	for i := range acc {
		t := YMM()
		VCVTPH2PS(Mem{Base: wp[i], Index: o, Scale: 2}, t)
		VFMADD231PS(xv, t, acc[i])
	}
	ADDQ(U8(8), o)
	JMP(LabelRef(loop))
	Label(done)
	for i := range acc {
		VMOVUPS(acc[i], Mem{Base: lp, Disp: 32 * i})
	}
	VZEROUPPER()
	RET()
}
