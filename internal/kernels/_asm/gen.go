// Command gen writes the amd64 assembly of package kernels
// (../kernels_amd64.s and its Go declarations ../stubs_amd64.go)
// with github.com/mmcloughlin/avo. It is its own module so that avo is not a
// dependency of the converter; run it through `go generate` in
// internal/kernels (see that package's doc.go).
//
// Every kernel computes exactly what its pure-Go reference in
// ../ref.go computes: the integer sums are exact (or wrap where the
// reference wraps), and the float operations are the same operations in the
// same order, each rounded to float32 where the reference rounds.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Only VEX-encoded vector instructions are used between the first YMM
// write and VZEROUPPER: a legacy-SSE instruction there (avo's MOVD, MOVSS)
// cost 150–400 ns per call on this project's AMD EPYC machines, more than
// a whole 2560-input I2_S row.
func main() {
	ConstraintExpr("!purego")
	dotI2S()
	dotI2S4()
	dotI2SRows()
	dotI2SRowsAVX512()
	dotF16()
	dotF16Rows()
	f32ToF16()
	roundF16s()
	ropeNeox()
	siluGroups()
	fma32Acc()
	absMaxBits()
	quantI8S()
	addAbs4x8()
	decodeBF16()
	packI2S()
	ternarize()
	bf16ToF16()
	unpackU8()
	absSumBF16Blocks()
	ternarizePackI2S()
	sumsQ2_0()
	sumsIQ2BN()
	sumsIQ1BN()
	lanesTQ2_0()
	lanesTQ1_0()
	dotQ2_0()
	accTQ(false)
	accTQ(true)
	accQ8_0()
	accQ6K()
	accTQRows(false)
	accTQRows(true)
	accTQ2_0RowsVNNI()
	dotIQ2BNRows()
	dotQ2_0Rows()
	dotQ2_0Rows2()
	attnKQIK(1)
	attnKQIK(2)
	attnPVIK(1)
	attnPVIK(2)
	absMaxQ8K64()
	quantQ8K64()
	mulScaled()
	fmaF16Acc()
	scaleF16()
	quantQ8_0()
	Generate()
}

// broadcast32 returns a YMM register holding v in every 32-bit lane.
func broadcast32(v uint32) VecVirtual {
	t := GP32()
	MOVL(U32(v), t)
	x := XMM()
	VMOVD(t, x)
	y := YMM()
	VPBROADCASTD(x, y)
	return y
}

// dotI2S: Σ code·q over n32·32 packed I2_S bytes (reference: dotI2SRef).
// Per 32-byte block the four 2-bit fields of each byte are isolated with a
// shift and a mask, VPMADDUBSW multiplies them (unsigned 0…2) with the
// matching 32 activation bytes (signed) and adds neighbouring byte pairs
// into sixteen int16 lanes (|pair| ≤ 512: never saturates), and the four
// results join a 16-bit accumulator with wrapping adds. After every 32
// blocks (or the last, shorter group) VPMADDWD widens lane pairs to int32.
// This is bitnet.cpp's AVX2 ggml_vec_dot_i2_i8_s arithmetic.
func dotI2S() {
	TEXT("dotI2SAVX2", NOSPLIT, "func(row []byte, q []int8) int32")
	Pragma("noescape")
	Doc("dotI2SAVX2 returns Σ code·q for the I2_S row; len(row) is a multiple of 32 and len(q) ≥ 4·len(row).")
	row := Load(Param("row").Base(), GP64())
	q := Load(Param("q").Base(), GP64())
	nb := Load(Param("row").Len(), GP64())
	SHRQ(U8(5), nb) // blocks of 32 bytes

	mask := broadcast32(0x03030303)
	ones := broadcast32(0x00010001)
	acc32 := i2sRowSums("", row, q, nb, mask, ones)
	lo := hsum32x8(acc32)
	r := GP32()
	VMOVD(lo, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// i2sRowSums emits the loop of dotI2S over the nb 32-byte blocks at row
// (advancing row and q, consuming nb): each block's four 2-bit code
// vectors times 128 activation bytes with VPMADDUBSW into wrapping int16
// lanes, widened to int32 (VPMADDWD with ones) every 32 blocks, as the
// reference's acc16/acc32 do. prefix keeps the labels of the functions
// that use it apart. It returns the eight int32 lane sums.
func i2sRowSums(prefix string, row, q, nb Register, mask, ones VecVirtual) VecVirtual {
	group, block, done := prefix+"Group", prefix+"Block", prefix+"Sums"
	acc32 := YMM()
	VPXOR(acc32, acc32, acc32)

	Label(group)
	CMPQ(nb, Imm(0))
	JE(LabelRef(done))
	g := GP64()
	MOVQ(U32(32), g)
	CMPQ(nb, g)
	CMOVQLT(nb, g)
	SUBQ(g, nb)
	acc16 := YMM()
	VPXOR(acc16, acc16, acc16)

	Label(block)
	c := YMM()
	VMOVDQU(Mem{Base: row}, c)
	p := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for s, sh := range []uint8{6, 4, 2} {
		VPSRLW(U8(sh), c, p[s])
		VPAND(mask, p[s], p[s])
		VPMADDUBSW(Mem{Base: q, Disp: 32 * s}, p[s], p[s])
	}
	VPAND(mask, c, p[3])
	VPMADDUBSW(Mem{Base: q, Disp: 96}, p[3], p[3])
	VPADDW(p[1], p[0], p[0])
	VPADDW(p[3], p[2], p[2])
	VPADDW(p[2], p[0], p[0])
	VPADDW(p[0], acc16, acc16)
	ADDQ(U8(32), row)
	ADDQ(U32(128), q)
	DECQ(g)
	JNE(LabelRef(block))

	VPMADDWD(ones, acc16, acc16)
	VPADDD(acc16, acc32, acc32)
	JMP(LabelRef(group))

	Label(done)
	return acc32
}

// hsum32x8 adds the eight int32 lanes of acc (in the order hsum_i32_8 of
// bitnet.cpp's kernel adds them; integer sums, so any order gives the
// same) and returns an XMM whose lane 0 holds the total.
func hsum32x8(acc VecVirtual) Register {
	hi := XMM()
	VEXTRACTI128(U8(1), acc, hi)
	lo := acc.AsX()
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0x4e), lo, hi)
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0xb1), lo, hi)
	VPADDD(hi, lo, lo)
	return lo
}

