package main

import (
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// vpdpbusdZ emits VPDPBUSD src2, src1, dst (dst += Σ of four u8(src1)·s8(src2)
// products per 32-bit lane, AVX512_VNNI), which avo v0.5.0 does not list;
// the Go assembler knows it.
func vpdpbusdZ(src2, src1, dst Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Operands: []Op{src2, src1, dst},
		Inputs:   []Op{src2, src1, dst},
		Outputs:  []Op{dst},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// vgf2p8affineqb emits VGF2P8AFFINEQB $imm, a, x, dst (each byte of x
// through the 8×8 bit matrix of its quadword in a, GFNI), which avo v0.5.0
// does not list; the Go assembler knows it.
func vgf2p8affineqb(imm, a, x, dst Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VGF2P8AFFINEQB",
		Operands: []Op{imm, a, x, dst},
		Inputs:   []Op{a, x},
		Outputs:  []Op{dst},
		ISA:      []string{"AVX512F", "GFNI"},
	})
}

// accTQ2_0RowsVNNI is accTQRows(false) with the integer lanes from
// AVX-512 VNNI, one row after the other (interleaving two or four rows
// was faster in L2 but several times slower once the rows came from L3 or
// memory). Per 66-byte block each 32-byte half h of qs is broadcast to both
// halves of a ZMM; VGF2P8AFFINEQB moves bits 2l and 2l+1 of every byte to
// bits 0 and 1 (l = 0 in the low half, 1 in the high half, then 2 and 3):
// these are the codes of activations 128h…128h+63 and 128h+64…128h+127 in
// order, so VPDPBUSD multiplies them with the activations as stored. A
// 32-bit lane of either 256-bit half sums the bytes 4L…4L+3 of its
// 32-activation chunk, the activations of the AVX2 kernel's lane L, so
// adding the two halves gives that kernel's eight lanes exactly (integer
// sums, no wrap: at most 256·3·128 in magnitude); the accumulator starts
// from the block's negated bsums pairs (pairs[8b+L] = −(bsums[16b+2L] +
// bsums[16b+2L+1])) in its low half, tqEpilogue's subtraction. The float
// steps are tqEpilogue's, with f16(d_x) and d_y broadcast to all lanes
// before their product (the same product in every lane).
func accTQ2_0RowsVNNI() {
	TEXT("accTQ2_0RowsVNNI", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, pairs []int32, d []float32, fused bool)")
	Pragma("noescape")
	Doc("accTQ2_0RowsVNNI is accTQ2_0RowsAVX2 for CPUs with AVX-512 F, BW, VL, VNNI and GFNI (the same results), with the bsums of each block b given as pairs[8b+L] = −(bsums[16b+2L] + bsums[16b+2L+1]); len(pairs) ≥ 8·blocks.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	fused := Load(Param("fused"), GP8())
	// Bit matrices of VGF2P8AFFINEQB: output bit 0 (matrix byte 7) is
	// input bit 2l, output bit 1 (byte 6) input bit 2l+1, with l = 0 in
	// the low and 1 in the high 256 bits of the first matrix, 2 and 3 in
	// the second.
	mats := GLOBL("tq2Mat512", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		l := i / 4
		DATA(8*i, U64(uint64(1)<<(2*l)<<56|uint64(2)<<(2*l)<<48))
	}
	var mat [2]VecVirtual
	for i := range mat {
		mat[i] = ZMM()
		VMOVDQU64(mats.Offset(64*i), mat[i])
	}
	for _, fz := range []bool{true, false} {
		id := "tq2zm"
		if fz {
			id = "tq2zf"
			CMPB(fused, U8(0))
			JE(LabelRef("tq2zmrow"))
		}
		Label(id + "row")
		CMPQ(nr, Imm(0))
		JE(LabelRef("tq2zdone"))
		q := Load(Param("q").Base(), GP64())
		pr := Load(Param("pairs").Base(), GP64())
		d := Load(Param("d").Base(), GP64())
		n := GP64()
		MOVQ(rowB, n)
		acc := YMM()
		VXORPS(acc, acc, acc)

		Label(id + "blk")
		ints := ZMM()
		VMOVDQU32(Mem{Base: pr}, ints.AsY())
		for h := 0; h < 2; h++ {
			b := ZMM()
			VBROADCASTI64X4(Mem{Base: row, Disp: 32 * h}, b)
			c0, c1 := ZMM(), ZMM()
			vgf2p8affineqb(U8(0), mat[0], b, c0)
			vgf2p8affineqb(U8(0), mat[1], b, c1)
			vpdpbusdZ(Mem{Base: q, Disp: 128 * h}, c0, ints)
			vpdpbusdZ(Mem{Base: q, Disp: 128*h + 64}, c1, ints)
		}
		lanes := YMM()
		VEXTRACTI64X4(U8(1), ints, lanes)
		VPADDD(lanes, ints.AsY(), lanes)
		VCVTDQ2PS(lanes, lanes)
		dx := XMM()
		VPBROADCASTW(Mem{Base: row, Disp: 64}, dx)
		dd := YMM()
		VCVTPH2PS(dx, dd)
		dy := YMM()
		VBROADCASTSS(Mem{Base: d}, dy)
		VMULPS(dy, dd, dd)
		if fz {
			VFMADD231PS(dd, lanes, acc)
		} else {
			VMULPS(dd, lanes, lanes)
			VADDPS(lanes, acc, acc)
		}
		ADDQ(U8(66), row)
		ADDQ(U32(256), q)
		ADDQ(U8(32), pr)
		ADDQ(U8(4), d)
		SUBQ(U8(66), n)
		JNE(LabelRef(id + "blk"))
		r := hsumExp8(acc)
		VMOVSS(r, Mem{Base: dst})
		ADDQ(U8(4), dst)
		DECQ(nr)
		JMP(LabelRef(id + "row"))
	}
	Label("tq2zdone")
	VZEROUPPER()
	RET()
}
