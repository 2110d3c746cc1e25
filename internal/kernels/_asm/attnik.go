package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// transposeF16x8 loads eight rows of eight F16 values (row r at
// row0 + r·step bytes, 16 bytes each; rows 4…7 from row4) and returns the
// eight columns, column j holding element j of rows 0…7 in lanes 0…7:
// word, dword and qword interleaves, exact bit moves.
func transposeF16x8(row0, row4, step, step3 Register) [8]VecVirtual {
	mem := func(r int) Mem {
		base := row0
		if r >= 4 {
			base = row4
		}
		switch r % 4 {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: step, Scale: 1}
		case 2:
			return Mem{Base: base, Index: step, Scale: 2}
		}
		return Mem{Base: base, Index: step3, Scale: 1}
	}
	var rows [8]VecVirtual
	for r := 0; r < 8; r += 2 {
		rows[r] = XMM()
		VMOVDQU(mem(r), rows[r])
	}
	// t[2i] = words 0…3 of rows 2i and 2i+1 interleaved, t[2i+1] words 4…7.
	var t [8]VecVirtual
	for i := range 4 {
		t[2*i], t[2*i+1] = XMM(), XMM()
		VPUNPCKHWD(mem(2*i+1), rows[2*i], t[2*i+1])
		VPUNPCKLWD(mem(2*i+1), rows[2*i], t[2*i])
	}
	// u: dword interleaves of rows (0,1)·(2,3) and (4,5)·(6,7).
	var u [8]VecVirtual
	for h := range 2 {
		a, b := t[4*h:4*h+2], t[4*h+2:4*h+4]
		for i := range 2 {
			lo, hi := XMM(), XMM()
			VPUNPCKLDQ(b[i], a[i], lo)
			VPUNPCKHDQ(b[i], a[i], hi)
			u[4*h+2*i], u[4*h+2*i+1] = lo, hi
		}
	}
	var cols [8]VecVirtual
	for j := range 4 {
		lo, hi := XMM(), XMM()
		VPUNPCKLQDQ(u[4+j], u[j], lo)
		VPUNPCKHQDQ(u[4+j], u[j], hi)
		cols[2*j], cols[2*j+1] = lo, hi
	}
	return cols
}

// attnKQIK: the K·q chains of attnKQIKRef for groups of eight keys, g
// query heads (1 or 2). Per group of eight head elements the eight keys'
// F16 values are transposed (transposeF16x8) so that lane l holds key l,
// widened exactly (VCVTPH2PS) and multiplied into the lo chain (elements
// 8i+0…3) or the hi chain (8i+4…7) with one VFMADD231PS each, element by
// element in ascending order as the reference's fused multiply-adds.
func attnKQIK(g int) {
	name := fmt.Sprintf("attnKQIK%dAVX2", g)
	TEXT(name, NOSPLIT, "func(s []float32, sStride int, k []uint16, stride int, q []float32, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes attnKQIKRef's chains for %d head(s) and n keys (a multiple of 8): lo of head a at s[2a·sStride+l], hi at s[(2a+1)·sStride+l]; key l's element e is k[l·stride+e], e < hd = len(q)/%d (a multiple of 8, > 0).", name, g, g))
	sp := Load(Param("s").Base(), GP64())
	ss := Load(Param("sStride"), GP64())
	SHLQ(U8(2), ss)
	ss3 := GP64()
	LEAQ(Mem{Base: ss, Index: ss, Scale: 2}, ss3)
	kp := Load(Param("k").Base(), GP64())
	ks := Load(Param("stride"), GP64())
	SHLQ(U8(1), ks)
	ks3 := GP64()
	LEAQ(Mem{Base: ks, Index: ks, Scale: 2}, ks3)
	qBase := Load(Param("q").Base(), GP64())
	hd := Load(Param("q").Len(), GP64())
	if g == 2 {
		SHRQ(U8(1), hd)
	}
	hdB := GP64() // hd in bytes of q
	MOVQ(hd, hdB)
	SHLQ(U8(2), hdB)
	SHRQ(U8(3), hd) // groups of eight elements
	n := Load(Param("n"), GP64())
	SHRQ(U8(3), n)

	Label(name + "Keys")
	CMPQ(n, Imm(0))
	JE(LabelRef(name + "Done"))
	acc := make([]VecVirtual, 2*g)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	row0, row4, qp, cnt := GP64(), GP64(), GP64(), GP64()
	MOVQ(kp, row0)
	LEAQ(Mem{Base: kp, Index: ks, Scale: 4}, row4)
	MOVQ(qBase, qp)
	MOVQ(hd, cnt)
	Label(name + "Elems")
	cols := transposeF16x8(row0, row4, ks, ks3)
	for j, c := range cols {
		kv := YMM()
		VCVTPH2PS(c, kv)
		for a := range g {
			b := YMM()
			if a == 0 {
				VBROADCASTSS(Mem{Base: qp, Disp: 4 * j}, b)
			} else {
				VBROADCASTSS(Mem{Base: qp, Index: hdB, Scale: 1, Disp: 4 * j}, b)
			}
			VFMADD231PS(b, kv, acc[2*a+j/4]) // acc = acc + k·q
		}
	}
	ADDQ(U8(16), row0)
	ADDQ(U8(16), row4)
	ADDQ(U8(32), qp)
	DECQ(cnt)
	JNE(LabelRef(name + "Elems"))

	VMOVUPS(acc[0], Mem{Base: sp})
	VMOVUPS(acc[1], Mem{Base: sp, Index: ss, Scale: 1})
	if g == 2 {
		VMOVUPS(acc[2], Mem{Base: sp, Index: ss, Scale: 2})
		VMOVUPS(acc[3], Mem{Base: sp, Index: ss3, Scale: 1})
	}
	ADDQ(U8(32), sp)
	LEAQ(Mem{Base: kp, Index: ks, Scale: 8}, kp)
	DECQ(n)
	JMP(LabelRef(name + "Keys"))

	Label(name + "Done")
	VZEROUPPER()
	RET()
}