// dotI2S4: dotI2S of one packed row against four activation rows at once
// (reference: four calls of dotI2SRef). Each block's four code vectors are
// isolated once and multiplied with each token's 128 activation bytes; each
// token has its own 16-bit and 32-bit accumulators, so every token gets
// the lanes, the wrap and the 32-block widening of dotI2S (wrapping int16
// addition is associative, so grouping the four products differently
// gives the same lane values).
func dotI2S4() {
	TEXT("dotI2S4AVX2", NOSPLIT, "func(row []byte, q0, q1, q2, q3 []int8, sums *[4]int32)")
	Pragma("noescape")
	Doc("dotI2S4AVX2 stores Σ code·q_t for the I2_S row and each of the four activation rows into sums; len(row) is a multiple of 32 and every len(q_t) ≥ 4·len(row).")
	row := Load(Param("row").Base(), GP64())
	qs := []Register{
		Load(Param("q0").Base(), GP64()), Load(Param("q1").Base(), GP64()),
		Load(Param("q2").Base(), GP64()), Load(Param("q3").Base(), GP64()),
	}
	nb := Load(Param("row").Len(), GP64())
	SHRQ(U8(5), nb)

	mask := broadcast32(0x03030303)
	ones := broadcast32(0x00010001)
	var acc32, acc16 [4]VecVirtual
	for t := range acc32 {
		acc32[t] = YMM()
		VPXOR(acc32[t], acc32[t], acc32[t])
	}

	Label("group4")
	CMPQ(nb, Imm(0))
	JE(LabelRef("done4"))
	g := GP64()
	MOVQ(U32(32), g)
	CMPQ(nb, g)
	CMOVQLT(nb, g)
	SUBQ(g, nb)
	for t := range acc16 {
		acc16[t] = YMM()
		VPXOR(acc16[t], acc16[t], acc16[t])
	}

	Label("block4")
	p3 := YMM()
	VMOVDQU(Mem{Base: row}, p3)
	p := []VecVirtual{YMM(), YMM(), YMM(), p3}
	for s, sh := range []uint8{6, 4, 2} {
		VPSRLW(U8(sh), p3, p[s])
		VPAND(mask, p[s], p[s])
	}
	VPAND(mask, p3, p3)
	t0, t1 := YMM(), YMM()
	for t, q := range qs {
		VPMADDUBSW(Mem{Base: q}, p[0], t0)
		VPMADDUBSW(Mem{Base: q, Disp: 32}, p[1], t1)
		VPADDW(t1, t0, t0)
		VPMADDUBSW(Mem{Base: q, Disp: 64}, p[2], t1)
		VPADDW(t1, t0, t0)
		VPMADDUBSW(Mem{Base: q, Disp: 96}, p[3], t1)
		VPADDW(t1, t0, t0)
		VPADDW(t0, acc16[t], acc16[t])
		ADDQ(U32(128), q)
	}
	ADDQ(U8(32), row)
	DECQ(g)
	JNE(LabelRef("block4"))

	for t := range acc16 {
		VPMADDWD(ones, acc16[t], acc16[t])
		VPADDD(acc16[t], acc32[t], acc32[t])
	}
	JMP(LabelRef("group4"))

	Label("done4")
	out := Load(Param("sums"), GP64())
	for t := range acc32 {
		hi := XMM()
		VEXTRACTI128(U8(1), acc32[t], hi)
		lo := acc32[t].AsX()
		VPADDD(hi, lo, lo)
		VPSHUFD(U8(0x4e), lo, hi)
		VPADDD(hi, lo, lo)
		VPSHUFD(U8(0xb1), lo, hi)
		VPADDD(hi, lo, lo)
		VMOVD(lo, Mem{Base: out, Disp: 4 * t})
	}
	VZEROUPPER()
	RET()
}

// dotI2SRows: dotI2S over consecutive rows of rowB bytes (rowB a multiple
// of 32) with bitnet.cpp's epilogue per row (reference: dotI2SRowsRef):
// dst_r = ((float32(sumi_r) − sumf)/s)·scale, each scalar operation
// rounded to float32 (VCVTSI2SSL, VSUBSS, VDIVSS, VMULSS: the rounding of
// Go's float32 conversion and arithmetic). One call for a whole range of
// rows saves the per-row call and set-up of DotI2S, and the division of one
// row overlaps the next row's loads.
func dotI2SRows() {
	TEXT("dotI2SRowsAVX2", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32)")
	Pragma("noescape")
	Doc("dotI2SRowsAVX2 writes the I2_S dot product of each of len(dst) consecutive rows of rowB bytes (a multiple of 32, > 0) with q (len(q) ≥ 4·rowB), with bitnet.cpp's epilogue, into dst; len(rows) ≥ len(dst)·rowB.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	qBase := Load(Param("q").Base(), GP64())
	SHRQ(U8(5), rowB) // blocks per row
	var ep [3]VecVirtual
	for i, name := range []string{"sumf", "s", "scale"} {
		a, err := Param(name).Resolve()
		if err != nil {
			panic(err)
		}
		ep[i] = XMM()
		VMOVSS(a.Addr, ep[i])
	}
	mask := broadcast32(0x03030303)
	ones := broadcast32(0x00010001)

	Label("rowsNext")
	CMPQ(nr, Imm(0))
	JE(LabelRef("rowsDone"))
	q := GP64()
	MOVQ(qBase, q)
	nb := GP64()
	MOVQ(rowB, nb)
	acc32 := i2sRowSums("rows", row, q, nb, mask, ones)
	lo := hsum32x8(acc32)
	VCVTDQ2PS(lo, lo)
	VSUBSS(ep[0], lo, lo)
	VDIVSS(ep[1], lo, lo)
	VMULSS(ep[2], lo, lo)
	VMOVSS(lo, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef("rowsNext"))

	Label("rowsDone")
	VZEROUPPER()
	RET()
}

// dotI2SRowsAVX512: dotI2SRows with 512-bit vectors (AVX-512 F + BW).
// Each 32-byte block is broadcast to both halves of a ZMM register; one
// variable word shift (VPSRLVW) isolates the codes of s = 0 in the low half
// and s = 1 in the high half, another s = 2 and s = 3, so each VPMADDUBSW
// takes 64 contiguous activation bytes. The low half of the 16-bit
// accumulator then holds the lanes of s = 0 and 2, the high half those of
// s = 1 and 3; at the end of each group of 32 blocks the halves are added
// with a wrapping VPADDW before the widening. Wrapping 16-bit addition is
// associative and commutative, so every lane equals the reference's
// acc16 lane (the same products, added in another order modulo 2^16).
func dotI2SRowsAVX512() {
	TEXT("dotI2SRowsAVX512", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32)")
	Pragma("noescape")
	Doc("dotI2SRowsAVX512 is dotI2SRowsAVX2 for CPUs with AVX-512 F and BW (the same results).")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	qBase := Load(Param("q").Base(), GP64())
	SHRQ(U8(5), rowB)
	var ep [3]VecVirtual
	for i, name := range []string{"sumf", "s", "scale"} {
		a, err := Param(name).Resolve()
		if err != nil {
			panic(err)
		}
		ep[i] = XMM()
		VMOVSS(a.Addr, ep[i])
	}
	shifts := GLOBL("i2sShifts512", RODATA|NOPTR)
	for i := 0; i < 64; i++ {
		// words 0-15: 6, 16-31: 4 (first vector); 2 and 0 (second).
		v := [4]uint16{6, 4, 2, 0}[i/16]
		DATA(2*i, U16(v))
	}
	shA, shB := ZMM(), ZMM()
	VMOVDQU64(shifts, shA)
	VMOVDQU64(shifts.Offset(64), shB)
	t := GP32()
	MOVL(U32(0x03030303), t)
	mx := XMM()
	VMOVD(t, mx)
	mask := ZMM()
	VPBROADCASTD(mx, mask)
	ones := broadcast32(0x00010001)

	Label("zRowsNext")
	CMPQ(nr, Imm(0))
	JE(LabelRef("zRowsDone"))
	q := GP64()
	MOVQ(qBase, q)
	nb := GP64()
	MOVQ(rowB, nb)
	acc32 := YMM()
	VPXOR(acc32, acc32, acc32)

	Label("zRowsGroup")
	CMPQ(nb, Imm(0))
	JE(LabelRef("zRowsEpilogue"))
	g := GP64()
	MOVQ(U32(32), g)
	CMPQ(nb, g)
	CMOVQLT(nb, g)
	SUBQ(g, nb)
	acc16 := ZMM()
	VPXORD(acc16, acc16, acc16)

	Label("zRowsBlock")
	c := ZMM()
	VBROADCASTI64X4(Mem{Base: row}, c)
	a, b := ZMM(), ZMM()
	VPSRLVW(shA, c, a)
	VPSRLVW(shB, c, b)
	VPANDD(mask, a, a)
	VPANDD(mask, b, b)
	VPMADDUBSW(Mem{Base: q}, a, a)
	VPMADDUBSW(Mem{Base: q, Disp: 64}, b, b)
	VPADDW(b, a, a)
	VPADDW(a, acc16, acc16)
	ADDQ(U8(32), row)
	ADDQ(U32(128), q)
	DECQ(g)
	JNE(LabelRef("zRowsBlock"))

	hiY := YMM()
	VEXTRACTI64X4(U8(1), acc16, hiY)
	lo16 := acc16.AsY()
	VPADDW(hiY, lo16, lo16)
	VPMADDWD(ones, lo16, lo16)
	VPADDD(lo16, acc32, acc32)
	JMP(LabelRef("zRowsGroup"))

	Label("zRowsEpilogue")
	hi := XMM()
	VEXTRACTI128(U8(1), acc32, hi)
	lo := acc32.AsX()
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0x4e), lo, hi)
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0xb1), lo, hi)
	VPADDD(hi, lo, lo)
	VCVTDQ2PS(lo, lo)
	VSUBSS(ep[0], lo, lo)
	VDIVSS(ep[1], lo, lo)
	VMULSS(ep[2], lo, lo)
	VMOVSS(lo, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef("zRowsNext"))

	Label("zRowsDone")
	VZEROUPPER()
	RET()
}

