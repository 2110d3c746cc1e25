package main

import (
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// vpdpbusdBcst emits VPDPBUSD.BCST m32, src1, dst: vpdpbusd with the
// 32-bit memory operand broadcast to every lane.
func vpdpbusdBcst(m Mem, src1, dst Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Suffixes: []string{"BCST"},
		Operands: []Op{m, src1, dst},
		Inputs:   []Op{m, src1, dst},
		Outputs:  []Op{dst},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// vgf2p8affineqb emits VGF2P8AFFINEQB $0, mat, src, dst (GFNI): each
// byte of dst is the bit matrix of mat's qword times the byte of src.
func vgf2p8affineqb(mat, src, dst Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VGF2P8AFFINEQB",
		Operands: []Op{U8(0), mat, src, dst},
		Inputs:   []Op{mat, src},
		Outputs:  []Op{dst},
		ISA:      []string{"GFNI", "AVX512F"},
	})
}

// dotQ2_0RowsAVX512: DotQ2_0Rows (reference: dotQ2_0RowsRef) for a
// multiple of sixteen rows, sixteen rows in the sixteen 32-bit lanes of a
// ZMM register, so that the serial float chain of each row (sumi = fma(0,
// d_y0, S_0); sumi = fma(sumi, d_y1, S_1); sumf = fma(sumf, d_x, sumi))
// costs three VFMADD231PS per block for all sixteen rows. Per block, the
// 16 code bytes of rows 4g … 4g+3 go to the four 128-bit lanes of Z_g
// (one load, three VINSERTI32X4); a 4×4 transpose of 32-bit words inside
// each lane (VPUNPCK{L,H}DQ, VPUNPCK{L,H}QDQ) leaves in W_t the code bytes
// 4t … 4t+3 of every row, lane 4a + g holding row 4g + a.
// VGF2P8AFFINEQB moves the 2-bit code at bits 2s of each byte to bits 0-1
// (a bit matrix that copies bits 2s, 2s+1 and clears the rest), and
// VPDPBUSD adds its products with the permuted activation bytes 16s + 4t
// … 16s + 4t + 3 (broadcast: the code under weight 4j + s sits at bits 2s
// of byte j, PermuteQ2_0). W_0, W_1 cover half 0 (weights 0-31), W_2,
// W_3 half 1; minus the half's Σq they are the exact Σ(c − 1)·q. The f16
// scales are read by scalar moves, packed four to a 64-bit register in
// the same lane order, and widened exactly by VCVTPH2PS; VPERMD puts the sixteen
// results back in row order before the store.
func dotQ2_0RowsAVX512() {
	TEXT("dotQ2_0RowsAVX512", NOSPLIT, "func(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32)")
	Pragma("noescape")
	Doc("dotQ2_0RowsAVX512 is dotQ2_0RowsAVX2 for len(dst) a multiple of 16 on CPUs with AVX-512 F, BW, VNNI and GFNI (the same results).")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := GP64()
	Load(Param("rowB"), rowB)

	// The bit matrix of VGF2P8AFFINEQB: byte 7 − b of the qword selects
	// the source bits of result bit b; bits 0 and 1 take bits 2s and 2s+1.
	mats := GLOBL("q2zMats", RODATA|NOPTR)
	for s := 0; s < 4; s++ {
		DATA(8*s, U64(uint64(1)<<(2*s)<<56|uint64(1)<<(2*s+1)<<48))
	}
	var mat [4]VecVirtual
	for s := range mat {
		mat[s] = ZMM()
		VPBROADCASTQ(mats.Offset(8*s), mat[s])
	}
	// Lane 4a + g holds row 4g + a; result r is lane 4(r%4) + r/4.
	order := GLOBL("q2zOrder", RODATA|NOPTR)
	for r := 0; r < 16; r++ {
		DATA(4*r, U32(uint32(4*(r%4)+r/4)))
	}
	perm := ZMM()
	VMOVDQU32(order, perm)
	rowB3 := GP64()
	LEAQ(Mem{Base: rowB, Index: rowB, Scale: 2}, rowB3)

	Label("q2zGroup")
	CMPQ(nr, Imm(0))
	JLE(LabelRef("q2zDone"))
	var p [4]GPVirtual
	for g := range p {
		p[g] = GP64()
		if g == 0 {
			MOVQ(row, p[g])
		} else {
			LEAQ(Mem{Base: p[g-1], Index: rowB, Scale: 4}, p[g])
		}
	}
	pf := GP64()
	MOVQ(rowB, pf)
	SHLQ(U8(4), pf)
	ADDQ(row, pf)
	q := Load(Param("qp").Base(), GP64())
	qs := Load(Param("qsum").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	n := GP64()
	MOVQ(rowB, n)
	sumf := ZMM()
	VPXORD(sumf, sumf, sumf)

	Label("q2zBlock")
	var z [4]VecVirtual
	for g := range z {
		z[g] = ZMM()
		VMOVDQU32(Mem{Base: p[g], Disp: 2}, z[g].AsX())
		VINSERTI32X4(U8(1), Mem{Base: p[g], Index: rowB, Scale: 1, Disp: 2}, z[g], z[g])
		VINSERTI32X4(U8(2), Mem{Base: p[g], Index: rowB, Scale: 2, Disp: 2}, z[g], z[g])
		VINSERTI32X4(U8(3), Mem{Base: p[g], Index: rowB3, Scale: 1, Disp: 2}, z[g], z[g])
	}
	// Scales: row 4g + a to word 4a + g, four words (rows a, 4+a, 8+a,
	// 12+a) per 64-bit register, the four put together in sy.
	var sx [4]VecVirtual
	for a := 0; a < 4; a++ {
		var h GPVirtual
		for g := 0; g < 4; g++ {
			m := Mem{Base: p[g]}
			switch a {
			case 1:
				m = Mem{Base: p[g], Index: rowB, Scale: 1}
			case 2:
				m = Mem{Base: p[g], Index: rowB, Scale: 2}
			case 3:
				m = Mem{Base: p[g], Index: rowB3, Scale: 1}
			}
			v := GP64()
			MOVWQZX(m, v)
			if g == 0 {
				h = v
				continue
			}
			SHLQ(U8(16*g), v)
			ORQ(v, h)
		}
		sx[a] = XMM()
		VMOVQ(h, sx[a])
	}
	VPUNPCKLQDQ(sx[1], sx[0], sx[0])
	VPUNPCKLQDQ(sx[3], sx[2], sx[2])
	sy := YMM()
	VINSERTI128(U8(1), sx[2], sx[0].AsY(), sy)
	// The activation bytes of shift s, the same in every 128-bit lane.
	var act [4]VecVirtual
	for s := range act {
		act[s] = ZMM()
		VBROADCASTI32X4(Mem{Base: q, Disp: 16 * s}, act[s])
	}
	// acc_g lane a, word t: Σ over code bytes 4t … 4t+3 of row 4g + a.
	var acc [4]VecVirtual
	for g := range acc {
		acc[g] = ZMM()
		VPXORD(acc[g], acc[g], acc[g])
		for s := 0; s < 4; s++ {
			x := ZMM()
			vgf2p8affineqb(mat[s], z[g], x)
			vpdpbusd(act[s], x, acc[g])
		}
	}
	lo01, hi01, lo23, hi23 := ZMM(), ZMM(), ZMM(), ZMM()
	VPUNPCKLDQ(acc[1], acc[0], lo01) // per lane: A0.t0, A1.t0, A0.t1, A1.t1
	VPUNPCKHDQ(acc[1], acc[0], hi01) // A0.t2, A1.t2, A0.t3, A1.t3
	VPUNPCKLDQ(acc[3], acc[2], lo23)
	VPUNPCKHDQ(acc[3], acc[2], hi23)
	var w [4]VecVirtual
	for t := range w {
		w[t] = ZMM()
	}
	// w_t lane 4a + g: word t of row 4g + a.
	VPUNPCKLQDQ(lo23, lo01, w[0])
	VPUNPCKHQDQ(lo23, lo01, w[1])
	VPUNPCKLQDQ(hi23, hi01, w[2])
	VPUNPCKHQDQ(hi23, hi01, w[3])
	acc = w
	VPADDD(acc[1], acc[0], acc[0])
	VPADDD(acc[3], acc[2], acc[2])
	VPSUBD_BCST(Mem{Base: qs}, acc[0], acc[0])
	VPSUBD_BCST(Mem{Base: qs, Disp: 4}, acc[2], acc[2])
	f0, f1 := ZMM(), ZMM()
	VCVTDQ2PS(acc[0], f0)
	VCVTDQ2PS(acc[2], f1)
	sumi := ZMM()
	VPXORD(sumi, sumi, sumi)
	VFMADD231PS_BCST(Mem{Base: d}, f0, sumi) // fma(0, d_y, S_0), as dotQ2_0
	VFMADD231PS_BCST(Mem{Base: d, Disp: 4}, f1, sumi)
	dx := ZMM()
	VCVTPH2PS(sy, dx)
	VFMADD231PS(sumi, dx, sumf)
	// The sixteen rows are sixteen streams 18 bytes a block apart, more
	// than the hardware prefetchers follow: the next group's 16·rowB
	// bytes are prefetched in order, 288 bytes (16 blocks) a block.
	for o := 0; o < 288; o += 64 {
		PREFETCHT1(Mem{Base: pf, Disp: o})
	}
	ADDQ(U32(288), pf)
	for g := range p {
		ADDQ(U8(18), p[g])
	}
	ADDQ(U8(64), q)
	ADDQ(U8(8), qs)
	ADDQ(U8(8), d)
	SUBQ(U8(18), n)
	JNE(LabelRef("q2zBlock"))

	out := ZMM()
	VPERMD(sumf, perm, out)
	VMOVUPS(out, Mem{Base: dst})
	ADDQ(U8(64), dst)
	// p[3] ended one row further (18·blocks = rowB): row 16 of the group.
	LEAQ(Mem{Base: p[3], Index: rowB3, Scale: 1}, row)
	SUBQ(U8(16), nr)
	JMP(LabelRef("q2zGroup"))
	Label("q2zDone")
	VZEROUPPER()
	RET()
}
