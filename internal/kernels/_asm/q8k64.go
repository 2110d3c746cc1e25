package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// absMaxQ8K64: the absolute-maximum pass of quantizeQ8K64Ref as bit
// patterns (|x| as an unsigned integer orders like |x|, NaNs above ∞):
// lane l of m[0:8] is the largest over the elements 16i+l, lane l of
// m[8:16] over 16i+8+l.
func absMaxQ8K64() {
	TEXT("absMaxQ8K64AVX2", NOSPLIT, "func(x []float32, m *[16]uint32)")
	Pragma("noescape")
	Doc("absMaxQ8K64AVX2 sets m[j] to max_i bits(x[16i+j]) & 0x7fffffff over len(x) elements (a multiple of 16); 0 when x is empty.")
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	mp := Load(Param("m"), GP64())
	SHRQ(U8(4), n)
	mask := broadcast32(0x7fffffff)
	a, b := YMM(), YMM()
	VPXOR(a, a, a)
	VPXOR(b, b, b)
	Label("q8k64MaxLoop")
	CMPQ(n, Imm(0))
	JE(LabelRef("q8k64MaxDone"))
	for j, acc := range []VecVirtual{a, b} {
		t := YMM()
		VPAND(Mem{Base: x, Disp: 32 * j}, mask, t)
		VPMAXUD(t, acc, acc)
	}
	ADDQ(U8(64), x)
	DECQ(n)
	JMP(LabelRef("q8k64MaxLoop"))
	Label("q8k64MaxDone")
	VMOVDQU(a, Mem{Base: mp})
	VMOVDQU(b, Mem{Base: mp, Disp: 32})
	VZEROUPPER()
	RET()
}

// quantQ8K64: the rounding pass of quantizeQ8K64Ref, 32 elements at a
// time: each element times the inverse scale of its group (VMULPS, the
// reference's float32 product), rounded half to even (VROUNDPS 0),
// clamped to −128…127, converted exactly; the codes packed back in order
// as quantI8S packs them, the int32 codes summed per lane.
func quantQ8K64() {
	TEXT("quantQ8K64AVX2", NOSPLIT, "func(dst []int8, x []float32, ids *[16]float32, sums *[16]int32)")
	Pragma("noescape")
	Doc("quantQ8K64AVX2 quantizes len(x) elements (a multiple of 32, all products finite) of x into dst (len ≥ len(x)): element 16i+j is multiplied by ids[j]; sums[j] gets the sum of the codes of the elements 16i+j.")
	dst := Load(Param("dst").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(5), n)
	ip := Load(Param("ids"), GP64())
	sp := Load(Param("sums"), GP64())
	idA, idB := YMM(), YMM()
	VMOVUPS(Mem{Base: ip}, idA)
	VMOVUPS(Mem{Base: ip, Disp: 32}, idB)
	hiC := broadcast32(0x42fe0000) // 127.0
	loC := broadcast32(0xc3000000) // -128.0
	perm := YMM()
	VMOVDQU(NewDataAddr(Symbol{Name: "i8sPerm", Static: true}, 0), perm)
	sumA, sumB := YMM(), YMM()
	VPXOR(sumA, sumA, sumA)
	VPXOR(sumB, sumB, sumB)

	Label("q8k64Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef("q8k64Done"))
	v := []VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for j, t := range v {
		id, sum := idA, sumA
		if j%2 == 1 {
			id, sum = idB, sumB
		}
		VMULPS(Mem{Base: x, Disp: 32 * j}, id, t)
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
	JMP(LabelRef("q8k64Loop"))

	Label("q8k64Done")
	VMOVDQU(sumA, Mem{Base: sp})
	VMOVDQU(sumB, Mem{Base: sp, Disp: 32})
	VZEROUPPER()
	RET()
}

// mulScaled: the output products of the two RMS norms, two VMULPS per
// eight elements in the reference's order, stopping before the first group
// of eight with a NaN result (left unwritten), whose payload the caller's
// Go takes: ik_llama.cpp's fused norm, dst = float32(scale·w)·x (mulScaledAVX2), and
// ggml's rms_norm then mul, dst = float32(x·scale)·w (scaleMulAVX2).
func mulScaled() {
	mulScaledGen("mulScaledAVX2", "(scale·w[i])·x[i]", "w", "x")
	mulScaledGen("scaleMulAVX2", "(x[i]·scale)·w[i]", "x", "w")
}

// mulScaledGen writes one of mulScaled's kernels: the scale times param
// first, that product times param second.
func mulScaledGen(name, formula, first, second string) {
	TEXT(name, NOSPLIT, "func(dst, x, w []float32, scale float32) int")
	Pragma("noescape")
	Doc(name + " sets dst[i] = " + formula + ", each product rounded to float32, for the groups of eight of x (len(x) a multiple of 8, len(dst), len(w) ≥ len(x)) up to the first group with a NaN result, which it leaves unwritten, and returns the number of values done.")
	dst := Load(Param("dst").Base(), GP64())
	x := Load(Param("x").Base(), GP64())
	w := Load(Param("w").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	SHRQ(U8(3), n)
	done := GP64()
	XORQ(done, done)
	sa, err := Param("scale").Resolve()
	if err != nil {
		panic(err)
	}
	s := YMM()
	VBROADCASTSS(sa.Addr, s)
	Label(name + "Loop")
	CMPQ(n, Imm(0))
	JE(LabelRef(name + "Done"))
	ops := map[string]Register{"x": x, "w": w}
	t := YMM()
	VMULPS(Mem{Base: ops[first]}, s, t)
	VMULPS(Mem{Base: ops[second]}, t, t)
	u := YMM()
	VCMPPS(U8(3), t, t, u) // unordered: NaN lanes
	VPTEST(u, u)
	JNE(LabelRef(name + "Done"))
	VMOVUPS(t, Mem{Base: dst})
	ADDQ(U8(32), dst)
	ADDQ(U8(32), x)
	ADDQ(U8(32), w)
	ADDQ(U8(8), done)
	DECQ(n)
	JMP(LabelRef(name + "Loop"))
	Label(name + "Done")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}