// dotF16: the 32-element steps of ggml's AVX2 + F16C vec_dot_f16 (reference:
// dotF16Ref before its tail). Four accumulators of eight lanes; each step
// widens 4×8 F16 weights with VCVTPH2PS, multiplies by the activations
// (rounded to float32, VMULPS) and adds (VADDPS): two roundings, as the
// reference's separate multiply and add. The reduction is
// GGML_F32x8_REDUCE: acc0+acc2, acc1+acc3, their sum; lanes (l, l+4)
// added, then (t0+t1)+(t2+t3).
func dotF16() {
	TEXT("dotF16AVX2", NOSPLIT, "func(w []uint16, x []float32) float32")
	Pragma("noescape")
	Doc("dotF16AVX2 returns the reduced 8×4 accumulators of ggml's vec_dot_f16 over len(w) elements (a multiple of 32, ≥ 0); len(x) ≥ len(w).")
	w := Load(Param("w").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("w").Len(), GP64())
	SHRQ(U8(5), n)
	acc := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, a := range acc {
		VXORPS(a, a, a)
	}
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("reduce"))
	for j, a := range acc {
		t := YMM()
		VCVTPH2PS(Mem{Base: w, Disp: 16 * j}, t)
		VMULPS(Mem{Base: x, Disp: 32 * j}, t, t)
		VADDPS(t, a, a)
	}
	ADDQ(U8(64), w)
	ADDQ(U32(128), x)
	DECQ(n)
	JMP(LabelRef("loop"))

	Label("reduce")
	VADDPS(acc[2], acc[0], acc[0])
	VADDPS(acc[3], acc[1], acc[1])
	VADDPS(acc[1], acc[0], acc[0])
	hi := XMM()
	VEXTRACTF128(U8(1), acc[0], hi)
	lo := acc[0].AsX()
	VADDPS(hi, lo, lo)
	VHADDPS(lo, lo, lo)
	VHADDPS(lo, lo, lo)
	VZEROUPPER() // before the legacy-SSE MOVSS of the store: no transition penalty
	Store(lo, ReturnIndex(0))
	RET()
}

// dotF16Rows: dotF16 over rows of k F16 weights (k a multiple of 32) that
// start stride elements apart (stride = k: consecutive rows; the
// attention's K rows of one head and its V columns are further apart)
// against one activation x, the result of each row stored as float32
// (reference: dotF16RowsRef). (A 512-bit version, accumulators 0|1 and 2|3
// in the halves of two ZMM registers, was no faster here: the four chains
// of additions, not the instruction count, bound the kernel.)
func dotF16Rows() {
	TEXT("dotF16RowsAVX2", NOSPLIT, "func(dst []float32, w []uint16, stride int, x []float32)")
	Pragma("noescape")
	Doc("dotF16RowsAVX2 writes dotF16's reduced sum of each of len(dst) rows of len(x) weights (a multiple of 32, > 0) starting stride elements apart into dst; len(w) ≥ (len(dst)−1)·stride + len(x).")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("w").Base(), GP64())
	step := Load(Param("stride"), GP64())
	SHLQ(U8(1), step) // bytes between row starts
	xBase := Load(Param("x").Base(), GP64())
	k := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), k)

	Label("f16RowsNext")
	CMPQ(nr, Imm(0))
	JE(LabelRef("f16RowsDone"))
	w := GP64()
	MOVQ(row, w)
	x := GP64()
	MOVQ(xBase, x)
	n := GP64()
	MOVQ(k, n)
	acc := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, a := range acc {
		VXORPS(a, a, a)
	}
	Label("f16RowsLoop")
	for j, a := range acc {
		t := YMM()
		VCVTPH2PS(Mem{Base: w, Disp: 16 * j}, t)
		VMULPS(Mem{Base: x, Disp: 32 * j}, t, t)
		VADDPS(t, a, a)
	}
	ADDQ(U8(64), w)
	ADDQ(U32(128), x)
	DECQ(n)
	JNE(LabelRef("f16RowsLoop"))
	VADDPS(acc[2], acc[0], acc[0])
	VADDPS(acc[3], acc[1], acc[1])
	VADDPS(acc[1], acc[0], acc[0])
	hi := XMM()
	VEXTRACTF128(U8(1), acc[0], hi)
	lo := acc[0].AsX()
	VADDPS(hi, lo, lo)
	VHADDPS(lo, lo, lo)
	VHADDPS(lo, lo, lo)
	VMOVSS(lo, Mem{Base: dst})
	ADDQ(U8(4), dst)
	ADDQ(step, row)
	DECQ(nr)
	JMP(LabelRef("f16RowsNext"))

	Label("f16RowsDone")
	VZEROUPPER()
	RET()
}

// f32ToF16: IEEE binary16 bits of float32 values, rounded to nearest even
// (reference: f32ToF16Ref, github.com/x448/float16's Fromfloat32, which
// quiets a NaN and keeps the top of its payload as F16C does). VCVTPS2PH
// with immediate 0 rounds to nearest even whatever MXCSR says.
func f32ToF16() {
	TEXT("f32ToF16AVX2", NOSPLIT, "func(dst []uint16, src []float32)")
	Pragma("noescape")
	Doc("f32ToF16AVX2 converts len(src) (a multiple of 8) float32 values to F16 bits in dst (len(dst) ≥ len(src)).")
	dst := Load(Param("dst").Base(), GP64())
	src := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(3), n)
	Label("h16Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("h16Done"))
	v := YMM()
	VMOVUPS(Mem{Base: src}, v)
	h := XMM()
	VCVTPS2PH(U8(0), v, h)
	VMOVDQU(h, Mem{Base: dst})
	ADDQ(U8(32), src)
	ADDQ(U8(16), dst)
	DECQ(n)
	JMP(LabelRef("h16Loop"))
	Label("h16Done")
	VZEROUPPER()
	RET()
}