// attnPVIK: attnPVIKRef's output chains for groups of eight dimensions,
// g query heads (1 or 2), n keys (a multiple of 8): the transposed V rows
// of eight dimensions are read eight keys at a time and transposed
// (transposeF16x8) so that lane i holds dimension d0+i of one key, widened
// exactly and added as out = out + V·p (VFMADD231PS) key by key in
// ascending order.
func attnPVIK(g int) {
	name := fmt.Sprintf("attnPVIK%dAVX2", g)
	TEXT(name, NOSPLIT, "func(out []float32, v []uint16, stride int, p []float32, pStride int, n int, last int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s runs attnPVIKRef's chains for %d head(s) and n+last keys (n a multiple of 8, last < 8): out (len %d·hd, hd a multiple of 8, > 0) gets out + V[l][d]·p[a·pStride+l] for l ascending, V[l][d] = v[d·stride+l]; the last group reads v and p for eight keys but uses only the first last of them.", name, g, g))
	op := Load(Param("out").Base(), GP64())
	hd := Load(Param("out").Len(), GP64())
	if g == 2 {
		SHRQ(U8(1), hd)
	}
	hdB := GP64()
	MOVQ(hd, hdB)
	SHLQ(U8(2), hdB)
	SHRQ(U8(3), hd)
	vp := Load(Param("v").Base(), GP64())
	vs := Load(Param("stride"), GP64())
	SHLQ(U8(1), vs)
	vs3 := GP64()
	LEAQ(Mem{Base: vs, Index: vs, Scale: 2}, vs3)
	pBase := Load(Param("p").Base(), GP64())
	ps := Load(Param("pStride"), GP64())
	SHLQ(U8(2), ps)
	n := Load(Param("n"), GP64())
	SHRQ(U8(3), n)
	last := Load(Param("last"), GP64())

	Label(name + "Dims")
	CMPQ(hd, Imm(0))
	JE(LabelRef(name + "Done"))
	acc := make([]VecVirtual, g)
	VMOVUPS(Mem{Base: op}, func() VecVirtual { acc[0] = YMM(); return acc[0] }())
	if g == 2 {
		acc[1] = YMM()
		VMOVUPS(Mem{Base: op, Index: hdB, Scale: 1}, acc[1])
	}
	row0, row4, pp, cnt := GP64(), GP64(), GP64(), GP64()
	MOVQ(vp, row0)
	LEAQ(Mem{Base: vp, Index: vs, Scale: 4}, row4)
	MOVQ(pBase, pp)
	MOVQ(n, cnt)
	// keys: the FMAs of eight keys; in the last group only those before
	// key last (the jumps to Store).
	keys := func(tail bool) {
		cols := transposeF16x8(row0, row4, vs, vs3)
		for j, c := range cols {
			if tail && j > 0 {
				CMPQ(last, Imm(uint64(j)))
				JLE(LabelRef(name + "Store"))
			}
			vv := YMM()
			VCVTPH2PS(c, vv)
			for a := range g {
				b := YMM()
				if a == 0 {
					VBROADCASTSS(Mem{Base: pp, Disp: 4 * j}, b)
				} else {
					VBROADCASTSS(Mem{Base: pp, Index: ps, Scale: 1, Disp: 4 * j}, b)
				}
				VFMADD231PS(b, vv, acc[a]) // out = out + V·p
			}
		}
	}
	Label(name + "Keys")
	CMPQ(cnt, Imm(0))
	JE(LabelRef(name + "Tail"))
	keys(false)
	ADDQ(U8(16), row0)
	ADDQ(U8(16), row4)
	ADDQ(U8(32), pp)
	DECQ(cnt)
	JMP(LabelRef(name + "Keys"))

	Label(name + "Tail")
	CMPQ(last, Imm(0))
	JE(LabelRef(name + "Store"))
	keys(true)

	Label(name + "Store")
	VMOVUPS(acc[0], Mem{Base: op})
	if g == 2 {
		VMOVUPS(acc[1], Mem{Base: op, Index: hdB, Scale: 1})
	}
	ADDQ(U8(32), op)
	LEAQ(Mem{Base: vp, Index: vs, Scale: 8}, vp)
	DECQ(hd)
	JMP(LabelRef(name + "Dims"))

	Label(name + "Done")
	VZEROUPPER()
	RET()
}
