package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels/_asm/iq2bn"
)

// Integer cores of TQ1_0, TQ2_0, Q2_0, IQ1_BN and IQ2_BN (references:
// ../ternary_ref.go). Codes are isolated as unsigned bytes 0…3 and
// multiplied with the signed activation bytes by VPMADDUBSW, whose int16
// pair sums stay within ±1024 here (never saturating, so exact); up to
// eight of them are added in int16 (at most ±8192, exact) before VPMADDWD
// widens lane pairs to int32.

// table16 defines a read-only table of 16-bit words and returns it.
func table16(name string, words []uint16) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, w := range words {
		DATA(2*i, U16(w))
	}
	return m
}

// table8 defines a read-only table of bytes and returns it.
func table8(name string, b []byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, v := range b {
		DATA(i, U8(v))
	}
	return m
}

// table32 defines a read-only table of 32-bit words and returns it.
func table32(name string, words []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, w := range words {
		DATA(4*i, U32(w))
	}
	return m
}

// trits leaves in each byte of the returned register the base-3 digit
// ((v·m) mod 256)·3 >> 8 of the byte v of src, m the byte's multiplier:
// the 16-bit words of mulE hold the multipliers of the even bytes, those
// of mulO the odd bytes' (a nil operand stands for 1). Each byte is moved
// to the high half of a word with a zero low half, so VPMULLW leaves
// (v·m) mod 256 in the high half, and VPMULHUW by 3 gives the digit.
func trits(src VecVirtual, mulE, mulO Op, hiMask, three VecVirtual) VecVirtual {
	e, o := YMM(), YMM()
	VPSLLW(U8(8), src, e)
	VPAND(hiMask, src, o)
	if mulE != nil {
		VPMULLW(mulE, e, e)
	}
	if mulO != nil {
		VPMULLW(mulO, o, o)
	}
	VPMULHUW(three, e, e)
	VPMULHUW(three, o, o)
	VPSLLW(U8(8), o, o)
	VPOR(o, e, e)
	return e
}