// roundF16s: float32 values rounded to binary16 and widened back (exact),
// reference roundF16sRef.
func roundF16s() {
	TEXT("roundF16sAVX2", NOSPLIT, "func(dst, src []float32)")
	Pragma("noescape")
	Doc("roundF16sAVX2 rounds len(src) (a multiple of 8) float32 values to F16 precision into dst (len(dst) ≥ len(src)).")
	dst := Load(Param("dst").Base(), GP64())
	src := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(3), n)
	Label("r16Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("r16Done"))
	v := YMM()
	VMOVUPS(Mem{Base: src}, v)
	h := XMM()
	VCVTPS2PH(U8(0), v, h)
	VCVTPH2PS(h, v)
	VMOVUPS(v, Mem{Base: dst})
	ADDQ(U8(32), src)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("r16Loop"))
	Label("r16Done")
	VZEROUPPER()
	RET()
}

// ropeNeox: the NEOX rope of one head over groups of eight pairs
// (reference ropeNeoxRef in ../exp.go): x[i] = −float32(x1·sin) + x0·cos
// and x[i+half] = float32(x1·cos) + x0·sin, the products rounded by
// VMULPS, the negation by the sign bit, the fused multiply-adds as
// VFMADD231PS (one rounding, as FMA32).
func ropeNeox() {
	TEXT("ropeNeoxAVX2", NOSPLIT, "func(x, cos, sin []float32)")
	Pragma("noescape")
	Doc("ropeNeoxAVX2 rotates pairs 0…len(cos)−1 (len(cos) a multiple of 8, at most len(x)/2, len(sin) ≥ len(cos)) of x in place: dimension i with i + len(x)/2, as ropeNeoxRef.")
	xp := Load(Param("x").Base(), GP64())
	half := Load(Param("x").Len(), GP64())
	SHRQ(U8(1), half)
	cp := Load(Param("cos").Base(), GP64())
	sp := Load(Param("sin").Base(), GP64())
	n := Load(Param("cos").Len(), GP64())
	SHRQ(U8(3), n)
	hp := GP64()
	LEAQ(Mem{Base: xp, Index: half, Scale: 4}, hp)
	sign := YMM()
	VPCMPEQD(sign, sign, sign)
	VPSLLD(U8(31), sign, sign)
	Label("ropeLoop")
	CMPQ(n, Imm(0))
	JE(LabelRef("ropeDone"))
	x0, x1, c, sn, t, u := YMM(), YMM(), YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: xp}, x0)
	VMOVUPS(Mem{Base: hp}, x1)
	VMOVUPS(Mem{Base: cp}, c)
	VMOVUPS(Mem{Base: sp}, sn)
	VMULPS(sn, x1, t)
	VXORPS(sign, t, t)
	VFMADD231PS(c, x0, t)
	VMULPS(c, x1, u)
	VFMADD231PS(sn, x0, u)
	VMOVUPS(t, Mem{Base: xp})
	VMOVUPS(u, Mem{Base: hp})
	ADDQ(U8(32), xp)
	ADDQ(U8(32), hp)
	ADDQ(U8(32), cp)
	ADDQ(U8(32), sp)
	DECQ(n)
	JMP(LabelRef("ropeLoop"))
	Label("ropeDone")
	VZEROUPPER()
	RET()
}

// siluGroups: x/(1+e^−x) in place over groups of eight (reference:
// siluRef and Exp in ../exp.go, ggml_v_expf and ggml_v_silu of bitnet.cpp's
// llama.cpp fork), the same float32 operations in the same order, the fused
// multiply-adds as VFMADD231PS/VFNMADD231PS. It stops before the first
// group with a lane outside Exp's normal range (|n| > 126 or NaN), which
// the caller computes in Go, and returns the number of values done.
func siluGroups() {
	TEXT("siluGroupsAVX2", NOSPLIT, "func(x []float32) int")
	Pragma("noescape")
	Doc("siluGroupsAVX2 applies SiLU in place to the groups of eight of x (len(x) a multiple of 8) up to the first group Exp's fast path cannot take, and returns the number of values done.")
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(3), n)
	done := GP64()
	XORQ(done, done)
	// The constants, eight lanes each, read as memory operands (16 YMM
	// registers would not hold them and the temporaries).
	tab := GLOBL("siluConst", RODATA|NOPTR)
	consts := []uint32{}
	for _, v := range []float32{0x1.8p23, 0x1.715476p+0, 0x1.62e4p-1, 0x1.7f7d1cp-20,
		0x1.ffffecp-1, 0x1.fffdb6p-2, 0x1.555e66p-3, 0x1.573e2ep-5, 0x1.0e4020p-7, 1, 126} {
		consts = append(consts, math.Float32bits(v))
	}
	consts = append(consts, 0x80000000, 0x7fffffff, 0x3f800000)
	for i, c := range consts {
		for l := 0; l < 8; l++ {
			DATA(32*i+4*l, U32(c))
		}
	}
	cm := func(i int) Mem { return tab.Offset(32 * i) }
	shift, log2e, ln2hi, ln2lo := cm(0), cm(1), cm(2), cm(3)
	c1, c2, c3, c4, c5 := cm(4), cm(5), cm(6), cm(7), cm(8)
	one, lim, sign, abs, oneBits := cm(9), cm(10), cm(11), cm(12), cm(13)

	Label("siluLoop")
	CMPQ(n, Imm(0))
	JE(LabelRef("siluDone"))
	v := YMM()
	VMOVUPS(Mem{Base: x}, v)
	a := YMM() // the argument −v
	VXORPS(sign, v, a)
	z := YMM()
	VMOVUPS(shift, z)
	VFMADD231PS(log2e, a, z) // z = shift + a·log2e
	nn := YMM()
	VSUBPS(shift, z, nn) // n = z − shift
	an := YMM()
	VANDPS(abs, nn, an)
	m := YMM()
	VCMPPS(U8(0x12), lim, an, m) // |n| ≤ 126, false for NaN (LE_OQ)
	bits := GP32()
	VMOVMSKPS(m, bits)
	CMPL(bits, U8(0xff))
	JNE(LabelRef("siluDone"))
	b := YMM()
	VMOVAPS(a, b)
	VFNMADD231PS(ln2hi, nn, b) // b = a − n·ln2hi
	VFNMADD231PS(ln2lo, nn, b) // b = b − n·ln2lo
	u := YMM()
	VMULPS(b, b, u)
	c1b := YMM()
	VMULPS(c1, b, c1b)
	odd := YMM()
	VMOVUPS(c2, odd)
	VFMADD231PS(c3, b, odd) // c2 + c3·b
	high := YMM()
	VMOVUPS(c4, high)
	VFMADD231PS(c5, b, high)  // c4 + c5·b
	VFMADD231PS(high, u, odd) // p = odd + high·u
	VFMADD231PS(odd, u, c1b)  // p = c1b + p·u
	k := YMM()
	VPSLLD(U8(23), z, k)
	VPADDD(oneBits, k, k)
	e := YMM()
	VMOVAPS(k, e)
	VFMADD231PS(k, c1b, e) // e = k + k·p
	VADDPS(one, e, e)
	VDIVPS(e, v, v) // v / (1 + e)
	VMOVUPS(v, Mem{Base: x})
	ADDQ(U8(32), x)
	ADDQ(U8(8), done)
	DECQ(n)
	JMP(LabelRef("siluLoop"))

	Label("siluDone")
	VZEROUPPER()
	Store(done, ReturnIndex(0))
	RET()
}

