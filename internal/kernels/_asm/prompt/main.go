// Command prompt writes the amd64 assembly of package kernels' batched
// prompt kernels and the other AVX-512 VNNI kernels (the sixteen-row Q2_0
// kernel is q2.go) (../prompt_amd64.s and ../prompt_stubs_amd64.go) with
// github.com/mmcloughlin/avo. It is kept apart from ../gen.go so the two
// generated files change independently; run it through `go generate` in
// internal/kernels (see prompt_amd64.go there).
//
// Every kernel computes exactly what its pure-Go reference computes (the
// references are named in each kernel's comment).
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels/_asm/iq2bn"
)

func main() {
	ConstraintExpr("!purego")
	dotI2SBatch()
	expSubGroups()
	dotIQ2BNRows()
	dotIQ2BNRows8()
	dotQ2_0RowsAVX512()
	Generate()
}

// vpdpbusd emits VPDPBUSD src2, src1, dst (dst += Σ of four u8(src1)·s8(src2)
// products per 32-bit lane, AVX512_VNNI), which avo v0.5.0 does not list;
// the Go assembler knows it.
func vpdpbusd(src2, src1, dst Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Operands: []Op{src2, src1, dst},
		Inputs:   []Op{src2, src1, dst},
		Outputs:  []Op{dst},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// i2sBatchTokens is the number of token rows of dotI2SBatchVNNI; it must
// match I2SBatchTokens in ../i2s_batch.go.
const i2sBatchTokens = 8

// dotI2SBatch: Σ code·q_t of each packed I2_S row with eight token rows
// (reference: dotI2SRef per token), the activations laid out by
// PackI2SBatch. Per chunk of two 32-byte blocks the row's 64 bytes are
// loaded once; shifts and masks give the four 2-bit code vectors s0…s3
// (s0: bits 7-6 of every byte), VPUNPCKLWD/VPUNPCKHWD interleave their
// byte pairs so that every 32-bit lane holds the codes of one int16 lane of
// the reference (bytes 2l and 2l+1) only, and VPDPBUSD adds the four
// products of a 32-bit lane (unsigned codes ≤ 3 times signed activations,
// exact in int32) for each token into two accumulators (lanes 0-3 and 8-11;
// lanes 4-7 and 12-15). After each 32-block group the two blocks' halves
// are added, every lane is truncated to int16 (VPMOVDW: the reference's
// wrapping int16 sum of the same exact value) and widened again pairwise
// (VPMADDWD with ones), and a transposing VPHADDD tree sums each token's
// lanes into the row's eight totals.
func dotI2SBatch() {
	TEXT("dotI2SBatchVNNI", NOSPLIT, "func(sums []int32, rows []byte, rowB, nb int, xt []int8)")
	Pragma("noescape")
	Doc("dotI2SBatchVNNI adds Σ code·q_t over the first nb 32-byte blocks of every row (rows start rowB bytes apart in rows) for the eight token rows packed in xt (PackI2SBatch layout, from those blocks' first chunk) to sums[8r+t]; nb ≥ 1, len(sums)/8 rows.")
	sums := Load(Param("sums").Base(), GP64())
	nrows := Load(Param("sums").Len(), GP64())
	SHRQ(U8(3), nrows)
	rowStart := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	nbRow := Load(Param("nb"), GP64())
	xtBase := Load(Param("xt").Base(), GP64())
	row := GP64()

	t := GP32()
	MOVL(U32(0x03030303), t)
	mx := XMM()
	VMOVD(t, mx)
	mask := ZMM()
	VPBROADCASTD(mx, mask)
	MOVL(U32(0x00010001), t)
	ox := XMM()
	VMOVD(t, ox)
	ones := YMM()
	VPBROADCASTD(ox, ones)
	perm := GLOBL("i2sBatchEvenOdd", RODATA|NOPTR)
	for i := 0; i < 32; i++ {
		DATA(4*i, U32(uint32(2*(i%16)+i/16)))
	}
	idxE, idxO := ZMM(), ZMM()
	VMOVDQU32(perm, idxE)
	VMOVDQU32(perm.Offset(64), idxO)

	const T = i2sBatchTokens
	Label("bRow")
	CMPQ(nrows, Imm(0))
	JE(LabelRef("bDone"))
	MOVQ(rowStart, row)
	xt := GP64()
	MOVQ(xtBase, xt)
	nb := GP64()
	MOVQ(nbRow, nb)
	tot := YMM()
	VPXORD(tot, tot, tot)

	Label("bGroup")
	CMPQ(nb, Imm(0))
	JE(LabelRef("bRowEnd"))
	g := GP64()
	MOVQ(U32(32), g)
	CMPQ(nb, g)
	CMOVQLT(nb, g)
	SUBQ(g, nb)
	var lo, hi [T]VecVirtual
	for k := 0; k < T; k++ {
		lo[k], hi[k] = ZMM(), ZMM()
		VPXORD(lo[k], lo[k], lo[k])
		VPXORD(hi[k], hi[k], hi[k])
	}
	chunk := func(half bool) {
		c := ZMM()
		if half {
			VMOVDQU32(Mem{Base: row}, c.AsY()) // upper half zero: no codes
		} else {
			VMOVDQU64(Mem{Base: row}, c)
		}
		s0, s1, s2 := ZMM(), ZMM(), ZMM()
		VPSRLW(U8(6), c, s0)
		VPSRLW(U8(4), c, s1)
		VPSRLW(U8(2), c, s2)
		VPANDD(mask, s0, s0)
		VPANDD(mask, s1, s1)
		VPANDD(mask, s2, s2)
		VPANDD(mask, c, c) // s3
		a, b, cc, d := ZMM(), ZMM(), ZMM(), ZMM()
		VPUNPCKLWD(s1, s0, a)
		VPUNPCKHWD(s1, s0, b)
		VPUNPCKLWD(c, s2, cc)
		VPUNPCKHWD(c, s2, d)
		for k := 0; k < T; k++ {
			base := 256 * k
			vpdpbusd(Mem{Base: xt, Disp: base}, a, lo[k])
			vpdpbusd(Mem{Base: xt, Disp: base + 64}, b, hi[k])
			vpdpbusd(Mem{Base: xt, Disp: base + 128}, cc, lo[k])
			vpdpbusd(Mem{Base: xt, Disp: base + 192}, d, hi[k])
		}
		ADDQ(U32(256*T), xt)
	}
	Label("bChunk")
	CMPQ(g, Imm(2))
	JL(LabelRef("bTail"))
	chunk(false)
	ADDQ(U8(64), row)
	SUBQ(U8(2), g)
	JMP(LabelRef("bChunk"))
	Label("bTail")
	CMPQ(g, Imm(0))
	JE(LabelRef("bReduce"))
	chunk(true)
	ADDQ(U8(32), row)

	Label("bReduce")
	// Per token: the eight int32 pair sums of its sixteen wrapped lanes.
	var u [T]VecVirtual
	for k := 0; k < T; k++ {
		lh, hh := YMM(), YMM()
		VEXTRACTI64X4(U8(1), lo[k], lh)
		VEXTRACTI64X4(U8(1), hi[k], hh)
		l, h := lo[k].AsY(), hi[k].AsY()
		VPADDD(lh, l, l)
		VPADDD(hh, h, h)
		VINSERTI64X4(U8(1), h, lo[k], lo[k])
		w := YMM()
		VPMOVDW(lo[k], w)
		VPMADDWD(ones, w, w)
		u[k] = w
	}
	// Transposing sums (EVEX instructions only: the registers may be
	// Y16-Y31): token pairs in one ZMM, then three rounds of adding the
	// even and odd dwords of two vectors (VPERMT2D), which leaves token t's
	// sum in dword t.
	var z [T / 2]VecVirtual
	for k := 0; k < T/2; k++ {
		z[k] = ZMM()
		VINSERTI64X4(U8(1), u[2*k+1], u[2*k].AsZ(), z[k])
	}
	pairs := func(x, y VecVirtual) VecVirtual {
		e := ZMM()
		VMOVDQA64(x, e)
		VPERMT2D(y, idxE, e)
		VPERMT2D(y, idxO, x)
		VPADDD(x, e, e)
		return e
	}
	s01 := pairs(z[0], z[1])
	s23 := pairs(z[2], z[3])
	s4 := pairs(s01, s23)
	r0 := pairs(s4, s4)
	VPADDD(r0.AsY(), tot, tot)
	JMP(LabelRef("bGroup"))

	Label("bRowEnd")
	VPADDD(Mem{Base: sums}, tot, tot)
	VMOVDQU32(tot, Mem{Base: sums})
	ADDQ(U8(4*T), sums)
	ADDQ(rowB, rowStart)
	DECQ(nrows)
	JMP(LabelRef("bRow"))

	Label("bDone")
	VZEROUPPER()
	RET()
}

// expSubGroups: dst[i] = Exp(src[i] − m) for groups of sixteen, up to the
// first group whose exponents leave Exp's normal range (reference: Exp in
// ../exp.go, the operations of siluGroupsAVX2's exponential in 16 lanes;
// the subtraction is one float32 VSUBPS as in the reference's caller).
func expSubGroups() {
	TEXT("expSubGroupsAVX512", NOSPLIT, "func(dst, src []float32, m float32) int")
	Pragma("noescape")
	Doc("expSubGroupsAVX512 writes Exp(src[i] − m) to dst[i] for the groups of sixteen of src (len(src) a multiple of 16, len(dst) ≥ len(src)) up to the first group Exp's fast path cannot take, and returns the number of values done.")
	dst := Load(Param("dst").Base(), GP64())
	src := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(4), n)
	ma, err := Param("m").Resolve()
	if err != nil {
		panic(err)
	}
	mv := ZMM()
	VBROADCASTSS(ma.Addr, mv)
	done := GP64()
	XORQ(done, done)
	tab := GLOBL("expSubConst", RODATA|NOPTR)
	consts := []uint32{}
	for _, v := range []float32{0x1.8p23, 0x1.715476p+0, 0x1.62e4p-1, 0x1.7f7d1cp-20,
		0x1.ffffecp-1, 0x1.fffdb6p-2, 0x1.555e66p-3, 0x1.573e2ep-5, 0x1.0e4020p-7, 126} {
		consts = append(consts, math.Float32bits(v))
	}
	consts = append(consts, 0x7fffffff, 0x3f800000)
	for i, c := range consts {
		DATA(4*i, U32(c))
	}
	cv := make([]VecVirtual, len(consts))
	for i := range consts {
		cv[i] = ZMM()
		VBROADCASTSS(tab.Offset(4*i), cv[i])
	}
	shift, log2e, ln2hi, ln2lo := cv[0], cv[1], cv[2], cv[3]
	c1, c2, c3, c4, c5 := cv[4], cv[5], cv[6], cv[7], cv[8]
	lim, abs, oneBits := cv[9], cv[10], cv[11]

	Label("expLoop")
	CMPQ(n, Imm(0))
	JE(LabelRef("expDone"))
	a := ZMM()
	VMOVUPS(Mem{Base: src}, a)
	VSUBPS(mv, a, a) // a = src − m
	z := ZMM()
	VMOVAPS(shift, z)
	VFMADD231PS(log2e, a, z) // z = shift + a·log2e
	nn := ZMM()
	VSUBPS(shift, z, nn) // n = z − shift
	an := ZMM()
	VANDPS(abs, nn, an)
	k := K()
	VCMPPS(U8(0x12), lim, an, k) // |n| ≤ 126, false for NaN (LE_OQ)
	bits := GP32()
	KMOVW(k, bits)
	CMPL(bits, U32(0xffff))
	JNE(LabelRef("expDone"))
	b := ZMM()
	VMOVAPS(a, b)
	VFNMADD231PS(ln2hi, nn, b) // b = a − n·ln2hi
	VFNMADD231PS(ln2lo, nn, b) // b = b − n·ln2lo
	u := ZMM()
	VMULPS(b, b, u)
	c1b := ZMM()
	VMULPS(c1, b, c1b)
	odd := ZMM()
	VMOVAPS(c2, odd)
	VFMADD231PS(c3, b, odd) // c2 + c3·b
	high := ZMM()
	VMOVAPS(c4, high)
	VFMADD231PS(c5, b, high)  // c4 + c5·b
	VFMADD231PS(high, u, odd) // p = odd + high·u
	VFMADD231PS(odd, u, c1b)  // p = c1b + p·u
	kk := ZMM()
	VPSLLD(U8(23), z, kk)
	VPADDD(oneBits, kk, kk)
	VFMADD231PS(kk, c1b, kk) // e = k + k·p
	VMOVUPS(kk, Mem{Base: dst})
	ADDQ(U8(64), src)
	ADDQ(U8(64), dst)
	ADDQ(U8(16), done)
	DECQ(n)
	JMP(LabelRef("expLoop"))

	Label("expDone")
	VZEROUPPER()
	Store(done, ReturnIndex(0))
	RET()
}