// sumsQ2_0: per 18-byte block the 16 code bytes are loaded into both
// halves of a YMM; for half k (bytes 8k…8k+7, weights 32k…32k+31) VPERMD
// repeats code dword 2k in the low lane and 2k+1 in the high lane and
// VPSRLVD shifts the four copies by 0, 2, 4, 6, so byte 4d + b of a lane
// holds the code of weight 4b + d of that lane's 16. The activation bytes
// are put in the same order with VPSHUFB (a 4×4 transpose in each lane);
// Σ(c − 1)·q is VPMADDUBSW(c, q) − VPMADDUBSW(1, q), and two horizontal
// adds give both halves' sums.
func sumsQ2_0() {
	TEXT("sumsQ2_0AVX2", NOSPLIT, "func(sums []int32, row []byte, q []int8)")
	Pragma("noescape")
	Doc("sumsQ2_0AVX2 writes the two Σ(c − 1)·q of each 18-byte Q2_0 block of row (len(row) a positive multiple of 18) into sums (len ≥ 2·blocks); len(q) ≥ 64·blocks.")
	sums := Load(Param("sums").Base(), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	k := newQ2Consts()
	Label("q2loop")
	hi := k.block(row, q)
	VMOVQ(hi, Mem{Base: sums})
	ADDQ(U8(8), sums)
	ADDQ(U8(18), row)
	ADDQ(U8(64), q)
	SUBQ(U8(18), n)
	JNE(LabelRef("q2loop"))
	VZEROUPPER()
	RET()
}

// q2Consts are the registers sumsQ2_0 and dotQ2_0 keep their constants in.
type q2Consts struct {
	mask, ones8, ones16, tp, sh VecVirtual
	ix                          [2]VecVirtual
}

var q2Tables struct {
	done           bool
	idx, cnt, shuf Mem
}

func newQ2Consts() q2Consts {
	t := &q2Tables
	if !t.done {
		t.idx = table32("q2Perm", []uint32{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3})
		t.cnt = table32("q2Shift", []uint32{0, 2, 4, 6, 0, 2, 4, 6})
		var tr [32]byte
		for p := range tr {
			d, b := p%16/4, p%4
			tr[p] = byte(4*b + d)
		}
		t.shuf = table8("q2Transpose", tr[:])
		t.done = true
	}
	k := q2Consts{
		mask:   broadcast32(0x03030303),
		ones8:  broadcast32(0x01010101),
		ones16: broadcast32(0x00010001),
		tp:     YMM(), sh: YMM(),
		ix: [2]VecVirtual{YMM(), YMM()},
	}
	VMOVDQU(t.shuf, k.tp)
	VMOVDQU(t.cnt, k.sh)
	VMOVDQU(t.idx, k.ix[0])
	VMOVDQU(t.idx.Offset(32), k.ix[1])
	return k
}

// block returns an XMM whose int32 lanes 0 and 1 hold the two half sums
// Σ(c − 1)·q of the Q2_0 block at row against the 64 activation bytes at q.
func (k q2Consts) block(row, q Register) VecVirtual {
	x := YMM()
	VBROADCASTI128(Mem{Base: row, Disp: 2}, x)
	var v [2]VecVirtual
	for h := 0; h < 2; h++ {
		c := YMM()
		VPERMD(x, k.ix[h], c)
		VPSRLVD(k.sh, c, c)
		VPAND(k.mask, c, c)
		y := YMM()
		VMOVDQU(Mem{Base: q, Disp: 32 * h}, y)
		VPSHUFB(k.tp, y, y)
		m, o := YMM(), YMM()
		VPMADDUBSW(y, c, m)
		VPMADDUBSW(y, k.ones8, o)
		VPSUBW(o, m, m)
		VPMADDWD(k.ones16, m, m)
		v[h] = m
	}
	VPHADDD(v[1], v[0], v[0])
	VPHADDD(v[0], v[0], v[0])
	hi := XMM()
	VEXTRACTI128(U8(1), v[0], hi)
	VPADDD(hi, v[0].AsX(), hi)
	return hi
}

// f16At returns an XMM whose lane 0 holds the f16 value at m widened to
// float32 (exact).
func f16At(m Mem) VecVirtual {
	g := GP32()
	MOVWLZX(m, g)
	x := XMM()
	VMOVD(g, x)
	VCVTPH2PS(x, x)
	return x
}

// dotQ2_0: the sums of sumsQ2_0, then per block, in float32 with fused
// multiply-adds (reference: dotQ2_0Ref), sumi = fma(0, d_y[2i], S_0),
// sumi = fma(sumi, d_y[2i+1], S_1), sumf = fma(sumf, d_x, sumi).
func dotQ2_0() {
	TEXT("dotQ2_0AVX2", NOSPLIT, "func(row []byte, q []int8, d []float32) float32")
	Pragma("noescape")
	Doc("dotQ2_0AVX2 returns the Q2_0 row (len(row) a positive multiple of 18) times the Q8_0 activation (codes q, len ≥ 64·blocks; scales d, len ≥ 2·blocks) in dotQ2_0Ref's float order; it needs FMA.")
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	k := newQ2Consts()
	sumf := XMM()
	VXORPS(sumf, sumf, sumf)
	Label("dq2loop")
	s := k.block(row, q)
	VCVTDQ2PS(s, s)
	sumi, s1 := XMM(), XMM()
	VXORPS(sumi, sumi, sumi)
	VFMADD231SS(Mem{Base: d}, s, sumi)
	VMOVSHDUP(s, s1)
	VFMADD231SS(Mem{Base: d, Disp: 4}, s1, sumi)
	dx := f16At(Mem{Base: row})
	VFMADD231SS(sumi, dx, sumf)
	ADDQ(U8(18), row)
	ADDQ(U8(64), q)
	ADDQ(U8(8), d)
	SUBQ(U8(18), n)
	JNE(LabelRef("dq2loop"))
	VZEROUPPER() // before the legacy-SSE MOVSS of the store
	Store(sumf, ReturnIndex(0))
	RET()
}

// tqEpilogue accumulates one TQ block's int32 lanes into the float lanes
// acc as tqAccRef does: lanes − (bsums[2L] + bsums[2L+1]) (the 16 int16
// bsums at bs, paired by VPMADDWD), widened, times d = d_y·f16(d_x) (the
// f16 at dx), either fused onto acc (fused ≠ 0) or multiplied and then
// added.
func tqEpilogue(lanes, acc, ones16 VecVirtual, bs, dy, dx Mem, fused Register, id string) {
	b := YMM()
	VMOVDQU(bs, b)
	VPMADDWD(ones16, b, b)
	VPSUBD(b, lanes, lanes)
	VCVTDQ2PS(lanes, lanes)
	x := f16At(dx)
	VMULSS(dy, x, x)
	dd := YMM()
	VBROADCASTSS(x, dd)
	CMPB(fused, U8(0))
	JE(LabelRef("mul" + id))
	VFMADD231PS(dd, lanes, acc)
	JMP(LabelRef("next" + id))
	Label("mul" + id)
	VMULPS(dd, lanes, lanes)
	VADDPS(lanes, acc, acc)
	Label("next" + id)
}

// accTQ: the lanes of lanesTQ1_0 / lanesTQ2_0 per block, accumulated into
// *acc by tqEpilogue (reference: accTQRef).
func accTQ(tq1 bool) {
	name, bytes, id := "accTQ2_0AVX2", 66, "tq2"
	if tq1 {
		name, bytes, id = "accTQ1_0AVX2", 54, "tq1"
	}
	TEXT(name, NOSPLIT, "func(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused bool)")
	Pragma("noescape")
	Doc(name + " adds the float lanes of each TQ block of row (len(row) a positive multiple of the block size) to acc as accTQRef does; len(q) ≥ 256·blocks, len(bsums) ≥ 16·blocks, len(d) ≥ blocks; it needs FMA.")
	accP := Load(Param("acc"), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	bs := Load(Param("bsums").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	fused := Load(Param("fused"), GP8())
	acc := YMM()
	VMOVUPS(Mem{Base: accP}, acc)
	ones16 := broadcast32(0x00010001)
	var mask, hiMask, three VecVirtual
	var mul Mem
	if tq1 {
		hiMask, three = broadcast32(0xff00ff00), broadcast32(0x00030003)
		mul = tq1MulTable()
	} else {
		mask = broadcast32(0x03030303)
	}
	Label(id + "acc")
	var lanes VecVirtual
	if tq1 {
		lanes = tq1Block(row, q, mul, hiMask, three, ones16)
	} else {
		lanes = tq2Block(row, q, mask, ones16)
	}
	tqEpilogue(lanes, acc, ones16, Mem{Base: bs}, Mem{Base: d}, Mem{Base: row, Disp: bytes - 2}, fused, id)
	ADDQ(U8(bytes), row)
	ADDQ(U32(256), q)
	ADDQ(U8(32), bs)
	ADDQ(U8(4), d)
	SUBQ(U8(bytes), n)
	JNE(LabelRef(id + "acc"))
	VMOVUPS(acc, Mem{Base: accP})
	VZEROUPPER()
	RET()
}

// groupSums stores the four Q8_K64 group sums of acc (int32 lane d of
// either 128-bit half belongs to group d) at s.
func groupSums(acc VecVirtual, s Register) {
	hi := XMM()
	VEXTRACTI128(U8(1), acc, hi)
	VPADDD(hi, acc.AsX(), hi)
	VMOVDQU(hi, Mem{Base: s})
}

// sumsIQ2BN: per 16-byte block, the bytes in both halves of a YMM shifted
// by 0 (low lane) and 2 (high lane) give the codes of weights 0…31 in
// order, by 4 and 6 those of weights 32…63; VPMADDUBSW with the activation
// and VPMADDWD leave in int32 lane d of each half the sum of group d.
func sumsIQ2BN() {
	TEXT("sumsIQ2BNAVX2", NOSPLIT, "func(s *[4]int32, blocks []byte, q []int8)")
	Pragma("noescape")
	Doc("sumsIQ2BNAVX2 stores the four group sums Σ c·q of the IQ2_BN blocks (len(blocks) a positive multiple of 16) in s; len(q) ≥ 4·len(blocks).")
	s := Load(Param("s"), GP64())
	blk := Load(Param("blocks").Base(), GP64())
	n := Load(Param("blocks").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	cnt := table32("iq2Shift", []uint32{0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6})
	mask := broadcast32(0x03030303)
	ones16 := broadcast32(0x00010001)
	shA, shB := YMM(), YMM()
	VMOVDQU(cnt, shA)
	VMOVDQU(cnt.Offset(32), shB)
	acc := YMM()
	VPXOR(acc, acc, acc)
	Label("iq2loop")
	x, a, b := YMM(), YMM(), YMM()
	VBROADCASTI128(Mem{Base: blk}, x)
	VPSRLVD(shA, x, a)
	VPSRLVD(shB, x, b)
	VPAND(mask, a, a)
	VPAND(mask, b, b)
	VPMADDUBSW(Mem{Base: q}, a, a)
	VPMADDUBSW(Mem{Base: q, Disp: 32}, b, b)
	VPADDW(b, a, a)
	VPMADDWD(ones16, a, a)
	VPADDD(a, acc, acc)
	ADDQ(U8(16), blk)
	ADDQ(U8(64), q)
	SUBQ(U8(16), n)
	JNE(LabelRef("iq2loop"))
	groupSums(acc, s)
	VZEROUPPER()
	RET()
}

// sumsIQ1BN: per 13-byte block, bytes 0…7 and 5…12 are loaded into one XMM
// (never reading past the block) and copied to both lanes; for each half h
// (weights 32h…32h+31, lane l holding 16-weight group 2h + l) VPSHUFB puts
// under each weight the byte of its digit and trits extracts the digit with
// the weight's multiplier; VPMADDUBSW/VPMADDWD leave group d's sum in int32
// lane d of each half, as in sumsIQ2BN.
func sumsIQ1BN() {
	TEXT("sumsIQ1BNAVX2", NOSPLIT, "func(s *[4]int32, blocks []byte, q []int8)")
	Pragma("noescape")
	Doc("sumsIQ1BNAVX2 stores the four group sums Σ digit·q of the IQ1_BN blocks (len(blocks) a positive multiple of 13) in s; len(q) ≥ 64·len(blocks)/13.")
	s := Load(Param("s"), GP64())
	blk := Load(Param("blocks").Base(), GP64())
	n := Load(Param("blocks").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	mult := [5]uint16{81, 27, 9, 3, 1}
	var ctrl [64]byte
	var mulE, mulO [32]uint16
	for h := 0; h < 2; h++ {
		for p := 0; p < 32; p++ {
			i16, r := 2*h+p/16, p%16
			src, m := 3*i16+r/5, mult[r%5]
			if r == 15 {
				src, m = 12, mult[i16]
			}
			if src >= 8 { // bytes 5…12 sit at XMM bytes 8…15
				src += 3
			}
			ctrl[32*h+p] = byte(src)
			if p%2 == 0 {
				mulE[16*h+p/2] = m
			} else {
				mulO[16*h+p/2] = m
			}
		}
	}
	shuf := table8("iq1Shuffle", ctrl[:])
	me := table16("iq1MulEven", mulE[:])
	mo := table16("iq1MulOdd", mulO[:])
	hiMask := broadcast32(0xff00ff00)
	three := broadcast32(0x00030003)
	ones16 := broadcast32(0x00010001)
	acc := YMM()
	VPXOR(acc, acc, acc)
	Label("iq1loop")
	x := XMM()
	VMOVQ(Mem{Base: blk}, x)
	VPINSRQ(U8(1), Mem{Base: blk, Disp: 5}, x, x)
	y := YMM()
	VINSERTI128(U8(1), x, x.AsY(), y)
	var p [2]VecVirtual
	for h := 0; h < 2; h++ {
		b := YMM()
		VPSHUFB(shuf.Offset(32*h), y, b)
		d := trits(b, me.Offset(32*h), mo.Offset(32*h), hiMask, three)
		VPMADDUBSW(Mem{Base: q, Disp: 32 * h}, d, d)
		p[h] = d
	}
	VPADDW(p[1], p[0], p[0])
	VPMADDWD(ones16, p[0], p[0])
	VPADDD(p[0], acc, acc)
	ADDQ(U8(13), blk)
	ADDQ(U8(64), q)
	SUBQ(U8(13), n)
	JNE(LabelRef("iq1loop"))
	groupSums(acc, s)
	VZEROUPPER()
	RET()
}

// lanesTQ2_0: per 66-byte block, each 32-byte half of qs shifted by 0, 2,
// 4, 6 and masked gives the codes of 32 consecutive weights in order; the
// eight VPMADDUBSW products are added in int16 and VPMADDWD leaves lane L
// = Σ over the weights with (i mod 32)/4 = L.
func lanesTQ2_0() {
	TEXT("lanesTQ2_0AVX2", NOSPLIT, "func(lanes []int32, row []byte, q []int8)")
	Pragma("noescape")
	Doc("lanesTQ2_0AVX2 writes the eight int32 lanes Σ c·q of each 66-byte TQ2_0 block of row (len(row) a positive multiple of 66) into lanes (len ≥ 8·blocks); len(q) ≥ 256·blocks.")
	lanes := Load(Param("lanes").Base(), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	mask := broadcast32(0x03030303)
	ones16 := broadcast32(0x00010001)
	Label("tq2loop")
	acc := tq2Block(row, q, mask, ones16)
	VMOVDQU(acc, Mem{Base: lanes})
	ADDQ(U8(32), lanes)
	ADDQ(U8(66), row)
	ADDQ(U32(256), q)
	SUBQ(U8(66), n)
	JNE(LabelRef("tq2loop"))
	VZEROUPPER()
	RET()
}

// lanesTQ1_0: per 54-byte block, digit n of qs[0…31] (trits with 3^n) pairs
// with weights 32n…32n+31; qs[32…47] copied to both lanes gives digits n
// (low lane) and n+1 (high lane) for weights 160+16n…191+16n, n = 0, 2;
// for n = 4 the high lane instead holds qh[0…3] repeated four times with
// multipliers 3^(p/4) at byte p, the weights 240…255 in order. Lane L of
// the VPMADDWD result sums the weights with (i mod 32)/4 = L.
func lanesTQ1_0() {
	TEXT("lanesTQ1_0AVX2", NOSPLIT, "func(lanes []int32, row []byte, q []int8)")
	Pragma("noescape")
	Doc("lanesTQ1_0AVX2 writes the eight int32 lanes Σ digit·q of each 54-byte TQ1_0 block of row (len(row) a positive multiple of 54) into lanes (len ≥ 8·blocks); len(q) ≥ 256·blocks.")
	lanes := Load(Param("lanes").Base(), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	mul := tq1MulTable()
	hiMask := broadcast32(0xff00ff00)
	three := broadcast32(0x00030003)
	ones16 := broadcast32(0x00010001)
	Label("tq1loop")
	acc := tq1Block(row, q, mul, hiMask, three, ones16)
	VMOVDQU(acc, Mem{Base: lanes})
	ADDQ(U8(32), lanes)
	ADDQ(U8(54), row)
	ADDQ(U32(256), q)
	SUBQ(U8(54), n)
	JNE(LabelRef("tq1loop"))
	VZEROUPPER()
	RET()
}

// tq2Block returns the eight int32 lanes of the TQ2_0 block at row against
// the 256 activation bytes at q (lanesTQ2_0).
func tq2Block(row, q Register, mask, ones16 VecVirtual) VecVirtual {
	acc := YMM()
	for h := 0; h < 2; h++ {
		x := YMM()
		VMOVDQU(Mem{Base: row, Disp: 32 * h}, x)
		for l := 0; l < 4; l++ {
			c := YMM()
			if l == 0 {
				VPAND(mask, x, c)
			} else {
				VPSRLW(U8(2*l), x, c)
				VPAND(mask, c, c)
			}
			VPMADDUBSW(Mem{Base: q, Disp: 128*h + 32*l}, c, c)
			if h == 0 && l == 0 {
				acc = c
			} else {
				VPADDW(c, acc, acc)
			}
		}
	}
	VPMADDWD(ones16, acc, acc)
	return acc
}

// tq1Block returns the eight int32 lanes of the TQ1_0 block at row against
// the 256 activation bytes at q (lanesTQ1_0; mul is its table of
// multipliers).
func tq1Block(row, q Register, mul Mem, hiMask, three, ones16 VecVirtual) VecVirtual {
	x := YMM()
	VMOVDQU(Mem{Base: row}, x)
	acc := YMM()
	for k := 0; k < 5; k++ {
		var m Op
		if k > 0 {
			m = mul.Offset(32 * (k - 1))
		}
		d := trits(x, m, m, hiMask, three)
		VPMADDUBSW(Mem{Base: q, Disp: 32 * k}, d, d)
		if k == 0 {
			acc = d
		} else {
			VPADDW(d, acc, acc)
		}
	}
	y := YMM()
	VBROADCASTI128(Mem{Base: row, Disp: 32}, y)
	for k := 0; k < 2; k++ {
		m := mul.Offset(32 * (4 + k))
		d := trits(y, m, m, hiMask, three)
		VPMADDUBSW(Mem{Base: q, Disp: 160 + 32*k}, d, d)
		VPADDW(d, acc, acc)
	}
	t := XMM()
	VPBROADCASTD(Mem{Base: row, Disp: 48}, t)
	VINSERTI128(U8(1), t, y, y)
	m := mul.Offset(32 * 6)
	d := trits(y, m, m, hiMask, three)
	VPMADDUBSW(Mem{Base: q, Disp: 224}, d, d)
	VPADDW(d, acc, acc)
	VPMADDWD(ones16, acc, acc)
	return acc
}

var tq1Mul *Mem

// tq1MulTable returns the multipliers of lanesTQ1_0's digits (defined once).
func tq1MulTable() Mem {
	if tq1Mul != nil {
		return *tq1Mul
	}
	// Rows of 16 words: 3, 9, 27, 81 everywhere; (1 | 3); (9 | 27);
	// (81 | 1, 1, 3, 3, 9, 9, 27, 27 per word pair of bytes p, p+1).
	var w []uint16
	for _, m := range []uint16{3, 9, 27, 81} {
		for range 16 {
			w = append(w, m)
		}
	}
	for _, lr := range [][2]uint16{{1, 3}, {9, 27}} {
		for i := range 16 {
			w = append(w, lr[i/8])
		}
	}
	for i := range 16 {
		m := uint16(81)
		if i >= 8 {
			m = [4]uint16{1, 3, 9, 27}[(i-8)/2]
		}
		w = append(w, m)
	}
	mul := table16("tq1Mul", w)
	tq1Mul = &mul
	return mul
}

// accQ8_0: per 34-byte Q8_0 block the 32 weight and activation bytes are
// sign-extended to int16 (VPMOVSXBW) and multiplied pairwise into int32
// (VPMADDWD, exact); VPHADDD leaves the sums of bytes 4l…4l+3 in the order
// l = 0, 1, 4, 5, 2, 3, 6, 7, which the accumulator keeps (VPERMQ 0xd8,
// its own inverse, on loading and storing acc). Each lane then takes
// acc_l = fma(acc_l, f16(d_w)·d_x, float32(sum_l)) (reference: accQ8_0Ref).
func accQ8_0() {
	TEXT("accQ8_0AVX2", NOSPLIT, "func(acc *[8]float32, row []byte, q []int8, d []float32)")
	Pragma("noescape")
	Doc("accQ8_0AVX2 adds the float lanes of each Q8_0 block of row (len(row) a positive multiple of 34) to acc as accQ8_0Ref does; len(q) ≥ 32·blocks, len(d) ≥ blocks; it needs FMA.")
	accP := Load(Param("acc"), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	acc := YMM()
	VPERMQ(U8(0xd8), Mem{Base: accP}, acc)
	Label("q8acc")
	wl, wh, ql, qh := YMM(), YMM(), YMM(), YMM()
	VPMOVSXBW(Mem{Base: row, Disp: 2}, wl)
	VPMOVSXBW(Mem{Base: row, Disp: 18}, wh)
	VPMOVSXBW(Mem{Base: q}, ql)
	VPMOVSXBW(Mem{Base: q, Disp: 16}, qh)
	VPMADDWD(ql, wl, wl)
	VPMADDWD(qh, wh, wh)
	VPHADDD(wh, wl, wl)
	VCVTDQ2PS(wl, wl)
	x := f16At(Mem{Base: row})
	VMULSS(Mem{Base: d}, x, x)
	sc := YMM()
	VBROADCASTSS(x, sc)
	VFMADD231PS(sc, wl, acc)
	ADDQ(U8(34), row)
	ADDQ(U8(32), q)
	ADDQ(U8(4), d)
	SUBQ(U8(34), n)
	JNE(LabelRef("q8acc"))
	VPERMQ(U8(0xd8), acc, acc)
	VMOVUPS(acc, Mem{Base: accP})
	VZEROUPPER()
	RET()
}

// accQ6K: per 210-byte Q6_K block and half h, the four 6-bit code vectors
// of 32 weights each are put together from ql (low nibbles) and qh (2-bit
// fields moved to bits 4-5) with shifts and masks; VPMADDUBSW(code, y) −
// VPMADDUBSW(32, y) gives the int16 pair sums of (code − 32)·y (at most
// 8192 in magnitude: exact), and VPMADDWD with the int8 scales (the low
// 16 weights of a chunk take scale 2k, the high 16 scale 2k+1, put in the
// two lanes by VPSHUFB) widens them to int32, lane l holding weights with
// (i mod 32)/4 = l. Each block then takes acc_l = fma(acc_l, d_y·f16(d_x),
// float32(lane_l)) (reference: accQ6KRef).
func accQ6K() {
	TEXT("accQ6KAVX2", NOSPLIT, "func(acc *[8]float32, row []byte, q []int8, d []float32)")
	Pragma("noescape")
	Doc("accQ6KAVX2 adds the float lanes of each Q6_K block of row (len(row) a positive multiple of 210) to acc as accQ6KRef does; len(q) ≥ 256·blocks, len(d) ≥ blocks; it needs FMA.")
	accP := Load(Param("acc"), GP64())
	row := Load(Param("row").Base(), GP64())
	n := Load(Param("row").Len(), GP64())
	q := Load(Param("q").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	var ctrl [128]byte
	for k := 0; k < 4; k++ {
		for p := 0; p < 32; p++ {
			w := 2*k + p/16 // word of the scale
			ctrl[32*k+p] = byte(2*w + p%2)
		}
	}
	scShuf := table8("q6Scales", ctrl[:])
	m4 := broadcast32(0x0f0f0f0f)
	m30 := broadcast32(0x30303030)
	c32 := broadcast32(0x20202020)
	acc := YMM()
	VMOVUPS(Mem{Base: accP}, acc)
	Label("q6acc")
	lanes := YMM()
	VPXOR(lanes, lanes, lanes)
	for h := 0; h < 2; h++ {
		l0, l1, hb := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: row, Disp: 64 * h}, l0)
		VMOVDQU(Mem{Base: row, Disp: 64*h + 32}, l1)
		VMOVDQU(Mem{Base: row, Disp: 128 + 32*h}, hb)
		sx := XMM()
		VPMOVSXBW(Mem{Base: row, Disp: 192 + 8*h}, sx)
		sc := YMM()
		VINSERTI128(U8(1), sx, sx.AsY(), sc)
		for k := 0; k < 4; k++ {
			c, t := YMM(), YMM()
			// low nibble source and the shift of qh's field to bits 4-5
			src, nib := l0, false
			switch k {
			case 1:
				src = l1
			case 2:
				nib = true
			case 3:
				src, nib = l1, true
			}
			if nib {
				VPSRLW(U8(4), src, c)
				VPAND(m4, c, c)
			} else {
				VPAND(m4, src, c)
			}
			switch k {
			case 0:
				VPSLLW(U8(4), hb, t)
				VPAND(m30, t, t)
			case 1:
				VPSLLW(U8(2), hb, t)
				VPAND(m30, t, t)
			case 2:
				VPAND(m30, hb, t)
			case 3:
				VPSRLW(U8(2), hb, t)
				VPAND(m30, t, t)
			}
			VPOR(t, c, c)
			y := Mem{Base: q, Disp: 128*h + 32*k}
			VPMADDUBSW(y, c, c)
			VPMADDUBSW(y, c32, t)
			VPSUBW(t, c, c)
			s := YMM()
			VPSHUFB(scShuf.Offset(32*k), sc, s)
			VPMADDWD(s, c, c)
			VPADDD(c, lanes, lanes)
		}
	}
	VCVTDQ2PS(lanes, lanes)
	x := f16At(Mem{Base: row, Disp: 208})
	VMULSS(Mem{Base: d}, x, x)
	dd := YMM()
	VBROADCASTSS(x, dd)
	VFMADD231PS(dd, lanes, acc)
	ADDQ(U32(210), row)
	ADDQ(U32(256), q)
	ADDQ(U8(4), d)
	SUBQ(U32(210), n)
	JNE(LabelRef("q6acc"))
	VMOVUPS(acc, Mem{Base: accP})
	VZEROUPPER()
	RET()
}

// Row-range kernels: one call multiplies a range of consecutive rows with
// one prepared activation and writes each row's float result, so the
// runtime's matrix-vector product makes one call per worker range (as
// dotI2SRows does for I2_S) instead of one per row.

// hsumExp8 returns an XMM whose lane 0 holds sumExp8 of the eight float
// lanes of acc: a_i = e_i + e_(i+4), then (a_0 + a_2) + (a_1 + a_3)
// (hsum_float_8; the runtime's sumExp8).
func hsumExp8(acc VecVirtual) VecVirtual {
	a := XMM()
	VEXTRACTF128(U8(1), acc, a)
	VADDPS(a, acc.AsX(), a)
	b := XMM()
	VMOVHLPS(a, a, b)
	VADDPS(b, a, b)
	c := XMM()
	VMOVSHDUP(b, c)
	VADDSS(c, b, b)
	return b
}

// accTQRows: for each row, accTQ's lanes and accumulation from zero, then
// hsumExp8 stored to dst (reference: accTQRowsRef).
func accTQRows(tq1 bool) {
	name, bytes, id := "accTQ2_0RowsAVX2", 66, "tq2r"
	if tq1 {
		name, bytes, id = "accTQ1_0RowsAVX2", 54, "tq1r"
	}
	TEXT(name, NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, bsums []int16, d []float32, fused bool)")
	Pragma("noescape")
	Doc(name + " writes, for each of len(dst) consecutive rows of rowB bytes (a positive multiple of the block size), sumExp8 of accTQRef's lanes from zero into dst; len(rows) ≥ len(dst)·rowB, len(q) ≥ 256·blocks, len(bsums) ≥ 16·blocks, len(d) ≥ blocks; it needs FMA.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	fused := Load(Param("fused"), GP8())
	ones16 := broadcast32(0x00010001)
	var mask, hiMask, three VecVirtual
	var mul Mem
	if tq1 {
		hiMask, three = broadcast32(0xff00ff00), broadcast32(0x00030003)
		mul = tq1MulTable()
	} else {
		mask = broadcast32(0x03030303)
	}
	Label(id + "row")
	CMPQ(nr, Imm(0))
	JE(LabelRef(id + "done"))
	q := Load(Param("q").Base(), GP64())
	bs := Load(Param("bsums").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	n := GP64()
	MOVQ(rowB, n)
	acc := YMM()
	VXORPS(acc, acc, acc)
	Label(id + "acc")
	var lanes VecVirtual
	if tq1 {
		lanes = tq1Block(row, q, mul, hiMask, three, ones16)
	} else {
		lanes = tq2Block(row, q, mask, ones16)
	}
	tqEpilogue(lanes, acc, ones16, Mem{Base: bs}, Mem{Base: d}, Mem{Base: row, Disp: bytes - 2}, fused, id)
	ADDQ(U8(bytes), row)
	ADDQ(U32(256), q)
	ADDQ(U8(32), bs)
	ADDQ(U8(4), d)
	SUBQ(U8(bytes), n)
	JNE(LabelRef(id + "acc"))
	r := hsumExp8(acc)
	VMOVSS(r, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef(id + "row"))
	Label(id + "done")
	VZEROUPPER()
	RET()
}

// dotIQ2BNRows: for each row (an f32 scale, then 16-byte IQ2_BN blocks),
// sumsIQ2BN's four group sums S_g, v_g = d_g·S_g − minus_g in one fused
// multiply-subtract (ik_llama.cpp's _mm_fmsub_ps), then the scale times
// (v_0 + v_2) + (v_1 + v_3) (reference: dotIQ2BNRowsRef).
func dotIQ2BNRows() {
	TEXT("dotIQ2BNRowsAVX2", NOSPLIT, "func(dst []float32, rows []byte, rowB int, q []int8, d, minus *[4]float32)")
	Pragma("noescape")
	Doc("dotIQ2BNRowsAVX2 writes the IQ2_BN product of each of len(dst) consecutive rows of rowB bytes (4 + a positive multiple of 16) with the Q8_K64 activation (q, len ≥ 4·(rowB − 4); group scales d, group offsets minus) into dst in dotIQ2BNRowsRef's float order; it needs FMA.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	dP := Load(Param("d"), GP64())
	mP := Load(Param("minus"), GP64())
	dv, mv := XMM(), XMM()
	VMOVUPS(Mem{Base: dP}, dv)
	VMOVUPS(Mem{Base: mP}, mv)
	cnt := table32("iq2RowsShift", []uint32{0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6})
	mask := broadcast32(0x03030303)
	ones16 := broadcast32(0x00010001)
	shA, shB := YMM(), YMM()
	VMOVDQU(cnt, shA)
	VMOVDQU(cnt.Offset(32), shB)
	SUBQ(U8(4), rowB)
	Label("iq2rrow")
	CMPQ(nr, Imm(0))
	JE(LabelRef("iq2rdone"))
	q := Load(Param("q").Base(), GP64())
	scale := XMM()
	VMOVSS(Mem{Base: row}, scale)
	ADDQ(U8(4), row)
	n := GP64()
	MOVQ(rowB, n)
	acc := YMM()
	VPXOR(acc, acc, acc)
	Label("iq2rloop")
	x, a, b := YMM(), YMM(), YMM()
	VBROADCASTI128(Mem{Base: row}, x)
	VPSRLVD(shA, x, a)
	VPSRLVD(shB, x, b)
	VPAND(mask, a, a)
	VPAND(mask, b, b)
	VPMADDUBSW(Mem{Base: q}, a, a)
	VPMADDUBSW(Mem{Base: q, Disp: 32}, b, b)
	VPADDW(b, a, a)
	VPMADDWD(ones16, a, a)
	VPADDD(a, acc, acc)
	ADDQ(U8(16), row)
	ADDQ(U8(64), q)
	SUBQ(U8(16), n)
	JNE(LabelRef("iq2rloop"))
	s := XMM()
	VEXTRACTI128(U8(1), acc, s)
	VPADDD(s, acc.AsX(), s)
	iq2bn.Finish(s, dv, mv, scale, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef("iq2rrow"))
	Label("iq2rdone")
	VZEROUPPER()
	RET()
}

// dotQ2_0Rows: for each row of 18-byte Q2_0 blocks, with the activation
// prepared by q2_0PermuteRef (block i's codes reordered so that byte
// 16s + j is the code of weight 4j + s, and the Σq of each 32-code half
// kept apart), each block's two half sums Σ(c − 1)·q come from the
// sumsIQ2BN shift pattern minus the half's Σq; then dotQ2_0's float steps
// (reference: dotQ2_0RowsRef).
func dotQ2_0Rows() {
	TEXT("dotQ2_0RowsAVX2", NOSPLIT, "func(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32)")
	Pragma("noescape")
	Doc("dotQ2_0RowsAVX2 writes the Q2_0 product of each of len(dst) consecutive rows of rowB bytes (a positive multiple of 18) with the permuted Q8_0 activation (qp, len ≥ 64·blocks; half sums qsum and scales d, len ≥ 2·blocks) into dst in dotQ2_0Ref's float order; it needs FMA.")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	row := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	cnt := table32("q2RowsShift", []uint32{0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6})
	mask := broadcast32(0x03030303)
	ones16 := broadcast32(0x00010001)
	shA, shB := YMM(), YMM()
	VMOVDQU(cnt, shA)
	VMOVDQU(cnt.Offset(32), shB)
	Label("q2rrow")
	CMPQ(nr, Imm(0))
	JE(LabelRef("q2rdone"))
	q := Load(Param("qp").Base(), GP64())
	qs := Load(Param("qsum").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	n := GP64()
	MOVQ(rowB, n)
	sumf := XMM()
	VXORPS(sumf, sumf, sumf)
	Label("q2rloop")
	x, a, b := YMM(), YMM(), YMM()
	VBROADCASTI128(Mem{Base: row, Disp: 2}, x)
	VPSRLVD(shA, x, a)
	VPSRLVD(shB, x, b)
	VPAND(mask, a, a)
	VPAND(mask, b, b)
	VPMADDUBSW(Mem{Base: q}, a, a)
	VPMADDUBSW(Mem{Base: q, Disp: 32}, b, b)
	VPADDW(b, a, a)
	VPMADDWD(ones16, a, a)
	s := XMM()
	VEXTRACTI128(U8(1), a, s)
	VPADDD(s, a.AsX(), s)
	VPHADDD(s, s, s)
	hs := XMM()
	VMOVQ(Mem{Base: qs}, hs)
	VPSUBD(hs, s, s)
	VCVTDQ2PS(s, s)
	sumi, s1 := XMM(), XMM()
	VXORPS(sumi, sumi, sumi)
	VFMADD231SS(Mem{Base: d}, s, sumi) // fma(0, d_y, S_0), as dotQ2_0
	VMOVSHDUP(s, s1)
	VFMADD231SS(Mem{Base: d, Disp: 4}, s1, sumi)
	dx := f16At(Mem{Base: row})
	VFMADD231SS(sumi, dx, sumf)
	ADDQ(U8(18), row)
	ADDQ(U8(64), q)
	ADDQ(U8(8), qs)
	ADDQ(U8(8), d)
	SUBQ(U8(18), n)
	JNE(LabelRef("q2rloop"))
	VMOVSS(sumf, Mem{Base: dst})
	ADDQ(U8(4), dst)
	DECQ(nr)
	JMP(LabelRef("q2rrow"))
	Label("q2rdone")
	VZEROUPPER()
	RET()
}

// dotQ2_0Rows2: dotQ2_0Rows for two rows at a time (an even count), the
// activation bytes loaded once for both; VPHADDD of the two rows' lanes
// leaves (S_0, S_1) of row A in lanes 0, 1 and of row B in lanes 2, 3, and
// the float steps run in those lanes at once: z = fma(0, d_y[2i+k], S_k)
// in every lane, then lane 2m+1 = fma(z_2m, d_y[2i+1], S_1) = sumi of
// row m, and sumf lane 2m+1 = fma(sumf, d_x(row m), sumi), the two rows'
// chains interleaved (lanes 0 and 2 carry values that are never stored).
func dotQ2_0Rows2() {
	TEXT("dotQ2_0Rows2AVX2", NOSPLIT, "func(dst []float32, rows []byte, rowB int, qp []int8, qsum []int32, d []float32)")
	Pragma("noescape")
	Doc("dotQ2_0Rows2AVX2 is dotQ2_0RowsAVX2 for an even len(dst) (the same results).")
	dst := Load(Param("dst").Base(), GP64())
	nr := Load(Param("dst").Len(), GP64())
	rowA := Load(Param("rows").Base(), GP64())
	rowB := Load(Param("rowB"), GP64())
	cnt := table32("q2Rows2Shift", []uint32{0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6})
	mask := broadcast32(0x03030303)
	ones16 := broadcast32(0x00010001)
	shA, shB := YMM(), YMM()
	VMOVDQU(cnt, shA)
	VMOVDQU(cnt.Offset(32), shB)
	Label("q2pRow")
	CMPQ(nr, Imm(0))
	JE(LabelRef("q2pDone"))
	rB := GP64()
	LEAQ(Mem{Base: rowA, Index: rowB, Scale: 1}, rB)
	q := Load(Param("qp").Base(), GP64())
	qs := Load(Param("qsum").Base(), GP64())
	d := Load(Param("d").Base(), GP64())
	n := GP64()
	MOVQ(rowB, n)
	sumf := XMM()
	VXORPS(sumf, sumf, sumf)
	Label("q2pLoop")
	qa, qb := YMM(), YMM()
	VMOVDQU(Mem{Base: q}, qa)
	VMOVDQU(Mem{Base: q, Disp: 32}, qb)
	var m [2]VecVirtual
	for i, row := range []Register{rowA, rB} {
		x, a, b := YMM(), YMM(), YMM()
		VBROADCASTI128(Mem{Base: row, Disp: 2}, x)
		VPSRLVD(shA, x, a)
		VPSRLVD(shB, x, b)
		VPAND(mask, a, a)
		VPAND(mask, b, b)
		VPMADDUBSW(qa, a, a)
		VPMADDUBSW(qb, b, b)
		VPADDW(b, a, a)
		VPMADDWD(ones16, a, a)
		m[i] = a
	}
	VPHADDD(m[1], m[0], m[0]) // per half: A01, A23, B01, B23
	s := XMM()
	VEXTRACTI128(U8(1), m[0], s)
	VPADDD(s, m[0].AsX(), s)
	hs := XMM()
	VMOVDDUP(Mem{Base: qs}, hs)
	VPSUBD(hs, s, s)
	VCVTDQ2PS(s, s)
	dd := XMM()
	VMOVDDUP(Mem{Base: d}, dd)
	z := XMM()
	VXORPS(z, z, z)
	VFMADD231PS(dd, s, z)
	t := XMM()
	VMOVSLDUP(z, t)
	VFMADD231PS(dd, s, t) // lanes 1, 3: sumi of rows A, B
	ga, gb := GP32(), GP32()
	MOVWLZX(Mem{Base: rowA}, ga)
	MOVWLZX(Mem{Base: rB}, gb)
	dx := XMM()
	VPXOR(dx, dx, dx)
	VPINSRW(U8(1), ga, dx, dx)
	VPINSRW(U8(3), gb, dx, dx)
	VCVTPH2PS(dx, dx)
	VFMADD231PS(t, dx, sumf)
	ADDQ(U8(18), rowA)
	ADDQ(U8(18), rB)
	ADDQ(U8(64), q)
	ADDQ(U8(8), qs)
	ADDQ(U8(8), d)
	SUBQ(U8(18), n)
	JNE(LabelRef("q2pLoop"))
	VEXTRACTPS(U8(1), sumf, Mem{Base: dst})
	VEXTRACTPS(U8(3), sumf, Mem{Base: dst, Disp: 4})
	ADDQ(U8(8), dst)
	MOVQ(rB, rowA)
	SUBQ(U8(2), nr)
	JMP(LabelRef("q2pRow"))
	Label("q2pDone")
	VZEROUPPER()
	RET()
}