// absMaxBits: the largest |x_k| as float32 bits (sign cleared) over a
// multiple of 32 elements. For non-negative floats the integer order of the
// bits is the float order, and every NaN compares above +Inf, so the caller
// sees a NaN or an infinity as bits ≥ 0x7f800000.
func absMaxBits() {
	TEXT("absMaxBitsAVX2", NOSPLIT, "func(x []float32) uint32")
	Pragma("noescape")
	Doc("absMaxBitsAVX2 returns max_k bits(x_k) & 0x7fffffff over len(x) elements (a multiple of 32); 0 when x is empty.")
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), n)
	mask := broadcast32(0x7fffffff)
	m := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, a := range m {
		VPXOR(a, a, a)
	}
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("reduce"))
	for j, a := range m {
		t := YMM()
		VPAND(Mem{Base: x, Disp: 32 * j}, mask, t)
		VPMAXUD(t, a, a)
	}
	ADDQ(U32(128), x)
	DECQ(n)
	JMP(LabelRef("loop"))

	Label("reduce")
	VPMAXUD(m[1], m[0], m[0])
	VPMAXUD(m[3], m[2], m[2])
	VPMAXUD(m[2], m[0], m[0])
	hi := XMM()
	VEXTRACTI128(U8(1), m[0], hi)
	lo := m[0].AsX()
	VPMAXUD(hi, lo, lo)
	VPSHUFD(U8(0x4e), lo, hi)
	VPMAXUD(hi, lo, lo)
	VPSHUFD(U8(0xb1), lo, hi)
	VPMAXUD(hi, lo, lo)
	r := GP32()
	VMOVD(lo, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// quantI8S: q_k = clamp(round_half_even(float32(x_k·scale)), −128, 127) and
// Σ q_k over a multiple of 32 finite elements (reference: the loop of
// quantizeI8SRef). VMULPS rounds the product to float32 as the reference's
// float32 multiply does, VROUNDPS with immediate 0 rounds to nearest even,
// VMINPS/VMAXPS clamp, VCVTPS2DQ converts the (integral) values exactly;
// two saturating packs and a VPERMD put the 32 int8 codes back in order.
func quantI8S() {
	TEXT("quantI8SAVX2", NOSPLIT, "func(dst []int8, x []float32, scale float32) int32")
	Pragma("noescape")
	Doc("quantI8SAVX2 quantizes len(x) elements (a multiple of 32, all finite) of x with scale into dst (len(dst) ≥ len(x)) and returns the sum of the codes.")
	dst := Load(Param("dst").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), n)
	sp, err := Param("scale").Resolve()
	if err != nil {
		panic(err)
	}
	s := YMM()
	VBROADCASTSS(sp.Addr, s)
	hiC := broadcast32(0x42fe0000) // 127.0
	loC := broadcast32(0xc3000000) // -128.0
	perm := YMM()
	idx := GLOBL("i8sPerm", RODATA|NOPTR)
	for i, v := range []uint32{0, 4, 1, 5, 2, 6, 3, 7} {
		DATA(4*i, U32(v))
	}
	VMOVDQU(idx, perm)
	sum := YMM()
	VPXOR(sum, sum, sum)

	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("reduce"))
	v := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for j, t := range v {
		VMULPS(Mem{Base: x, Disp: 32 * j}, s, t)
		VROUNDPS(U8(0), t, t)
		VMINPS(hiC, t, t)
		VMAXPS(loC, t, t)
		VCVTPS2DQ(t, t)
		VPADDD(t, sum, sum)
	}
	VPACKSSDW(v[1], v[0], v[0])
	VPACKSSDW(v[3], v[2], v[2])
	VPACKSSWB(v[2], v[0], v[0])
	VPERMD(v[0], perm, v[0])
	VMOVDQU(v[0], Mem{Base: dst})
	ADDQ(U32(128), x)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("loop"))

	Label("reduce")
	hi := XMM()
	VEXTRACTI128(U8(1), sum, hi)
	lo := sum.AsX()
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0x4e), lo, hi)
	VPADDD(hi, lo, lo)
	VPSHUFD(U8(0xb1), lo, hi)
	VPADDD(hi, lo, lo)
	r := GP32()
	VMOVD(lo, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// addAbs4x8: torch's abs-sum inner step for 8-lane vectors (reference:
// addAbs4x8Ref): each 32-float row of x adds |x[8k+l]| to lane l of
// accumulator k, in row order, one float32 rounding per addition.
func addAbs4x8() {
	TEXT("addAbs4x8AVX2", NOSPLIT, "func(acc *[32]float32, x []float32)")
	Pragma("noescape")
	Doc("addAbs4x8AVX2 adds |x[32i+8k+l]| to acc[8k+l] for every row i of x (len(x) a multiple of 32), in row order.")
	acc := Load(Param("acc"), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), n)
	mask := broadcast32(0x7fffffff)
	a := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for k, r := range a {
		VMOVUPS(Mem{Base: acc, Disp: 32 * k}, r)
	}
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	for k, r := range a {
		t := YMM()
		VANDPS(Mem{Base: x, Disp: 32 * k}, mask, t)
		VADDPS(t, r, r)
	}
	ADDQ(U32(128), x)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	for k, r := range a {
		VMOVUPS(r, Mem{Base: acc, Disp: 32 * k})
	}
	VZEROUPPER()
	RET()
}

