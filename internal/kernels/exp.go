package kernels

import (
	"math"

	"github.com/x448/float16"
)

// Exp is e^x as bitnet.cpp computes it in softmax and SiLU on x86
// AVX2: ggml_v_expf of bitnet.cpp's llama.cpp fork (ggml.c, 406a5036), which
// takes its method and coefficients from Arm's optimized-routines expf. It is
// not correctly rounded (up to ~1.5 ulp), so using math.Exp instead moves
// single ulps, and those flip later F16 and int8 roundings: on the golden
// tiny model math.Exp leaves logits up to 0.2 away from bitnet.cpp, this
// function reproduces them bit for bit.
//
// The method: n = round(x·log2 e) (by adding 1.5·2^23 in a fused
// multiply-add), b = x − n·ln2 with ln2 split in a high and a low part (two
// fused steps), e^b − 1 ≈ b·c1 + b²·(c2 + c3·b) + b⁴·(c4 + c5·b), and the
// result 2^n·(1 + p) as one fused multiply-add. Every float32 operation is
// rounded where the reference rounds; fma32 gives the single rounding of
// the hardware fused multiply-add (see there for its one exception).
func Exp(x float32) float32 {
	if x != x {
		return x
	}
	z := fma32(expShift, x, expLog2e)
	n := z - expShift
	b := fma32(x, -n, expLn2Hi)
	b = fma32(b, -n, expLn2Lo)
	u := b * b
	c1b := expC[0] * b
	odd := fma32(expC[1], expC[2], b)  // c2 + c3·b
	high := fma32(expC[3], expC[4], b) // c4 + c5·b
	p := fma32(odd, high, u)           // (c2 + c3·b) + (c4 + c5·b)·u
	p = fma32(c1b, p, u)               // c1·b + u·(…)
	an := float32(math.Abs(float64(n)))
	if an <= 126 {
		// k = 2^n from the exponent bits of z (its low mantissa bits hold n).
		k := math.Float32frombits(math.Float32bits(z)<<23 + math.Float32bits(1))
		return fma32(k, p, k)
	}
	// Outside the normal exponent range: 2^n·(1+p) overflows to +Inf or
	// underflows towards 0. The reference splits 2^n in two factors; the
	// results agree except possibly in the last bit of a subnormal, which
	// nothing downstream (softmax sums, 1 + e^−x in SiLU) can see.
	if an > 192 {
		if n > 0 {
			return float32(math.Inf(1))
		}
		return 0
	}
	return float32(math.Ldexp(1+float64(p), int(n)))
}

// Constants of Exp (values of ggml_v_expf; see there).
const (
	expShift = 0x1.8p23       // 1.5·2^23: adding it rounds to an integer
	expLog2e = 0x1.715476p+0  // log2(e) in float32
	expLn2Hi = 0x1.62e4p-1    // ln 2, high part
	expLn2Lo = 0x1.7f7d1cp-20 // ln 2, low part
)

// expC are the polynomial coefficients c1…c5 of e^b − 1 on |b| ≤ ln2/2.
var expC = [5]float32{0x1.ffffecp-1, 0x1.fffdb6p-2, 0x1.555e66p-3, 0x1.573e2ep-5, 0x1.0e4020p-7}

// fma32 is FMA32 (the name the kernels' references use) by the hardware's
// float64 fused multiply-add where that gives the same bits (fmaFast). The
// softmax's exponential (Exp) makes ten of these per element.
func fma32(a, b, c float32) float32 { return fmaFast(a, b, c) }

// FMA32Fast is FMA32 (a + b·c rounded once to float32, the bits of
// VFMADD231PS / FMLA) computed with math.FMA, falling back to the exact
// emulation where a float64 rounding could differ (fmaFast). For per-token
// scalar work outside the kernels (the runtime's rope).
func FMA32Fast(a, b, c float32) float32 { return fmaFast(a, b, c) }

// FMA32Acc sets acc[i] = FMA32(acc[i], b[i], c) for every i (the same
// bits; one call for the whole row, where a call of FMA32Fast per element
// does not inline). On amd64 with AVX2 and FMA the groups of eight run as
// VFMADD231PS, a group with a NaN result as the reference. It panics if
// len(b) < len(acc).
func FMA32Acc(acc, b []float32, c float32) {
	fma32Acc(acc, b[:len(acc)], c)
}

// fma32AccRef is FMA32Acc in Go (len(b) == len(acc)).
func fma32AccRef(acc, b []float32, c float32) {
	cd := float64(c)
	for i, a := range acc {
		r := math.FMA(float64(b[i]), cd, float64(a))
		if fma64Unsafe(r) {
			acc[i] = fmaSlow(a, b[i], c)
			continue
		}
		acc[i] = float32(r)
	}
}