// dotIQ2BNRows: for each row (an f32 scale, then 16-byte IQ2_BN blocks),
// the four Q8_K64 group sums S_g and ik_llama.cpp's float epilogue, as
// ../gen.go's dotIQ2BNRowsAVX2 (reference: dotIQ2BNRowsRef). A block's 16
// bytes are broadcast to the four 128-bit lanes of a ZMM and lane i is
// shifted right by 2i bits per 32-bit word, so after the 0x03 mask byte j
// of lane i is the code of weight 16i + j; VPDPBUSD adds the products with
// the 64 activation codes of the block (unsigned codes ≤ 3 times signed
// int8, exact in int32) four at a time, so 32-bit word d of every lane
// holds a part of group d's sum. Four blocks go to four accumulators per
// step. The lanes' words d are added (exact), then v = d·S − minus in one
// fused multiply-subtract, (v_0 + v_2) + (v_1 + v_3) and the row scale.
func dotIQ2BNRows() {
	TEXT("dotIQ2BNRowsVNNI", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32)")
	Pragma("noescape")
	Doc("dotIQ2BNRowsVNNI is dotIQ2BNRowsAVX2 (the same results) with AVX-512 F and VNNI.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	dP := Load(Param("d"), GP64())
	mP := Load(Param("minus"), GP64())
	dv, mv := XMM(), XMM()
	VMOVUPS(Mem{Base: dP}, dv)
	VMOVUPS(Mem{Base: mP}, mv)
	sh, mask := iq2bnDecodeConsts()
	SUBQ(U8(4), rowB)

	Label("vrow")
	CMPQ(nr, Imm(0))
	JE(LabelRef("vdone"))
	q := Load(Param("q").Base(), GP64())
	scale := XMM()
	VMOVSS(Mem{Base: row}, scale)
	ADDQ(U8(4), row)
	n := GP64()
	MOVQ(rowB, n)
	var acc [4]VecVirtual
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	block := func(disp int, a VecVirtual) {
		x := ZMM()
		VBROADCASTI32X4(Mem{Base: row, Disp: 16 * disp}, x)
		VPSRLVD(sh, x, x)
		VPANDD(mask, x, x)
		vpdpbusd(Mem{Base: q, Disp: 64 * disp}, x, a)
	}
	Label("vloop4")
	CMPQ(n, Imm(64))
	JB(LabelRef("vloop1"))
	for i := range acc {
		block(i, acc[i])
	}
	ADDQ(U8(64), row)
	ADDQ(U32(256), q)
	SUBQ(U8(64), n)
	JMP(LabelRef("vloop4"))
	Label("vloop1")
	CMPQ(n, Imm(0))
	JE(LabelRef("vsum"))
	block(0, acc[0])
	ADDQ(U8(16), row)
	ADDQ(U8(64), q)
	SUBQ(U8(16), n)
	JMP(LabelRef("vloop1"))

	Label("vsum")
	VPADDD(acc[1], acc[0], acc[0])
	VPADDD(acc[3], acc[2], acc[2])
	VPADDD(acc[2], acc[0], acc[0])
	iq2bnEpilogue(acc[0], dv, mv, scale, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef("vrow"))
	Label("vdone")
	VZEROUPPER()
	RET()
}

// dotIQ2BNRows8: dotIQ2BNRows for eight tokens at once (the prompt's
// products): each block's 16 code bytes are loaded, shifted and masked
// once (as in dotIQ2BNRows) and VPDPBUSD adds their products with the
// block's 64 activation codes of each of the eight tokens into that
// token's accumulator; per token the epilogue is dotIQ2BNRows' (exact lane
// sums, v = d·S − minus in one fused multiply-subtract, (v_0 + v_2) +
// (v_1 + v_3), the row scale), so every result is dotIQ2BNRows' bit for
// bit. Token t's codes start at q + t·k; its four group scales at dm[8t]
// and offsets at dm[8t + 4]; the result of row r is dst[8r + t].
func dotIQ2BNRows8() {
	TEXT("dotIQ2BNRows8VNNI", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, k int, dm *[64]float32)")
	Pragma("noescape")
	Doc("dotIQ2BNRows8VNNI writes dotIQ2BNRowsVNNI's result for each of len(dst)/8 consecutive rows and each of eight tokens (codes q[t·k:], scales dm[8t:8t+4], offsets dm[8t+4:8t+8]) into dst[8·row + t]; it needs AVX-512 F and VNNI.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	SHRQ(U8(3), nr)
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	k1 := Load(Param("k"), GP64())
	k3 := GP64()
	LEAQ(Mem{Base: k1, Index: k1, Scale: 2}, k3)
	dm := Load(Param("dm"), GP64())
	sh, mask := iq2bnDecodeConsts()
	SUBQ(U8(4), rowB)

	Label("b8row")
	CMPQ(nr, Imm(0))
	JE(LabelRef("b8done"))
	q0 := Load(Param("q").Base(), GP64())
	q4 := GP64()
	LEAQ(Mem{Base: q0, Index: k1, Scale: 4}, q4)
	scale := XMM()
	VMOVSS(Mem{Base: row}, scale)
	ADDQ(U8(4), row)
	n := GP64()
	MOVQ(rowB, n)
	var acc [8]VecVirtual
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	Label("b8loop")
	x := ZMM()
	VBROADCASTI32X4(Mem{Base: row}, x)
	VPSRLVD(sh, x, x)
	VPANDD(mask, x, x)
	for i := range acc {
		base := q0
		if i >= 4 {
			base = q4
		}
		m := Mem{Base: base}
		switch i % 4 {
		case 1:
			m = Mem{Base: base, Index: k1, Scale: 1}
		case 2:
			m = Mem{Base: base, Index: k1, Scale: 2}
		case 3:
			m = Mem{Base: base, Index: k3, Scale: 1}
		}
		vpdpbusd(m, x, acc[i])
	}
	ADDQ(U8(16), row)
	ADDQ(U8(64), q0)
	ADDQ(U8(64), q4)
	SUBQ(U8(16), n)
	JNE(LabelRef("b8loop"))

	for i := range acc {
		dv := XMM()
		VMOVUPS(Mem{Base: dm, Disp: 32 * i}, dv)
		iq2bnEpilogue(acc[i], dv, Mem{Base: dm, Disp: 32*i + 16}, scale, Mem{Base: dst, Disp: 4 * i})
	}
	ADDQ(U8(32), dst)
	DECQ(nr)
	JMP(LabelRef("b8row"))
	Label("b8done")
	VZEROUPPER()
	RET()
}

// iq2bnShifts is the shift table's symbol, declared by the first
// iq2bnDecodeConsts.
var iq2bnShifts *Mem

// iq2bnDecodeConsts loads the constants of an IQ2_BN block's decoding:
// the per-lane shifts 0, 2, 4, 6 (lane i of a broadcast block shifted by
// 2i bits per 32-bit word) and the 0x03 byte mask.
func iq2bnDecodeConsts() (sh, mask VecVirtual) {
	if iq2bnShifts == nil {
		m := GLOBL("iq2Shift512", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			DATA(4*i, U32(uint32(2*(i/4))))
		}
		iq2bnShifts = &m
	}
	sh = ZMM()
	VMOVDQU32(*iq2bnShifts, sh)
	t := GP32()
	MOVL(U32(0x03030303), t)
	mx := XMM()
	VMOVD(t, mx)
	mask = ZMM()
	VPBROADCASTD(mx, mask)
	return sh, mask
}

// iq2bnEpilogue finishes one row and token of the IQ2_BN kernels from the
// VPDPBUSD accumulator acc (word g of each 128-bit lane: part of group
// g's sum): the lanes added (exact), then iq2bn.Finish (also the AVX2
// kernel's epilogue, ../ternary.go).
func iq2bnEpilogue(acc, d VecVirtual, minus Op, scale VecVirtual, out Mem) {
	y := YMM()
	VEXTRACTI64X4(U8(1), acc, y)
	VPADDD(y, acc.AsY(), y)
	s := XMM()
	VEXTRACTI128(U8(1), y, s)
	VPADDD(s, y.AsX(), s)
	iq2bn.Finish(s, d, minus, scale, out)
}