// decodeBF16: dst_k = float32 with bits raw_k<<16 (reference:
// decodeBF16Ref), and a flag for any value whose exponent bits are all set.
func decodeBF16() {
	TEXT("decodeBF16AVX2", NOSPLIT, "func(dst []float32, raw []byte) uint32")
	Pragma("noescape")
	Doc("decodeBF16AVX2 widens len(dst) (a multiple of 16) little-endian bf16 values of raw (len(raw) ≥ 2·len(dst)); the result is non-zero when one of them is ±Inf or NaN.")
	dst := Load(Param("dst").Base(), GP64())
	raw := Load(Param("raw").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	SHRQ(U8(4), n)
	exp := broadcast32(0x7f800000)
	flags := YMM()
	VPXOR(flags, flags, flags)
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	for h := 0; h < 2; h++ {
		v := YMM()
		VPMOVZXWD(Mem{Base: raw, Disp: 16 * h}, v)
		VPSLLD(U8(16), v, v)
		VMOVDQU(v, Mem{Base: dst, Disp: 32 * h})
		VPAND(exp, v, v)
		VPCMPEQD(exp, v, v)
		VPOR(v, flags, flags)
	}
	ADDQ(U8(32), raw)
	ADDQ(U8(64), dst)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	r := GP32()
	VPMOVMSKB(flags, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// packI2S: the x86 I2_S packing of ternary values (reference: packI2SRef):
// per 128 values c = t+1 (wrapping bytes), byte j = c[j]<<6 | c[j+32]<<4 |
// c[j+64]<<2 | c[j+96]. Word shifts are byte shifts here because every c is
// checked to be at most 2 (the result is then all ones in its mask).
func packI2S() {
	TEXT("packI2SAVX2", NOSPLIT, "func(dst []byte, t []int8) uint32")
	Pragma("noescape")
	Doc("packI2SAVX2 packs len(t) (a multiple of 128) ternary values into dst (len(dst) ≥ len(t)/4); it returns 0xffffffff when every t+1 is in 0…2, and something else otherwise (dst is then garbage).")
	dst := Load(Param("dst").Base(), GP64())
	t := Load(Param("t").Base(), GP64())
	n := Load(Param("t").Len(), GP64())
	SHRQ(U8(7), n)
	ones := broadcast32(0x01010101)
	two := broadcast32(0x02020202)
	mx := YMM()
	VPXOR(mx, mx, mx)
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	c := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for f, r := range c {
		VPADDB(Mem{Base: t, Disp: 32 * f}, ones, r)
		VPMAXUB(r, mx, mx)
	}
	VPSLLW(U8(6), c[0], c[0])
	VPSLLW(U8(4), c[1], c[1])
	VPSLLW(U8(2), c[2], c[2])
	VPOR(c[1], c[0], c[0])
	VPOR(c[3], c[2], c[2])
	VPOR(c[2], c[0], c[0])
	VMOVDQU(c[0], Mem{Base: dst})
	ADDQ(U32(128), t)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	VPMAXUB(two, mx, mx)
	VPCMPEQB(two, mx, mx)
	r := GP32()
	VPMOVMSKB(mx, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// ternarize: t = +1 where float32(x·inv) > 0.5, −1 where it is < −0.5, else
// 0 (reference: ternarizeRef; a NaN product compares false both ways, as in
// Go): VMULPS, two ordered VCMPPS, the difference of the masks, then the
// packs and VPERMD of quantI8S.
func ternarize() {
	TEXT("ternarizeAVX2", NOSPLIT, "func(dst []int8, x []float32, inv float32)")
	Pragma("noescape")
	Doc("ternarizeAVX2 writes the ternary codes of len(x) (a multiple of 32) elements into dst (len(dst) ≥ len(x)).")
	dst := Load(Param("dst").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), n)
	sp, err := Param("inv").Resolve()
	if err != nil {
		panic(err)
	}
	s := YMM()
	VBROADCASTSS(sp.Addr, s)
	half := broadcast32(0x3f000000)  // 0.5
	nhalf := broadcast32(0xbf000000) // -0.5
	perm := YMM()
	VMOVDQU(GLOBL("ternPerm", RODATA|NOPTR), perm)
	for i, v := range []uint32{0, 4, 1, 5, 2, 6, 3, 7} {
		DATA(4*i, U32(v))
	}
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	v := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for j, t := range v {
		lt := YMM()
		VMULPS(Mem{Base: x, Disp: 32 * j}, s, t)
		VCMPPS(U8(0x11), nhalf, t, lt) // LT_OQ: p < -0.5
		VCMPPS(U8(0x1e), half, t, t)   // GT_OQ: p > 0.5
		VPSUBD(t, lt, t)               // −1 − 0 or 0 − (−1)
	}
	VPACKSSDW(v[1], v[0], v[0])
	VPACKSSDW(v[3], v[2], v[2])
	VPACKSSWB(v[2], v[0], v[0])
	VPERMD(v[0], perm, v[0])
	VMOVDQU(v[0], Mem{Base: dst})
	ADDQ(U32(128), x)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// bf16ToF16: each little-endian bf16 widened to float32 (exact) and rounded
// to F16 by VCVTPS2PH with immediate 0 (round to nearest even), the
// rounding of x448/float16's Fromfloat32 (reference: bf16ToF16Ref). The
// flag is set for any |b| ≥ 0x4780 (65536 and above, infinities, NaNs),
// which the caller handles on the reference path.
func bf16ToF16() {
	TEXT("bf16ToF16AVX2", NOSPLIT, "func(out []byte, raw []byte) uint32")
	Pragma("noescape")
	Doc("bf16ToF16AVX2 converts len(raw)/2 (a multiple of 16) bf16 values to F16 bits in out (len(out) ≥ len(raw)); the result is non-zero when one has |b| ≥ 0x4780.")
	out := Load(Param("out").Base(), GP64())
	raw := Load(Param("raw").Base(), GP64())
	n := Load(Param("raw").Len(), GP64())
	SHRQ(U8(5), n)
	absMask := broadcast32(0x7fffffff)
	limit := broadcast32(0x477fffff)
	flags := YMM()
	VPXOR(flags, flags, flags)
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	for h := 0; h < 2; h++ {
		v, a := YMM(), YMM()
		VPMOVZXWD(Mem{Base: raw, Disp: 16 * h}, v)
		VPSLLD(U8(16), v, v)
		VPAND(absMask, v, a)
		VPCMPGTD(limit, a, a) // |bits| > 0x477fffff
		VPOR(a, flags, flags)
		VCVTPS2PH(U8(0), v, Mem{Base: out, Disp: 16 * h})
	}
	ADDQ(U8(32), raw)
	ADDQ(U8(32), out)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	r := GP32()
	VPMOVMSKB(flags, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// unpackU8: codes[i·stride + k] = min(((packed[k] >> 2i) & 3) − 1, 1) for
// the four bit pairs i of each byte (reference: unpackU8Ref).
func unpackU8() {
	TEXT("unpackU8AVX2", NOSPLIT, "func(codes []int8, stride int, packed []byte)")
	Pragma("noescape")
	Doc("unpackU8AVX2 unpacks len(packed) (a multiple of 32) bytes into codes[i·stride+k], i < 4; len(codes) ≥ 3·stride+len(packed).")
	codes := Load(Param("codes").Base(), GP64())
	stride := Load(Param("stride"), GP64())
	p := Load(Param("packed").Base(), GP64())
	n := Load(Param("packed").Len(), GP64())
	SHRQ(U8(5), n)
	three := broadcast32(0x03030303)
	two := broadcast32(0x02020202)
	one := broadcast32(0x01010101)
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	v := YMM()
	VMOVDQU(Mem{Base: p}, v)
	dst := GP64()
	MOVQ(codes, dst)
	for i := 0; i < 4; i++ {
		c := YMM()
		if i == 0 {
			VPAND(three, v, c)
		} else {
			VPSRLW(U8(2*i), v, c)
			VPAND(three, c, c)
		}
		VPMINUB(two, c, c)
		VPSUBB(one, c, c)
		VMOVDQU(c, Mem{Base: dst})
		if i < 3 {
			ADDQ(stride, dst)
		}
	}
	ADDQ(U8(32), p)
	ADDQ(U8(32), codes)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// broadcast16 returns a YMM register holding v in every 16-bit lane.
func broadcast16(v uint16) VecVirtual { return broadcast32(uint32(v) | uint32(v)<<16) }

// absSumBF16Blocks: per block of blockLen bf16 values, four 8-lane
// accumulators from zero, |x| of every 32-value row added in row order
// (reference: absSumBF16BlocksRef, the additions of addAbs4x8Ref). The sign
// bit is cleared on the 16-bit words; VPUNPCKLWD/VPUNPCKHWD with a zero
// register put each word in the high half of a dword (the exact widening)
// but in the lane order {0-3, 8-11} / {4-7, 12-15} of each 16 values, so the
// accumulators hold a fixed permutation of the 32 lanes, undone by
// VPERM2F128 when a block's sums are stored. Each lane still receives the
// same values in the same order, so the sums are the reference's bits.
// Non-finite: a cleared word above 0x7f7f has its exponent all ones.
func absSumBF16Blocks() {
	TEXT("absSumBF16BlocksAVX2", NOSPLIT, "func(sums []float32, raw []byte, blockLen int) uint32")
	Pragma("noescape")
	Doc("absSumBF16BlocksAVX2 writes the 32 level-0 sums of |x| of every block of blockLen (a multiple of 32) bf16 values of raw into sums (len(sums)/32 blocks, len(raw) = 2·blockLen·len(sums)/32); the result is non-zero when a value is ±Inf or NaN.")
	sums := Load(Param("sums").Base(), GP64())
	nb := Load(Param("sums").Len(), GP64())
	SHRQ(U8(5), nb)
	raw := Load(Param("raw").Base(), GP64())
	rows := Load(Param("blockLen"), GP64())
	SHRQ(U8(5), rows)
	absMask := broadcast16(0x7fff)
	limit := broadcast16(0x7f7f)
	zero := YMM()
	VPXOR(zero, zero, zero)
	flags := YMM()
	VPXOR(flags, flags, flags)
	Label("block")
	CMPQ(nb, Imm(0))
	JE(LabelRef("done"))
	a := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, r := range a {
		VXORPS(r, r, r)
	}
	i := GP64()
	MOVQ(rows, i)
	Label("row")
	for h := 0; h < 2; h++ {
		w, t, lo, hi := YMM(), YMM(), YMM(), YMM()
		VPAND(Mem{Base: raw, Disp: 32 * h}, absMask, w)
		VPCMPGTW(limit, w, t)
		VPOR(t, flags, flags)
		VPUNPCKLWD(w, zero, lo)
		VPUNPCKHWD(w, zero, hi)
		VADDPS(lo, a[2*h], a[2*h])
		VADDPS(hi, a[2*h+1], a[2*h+1])
	}
	ADDQ(U8(64), raw)
	DECQ(i)
	JNZ(LabelRef("row"))
	// a[0] = {0-3 | 8-11}, a[1] = {4-7 | 12-15}, a[2], a[3] the same for 16-31.
	for h := 0; h < 2; h++ {
		k0, k1 := YMM(), YMM()
		VPERM2F128(U8(0x20), a[2*h+1], a[2*h], k0)
		VPERM2F128(U8(0x31), a[2*h+1], a[2*h], k1)
		VMOVUPS(k0, Mem{Base: sums, Disp: 64 * h})
		VMOVUPS(k1, Mem{Base: sums, Disp: 64*h + 32})
	}
	ADDQ(U8(128), sums)
	DECQ(nb)
	JMP(LabelRef("block"))
	Label("done")
	r := GP32()
	VPMOVMSKB(flags, r)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// ternarizePackI2S: per 128 bf16 values, the four 32-value groups f are
// widened (VPUNPCKLWD/VPUNPCKHWD with zero, lane order {0-3, 8-11},
// {4-7, 12-15} per 16 values), multiplied by inv and compared with ±0.5 as
// in ternarize (reference: ternarizePackI2SRef); VPACKSSDW of each
// unpacked pair restores the order of the 16 words, VPACKSSWB leaves the
// bytes in qword order {0, 2, 1, 3}, the same for every group. The groups
// are combined as c0<<6 | c1<<4 | c2<<2 | c3 (c = t+1 ≤ 2, so word shifts
// stay inside the bytes) and one VPERMQ per 128 values puts the bytes in
// order.
func ternarizePackI2S() {
	TEXT("ternarizePackI2SAVX2", NOSPLIT, "func(dst []byte, raw []byte, inv float32)")
	Pragma("noescape")
	Doc("ternarizePackI2SAVX2 ternarizes len(raw)/2 (a multiple of 128) bf16 values of raw with inv and packs them into dst (len(dst) ≥ len(raw)/8) in the x86 I2_S layout.")
	dst := Load(Param("dst").Base(), GP64())
	raw := Load(Param("raw").Base(), GP64())
	n := Load(Param("raw").Len(), GP64())
	SHRQ(U8(8), n)
	sp, err := Param("inv").Resolve()
	if err != nil {
		panic(err)
	}
	s := YMM()
	VBROADCASTSS(sp.Addr, s)
	half := broadcast32(0x3f000000)  // 0.5
	nhalf := broadcast32(0xbf000000) // -0.5
	ones := broadcast32(0x01010101)
	zero := YMM()
	VPXOR(zero, zero, zero)
	Label("loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("done"))
	acc := YMM()
	for f := 0; f < 4; f++ {
		var t [4]VecVirtual
		for h := 0; h < 2; h++ {
			m := Mem{Base: raw, Disp: 64*f + 32*h}
			t[2*h], t[2*h+1] = YMM(), YMM()
			VPUNPCKLWD(m, zero, t[2*h])
			VPUNPCKHWD(m, zero, t[2*h+1])
		}
		for _, v := range t {
			lt := YMM()
			VMULPS(v, s, v)
			VCMPPS(U8(0x11), nhalf, v, lt) // LT_OQ: p < -0.5
			VCMPPS(U8(0x1e), half, v, v)   // GT_OQ: p > 0.5
			VPSUBD(v, lt, v)               // −1 − 0 or 0 − (−1)
		}
		VPACKSSDW(t[1], t[0], t[0]) // words 0-15 of the group
		VPACKSSDW(t[3], t[2], t[2]) // words 16-31
		VPACKSSWB(t[2], t[0], t[0]) // bytes in qword order 0, 2, 1, 3
		VPADDB(ones, t[0], t[0])
		if f == 0 {
			acc = t[0]
			continue
		}
		VPSLLW(U8(2), acc, acc)
		VPOR(t[0], acc, acc)
	}
	VPERMQ(U8(0xd8), acc, acc)
	VMOVDQU(acc, Mem{Base: dst})
	ADDQ(U32(256), raw)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// fma32Acc: acc[i] + b[i]·c with one rounding (VFMADD231PS), eight lanes a
// step, which is FMA32 for every result that is not a NaN (reference:
// fma32AccRef); a group with a NaN result is left to the reference, which
// picks FMA32's NaN.
func fma32Acc() {
	TEXT("fma32AccAVX2", NOSPLIT, "func(acc, b []float32, c float32) int")
	Pragma("noescape")
	Doc("fma32AccAVX2 sets acc[i] = acc[i] + b[i]·c (one rounding, VFMADD231PS) for the groups of eight of acc (len(acc) a multiple of 8, len(b) ≥ len(acc)) up to the first group with a NaN result, which it leaves unchanged, and returns the number of values done.")
	acc := Load(Param("acc").Base(), GP64())
	b := Load(Param("b").Base(), GP64())
	n := Load(Param("acc").Len(), GP64())
	SHRQ(U8(3), n)
	done := GP64()
	XORQ(done, done)
	ca, err := Param("c").Resolve()
	if err != nil {
		panic(err)
	}
	cv := YMM()
	VBROADCASTSS(ca.Addr, cv)
	Label("fmaAccLoop")
	CMPQ(n, Imm(0))
	JE(LabelRef("fmaAccDone"))
	r := YMM()
	VMOVUPS(Mem{Base: acc}, r)
	VFMADD231PS(Mem{Base: b}, cv, r) // r = r + c·b
	u := YMM()
	VCMPPS(U8(3), r, r, u) // unordered: NaN lanes
	VPTEST(u, u)
	JNE(LabelRef("fmaAccDone"))
	VMOVUPS(r, Mem{Base: acc})
	ADDQ(U8(32), acc)
	ADDQ(U8(32), b)
	ADDQ(U8(8), done)
	DECQ(n)
	JMP(LabelRef("fmaAccLoop"))
	Label("fmaAccDone")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// fmaF16Acc: ggml_vec_mad_f16 on AVX2/FMA, reference fmaF16AccRef: each
// F16 lane of acc widened, plus the widened v lane times c in one fused
// multiply-add, rounded back to F16 to nearest even.
func fmaF16Acc() {
	f16Groups("fmaF16AccAVX2", "func(acc, v []uint16, c float32) int", true,
		"fmaF16AccAVX2 sets acc[i] = F16(acc[i] + v[i]·c) (one rounding to float32 by VFMADD231PS, then VCVTPS2PH) for the groups of eight of acc (len(acc) a multiple of 8, len(v) ≥ len(acc)) up to the first group with a NaN result, which it leaves unchanged, and returns the number of values done.")
}

// scaleF16: ggml_vec_scale_f16 on AVX2, reference scaleF16Ref: each F16
// lane widened, times c, rounded back to F16 to nearest even.
func scaleF16() {
	f16Groups("scaleF16AVX2", "func(acc []uint16, c float32) int", false,
		"scaleF16AVX2 sets acc[i] = F16(acc[i]·c) for the groups of eight of acc (len(acc) a multiple of 8) up to the first group with a NaN result, which it leaves unchanged, and returns the number of values done.")
}

// f16Groups emits fmaF16Acc (mad: acc + v·c) or scaleF16 (acc·c) over
// groups of eight F16 lanes (VCVTPH2PS, VFMADD231PS or VMULPS, VCVTPS2PH).
// A group with a NaN result stops the loop unchanged: the reference picks
// its payload.
func f16Groups(name, sig string, mad bool, doc string) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc)
	acc := Load(Param("acc").Base(), GP64())
	var v Register
	if mad {
		v = Load(Param("v").Base(), GP64())
	}
	n := Load(Param("acc").Len(), GP64())
	SHRQ(U8(3), n)
	done := GP64()
	XORQ(done, done)
	ca, err := Param("c").Resolve()
	if err != nil {
		panic(err)
	}
	cv := YMM()
	VBROADCASTSS(ca.Addr, cv)
	Label(name + "Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef(name + "Done"))
	a := YMM()
	VCVTPH2PS(Mem{Base: acc}, a)
	if mad {
		b := YMM()
		VCVTPH2PS(Mem{Base: v}, b)
		VFMADD231PS(b, cv, a) // a = a + c·b
	} else {
		VMULPS(cv, a, a)
	}
	u := YMM()
	VCMPPS(U8(3), a, a, u) // unordered: NaN lanes
	VPTEST(u, u)
	JNE(LabelRef(name + "Done"))
	h := XMM()
	VCVTPS2PH(U8(0), a, h)
	VMOVDQU(h, Mem{Base: acc})
	ADDQ(U8(16), acc)
	if mad {
		ADDQ(U8(16), v)
	}
	ADDQ(U8(8), done)
	DECQ(n)
	JMP(LabelRef(name + "Loop"))
	Label(name + "Done")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// quantQ8_0: ggml's AVX2 quantize_row_q8_0 (reference quantizeQ8_0Ref):
// per block of 32, amax = max |x| (VANDPS of the sign, a VMAXPS tree: the
// maximum of finite values does not depend on the order), d =
// F16(amax/127) widened back, id = 127/amax (0 when amax is 0), and the
// codes VCVTPS2DQ(x·id) under the default rounding (to nearest even),
// packed to bytes in order. A block with a NaN lane or an infinite amax
// stops the loop (the reference decides what those give).
func quantQ8_0() {
	TEXT("quantQ8_0AVX2", NOSPLIT, "func(qs []int8, d []float32, x []float32) int")
	Pragma("noescape")
	Doc("quantQ8_0AVX2 quantizes the blocks of 32 of x (len(x) = 32·len(d), len(qs) ≥ len(x)) to Q8_0 codes in qs and widened F16 scales in d up to the first block with a NaN or an infinity, and returns the number of blocks done.")
	qs := Load(Param("qs").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("d").Len(), GP64())
	done := GP64()
	XORQ(done, done)
	absm := broadcast32(0x7fffffff)
	c127 := broadcast32(0x42fe0000) // 127.0
	inf := broadcast32(0x7f800000)
	perm := YMM()
	idx := GLOBL("q80Perm", RODATA|NOPTR)
	for i, v := range []uint32{0, 4, 1, 5, 2, 6, 3, 7} {
		DATA(4*i, U32(v))
	}
	VMOVDQU(idx, perm)

	Label("q80Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("q80Done"))
	v := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for j, t := range v {
		VMOVUPS(Mem{Base: x, Disp: 32 * j}, t)
	}
	// NaN lanes: unordered with themselves.
	u0, u1 := YMM(), YMM()
	VCMPPS(U8(3), v[0], v[0], u0)
	VCMPPS(U8(3), v[1], v[1], u1)
	VORPS(u1, u0, u0)
	VCMPPS(U8(3), v[2], v[2], u1)
	VORPS(u1, u0, u0)
	VCMPPS(U8(3), v[3], v[3], u1)
	VORPS(u1, u0, u0)
	VPTEST(u0, u0)
	JNE(LabelRef("q80Done"))
	a := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for j := range a {
		VANDPS(absm, v[j], a[j])
	}
	VMAXPS(a[1], a[0], a[0])
	VMAXPS(a[3], a[2], a[2])
	VMAXPS(a[2], a[0], a[0])
	hi := XMM()
	VEXTRACTF128(U8(1), a[0], hi)
	m := a[0].AsX()
	VMAXPS(hi, m, m)
	VMOVHLPS(m, m, hi)
	VMAXPS(hi, m, m)
	VPSHUFD(U8(1), m, hi)
	VMAXSS(hi, m, m) // amax in lane 0
	// amax = +Inf: the codes would be NaN·0; the reference's.
	VUCOMISS(inf.AsX(), m)
	JE(LabelRef("q80Done"))
	t := XMM()
	VDIVSS(c127.AsX(), m, t) // amax / 127
	h := XMM()
	VCVTPS2PH(U8(0), t, h)
	VCVTPH2PS(h, t)
	VMOVSS(t, Mem{Base: d})
	id := XMM()
	VDIVSS(m, c127.AsX(), id) // 127 / amax
	z, zm := XMM(), XMM()
	VXORPS(z, z, z)
	VCMPSS(U8(0), z, m, zm) // amax == 0
	VANDNPS(id, zm, id)     // id = 0 there
	idy := YMM()
	VBROADCASTSS(id, idy)
	for j := range v {
		VMULPS(idy, v[j], v[j])
		VCVTPS2DQ(v[j], v[j])
	}
	VPACKSSDW(v[1], v[0], v[0])
	VPACKSSDW(v[3], v[2], v[2])
	VPACKSSWB(v[2], v[0], v[0])
	VPERMD(v[0], perm, v[0])
	VMOVDQU(v[0], Mem{Base: qs})
	ADDQ(U32(128), x)
	ADDQ(U8(32), qs)
	ADDQ(U8(4), d)
	INCQ(done)
	DECQ(n)
	JMP(LabelRef("q80Loop"))
	Label("q80Done")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}