// FMA32 returns a + b·c rounded once to float32, as the hardware's fused
// multiply-add (VFMADD231PS, FMLA) gives it. b·c of two float32 values is
// exact in float64; the sum is rounded to float64 "to odd" (when it is
// inexact and its last bit is even, it moves one ulp toward the exact
// value), which makes the final rounding to float32 the correct one, with no
// double-rounding tie (53 ≥ 24 + 2 bits; Boldo and Melquiond, "Emulation of
// FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE TC 2008). Infinities and NaNs pass through as the float64 sum
// gives them.
func FMA32(a, b, c float32) float32 {
	p := float64(b) * float64(c)
	s := float64(a) + p
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// The rounding error of s (Knuth's TwoSum; exact in float64).
	bv := s - float64(a)
	e := (float64(a) - (s - bv)) + (p - bv)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// SiLU applies x/(1+e^−x) in place as ggml_vec_silu_f32 does on AVX2
// (ggml.c of bitnet.cpp's llama.cpp fork): groups of eight use the vector
// exponential (Exp), a tail shorter than eight uses the C library's expf
// (correctly rounded, here via float64), and the quotient is one float32
// division. The assembly takes the groups whose eight exponents are all in
// Exp's normal range; any other group (|x| above about 87, a NaN) takes
// the pure-Go path.
func SiLU(x []float32) {
	n8 := len(x) &^ 7
	for i := 0; i < n8; {
		i += siluGroups(x[i:n8])
		if i < n8 {
			siluRef(x[i : i+8])
			i += 8
		}
	}
	for i := n8; i < len(x); i++ {
		v := x[i]
		x[i] = v / (1 + float32(math.Exp(float64(-v))))
	}
}

// siluRef is SiLU's reference on whole groups of eight.
func siluRef(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + Exp(-v))
	}
}

// RopeNeox rotates one attention head x in place with the NEOX pairing of
// ggml's CPU rope (ggml-org/llama.cpp, ggml/src/ggml-cpu/ops.cpp,
// rotate_pairs for GGML_ROPE_TYPE_NEOX): dimension i with
// i + len(x)/2 for i < len(x)/2, by the angle whose cosine and sine are
// cos[i] and sin[i]:
//
//	x[i]       = −float32(x1·sin[i]) + x0·cos[i]
//	x[i+len/2] =  float32(x1·cos[i]) + x0·sin[i]
//
// with x0, x1 the pair's values before the call and each sum a fused
// multiply-add rounded once (FMA32): ggml's x0*cos_theta − x1*sin_theta
// and x0*sin_theta + x1*cos_theta as gcc with -mfma (-ffp-contract=fast)
// compiles them, one product rounded and one fused into the add. A last
// element of an odd-length x is left as it is. The result does not depend
// on the implementation: groups of eight pairs take the assembly on amd64
// (VFMADD231PS), the rest and every other build FMA32Fast. It panics if
// cos or sin is shorter than len(x)/2.
func RopeNeox(x, cos, sin []float32) {
	half := len(x) / 2
	if len(cos) < half || len(sin) < half {
		panic("kernels: RopeNeox table shorter than half the head")
	}
	n8 := half &^ 7
	ropeNeoxGroups(x, cos[:n8], sin[:n8])
	ropeNeoxPairs(x, cos, sin, n8, half)
}

// ropeNeoxRef is RopeNeox's reference: every pair with FMA32.
func ropeNeoxRef(x, cos, sin []float32) {
	half := len(x) / 2
	for i := 0; i < half; i++ {
		c, sn := cos[i], sin[i]
		x0, x1 := x[i], x[i+half]
		x[i] = FMA32(-float32(x1*sn), x0, c)
		x[i+half] = FMA32(float32(x1*c), x0, sn)
	}
}

// ropeNeoxPairs rotates pairs [lo, hi) of x as ropeNeoxRef, through
// fmaFast (FMA32's bits).
func ropeNeoxPairs(x, cos, sin []float32, lo, hi int) {
	half := len(x) / 2
	for i := lo; i < hi; i++ {
		c, sn := cos[i], sin[i]
		x0, x1 := x[i], x[i+half]
		x[i] = fmaFast(-float32(x1*sn), x0, c)
		x[i+half] = fmaFast(float32(x1*c), x0, sn)
	}
}

// FMAF16Acc sets acc[i] = F16(FMA32(F16ToF32(acc[i]), F16ToF32(v[i]), c))
// for every i: an F16 accumulator plus an F16 row times c, each lane one
// fused multiply-add rounded to float32 and then to F16 to nearest even
// (F32ToF16). It is ggml_vec_mad_f16 as ggml's AVX2/FMA build computes it
// (ggml/src/ggml-cpu/vec.h: GGML_F16_VEC_FMA, then the F16 store), the
// value accumulation of mainline's CPU flash attention. On amd64 with FMA
// the groups of eight run as VCVTPH2PS, VFMADD231PS and VCVTPS2PH; a group
// with a NaN result takes the reference. It panics if len(v) < len(acc).
func FMAF16Acc(acc, v []uint16, c float32) {
	fmaF16Acc(acc, v[:len(acc)], c)
}

// ScaleF16 sets acc[i] = F16(F16ToF32(acc[i])·c) for every i (one float32
// product rounded to F16 to nearest even): ggml_vec_scale_f16 on AVX2, the
// rescaling of mainline flash attention's F16 accumulator when a new
// maximum score arrives. On amd64 the groups of eight run as VCVTPH2PS,
// VMULPS and VCVTPS2PH; a group with a NaN result takes the reference.
func ScaleF16(acc []uint16, c float32) { scaleF16(acc, c) }

// fmaF16AccRef is FMAF16Acc in Go (len(v) == len(acc)).
func fmaF16AccRef(acc, v []uint16, c float32) {
	for i, a := range acc {
		acc[i] = float16.Fromfloat32(fmaFast(f16Table[a], f16Table[v[i]], c)).Bits()
	}
}

// scaleF16Ref is ScaleF16 in Go.
func scaleF16Ref(acc []uint16, c float32) {
	for i, a := range acc {
		acc[i] = float16.Fromfloat32(f16Table[a] * c).Bits()
	}
}
