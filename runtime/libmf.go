package runtime

import "math"

// The rope of the reference (ggml's rope_yarn, called from
// ggml_rope_cache_init) takes the cosine and sine of each angle with the C
// library's cosf and sinf. bitnet.cpp's x86 builds run on glibc, whose float
// sin/cos (sysdeps/ieee754/flt-32/s_sinf.c, s_cosf.c, s_sincosf.h,
// sincosf_poly.h, data in s_sincosf_data.c; the method of Arm's
// optimized-routines) is not correctly rounded: about one angle in a few
// thousand differs by one ulp from the correctly rounded value, and one ulp
// of a rope factor flips later F16 and int8 roundings. glibcSinf and
// glibcCosf below follow the same method step by step:
//
//   - the float argument is widened to double; |y| < 2^-12 returns y (sin) or
//     1 (cos); |y| < π/4 (as compared on the top 12 bits) evaluates the
//     polynomial directly;
//   - |y| < 120: n = quadrant from y·(2/π·2^24) truncated to int32, plus 2^23,
//     shifted right by 24; r = y − n·π/2 in one multiply-subtract;
//   - larger |y|: the 24-bit mantissa times 96 bits of 4/π (a table of 32-bit
//     words, 8 new bits per word) gives the exact fixed-point fraction; n is
//     its top two bits rounded, r the rest times 2π·2^-64;
//   - the quadrant selects the sine or the cosine polynomial (in r²,
//     coefficients s1…s3 and c0…c4, negated for quadrants 2 and 3) and the
//     sign; everything is double until the final rounding to float.
//
// On x86-64, glibc 2.36 picks by CPU (ifunc, sysdeps/x86_64/fpu/multiarch
// ifunc-fma.h): with FMA and AVX2 usable the same source compiled with
// -mfma -mavx2 (__sinf_fma, __cosf_fma), where gcc contracts every a·b + c of
// the reduction and the polynomial into a fused multiply-add; otherwise the
// SSE2 build without contraction. The reference builds need AVX2 and FMA, so
// they always run the FMA variant; the runtime uses that one on every GOARCH
// (math.FMA). The unfused variant exists for the test against the system
// libm on CPUs without FMA. TestGlibcSinCosf compares both with the C library
// over every rope angle of the presets.

// sincosfPoly is one entry of the polynomial table: cosine coefficients
// c0…c4 and sine coefficients s1…s3 in powers of r².
type sincosfPoly struct {
	c0, c1, c2, c3, c4 float64
	s1, s2, s3         float64
}

// sincosfTab: entry 1 negates the cosine polynomial (quadrants 2 and 3).
var sincosfTab = [2]sincosfPoly{
	{1, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{-1, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

const (
	sincosfHpiInv = 0x1.45F306DC9C883p+23 // 2/π · 2^24
	sincosfHpi    = 0x1.921FB54442D18p0   // π/2
	sincosfPi63   = 0x1.921FB54442D18p-62 // 2π · 2^-64
)

// sincosfSign is the sign of the sine in quadrants 0…3.
var sincosfSign = [4]float64{1, -1, -1, 1}

// twoOverPiHex is 2/π in hexadecimal, fractional digits (0.a2f9836e…), 192
// bits: enough for every float exponent.
const twoOverPiHex = "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041"

// invPio4 is the reduction table: word i holds bits 8(i−3)+1 … 8(i+1) of the
// fraction of 2/π (so the first words are its leading 8, 16, 24 bits), i.e.
// each word adds 8 new bits and any three words spaced by four give 96
// consecutive bits of 4/π.
var invPio4 = func() [24]uint32 {
	var digits [24]byte
	for i := range digits {
		hi, lo := hexDigit(twoOverPiHex[2*i]), hexDigit(twoOverPiHex[2*i+1])
		digits[i] = hi<<4 | lo
	}
	var t [24]uint32
	for i := range t {
		var w uint32
		for j := max(0, i-3); j <= i; j++ {
			w = w<<8 | uint32(digits[j])
		}
		t[i] = w
	}
	return t
}()

func hexDigit(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// abstop12 is the top 12 bits of f's representation without the sign.
func abstop12(f float32) uint32 { return math.Float32bits(f) >> 20 & 0x7ff }

// fmaFunc is a·b + c, fused (math.FMA) or rounded twice (unfusedFMA).
type fmaFunc func(a, b, c float64) float64

// unfusedFMA rounds the product before the sum; the explicit conversion
// keeps the Go compiler from fusing it.
func unfusedFMA(a, b, c float64) float64 { return float64(a*b) + c }

// sinfPoly evaluates the sine (n even) or cosine (n odd) polynomial at x
// with x2 = x², rounding to float once at the end.
func sinfPoly(x, x2 float64, p *sincosfPoly, n int, fma fmaFunc) float32 {
	if n&1 == 0 {
		x3 := x * x2
		s1 := fma(x2, p.s3, p.s2)
		x7 := x3 * x2
		s := fma(x3, p.s1, x)
		return float32(fma(x7, s1, s))
	}
	x4 := x2 * x2
	c2 := fma(x2, p.c4, p.c3)
	c1 := fma(x2, p.c1, p.c0)
	x6 := x4 * x2
	c := fma(x4, p.c2, c1)
	return float32(fma(x6, c2, c))
}

// reduceFast returns x − n·π/2 and the quadrant n for |x| < 120.
func reduceFast(x float64, fma fmaFunc) (float64, int) {
	r := x * sincosfHpiInv
	n := (int32(r) + 0x800000) >> 24
	return fma(-float64(n), sincosfHpi, x), int(n)
}

// reduceLarge reduces the float with bits xi (|x| ≥ 120, finite; the sign
// is ignored) to x − n·π/2 with exact integer arithmetic.
func reduceLarge(xi uint32) (float64, int) {
	arr := invPio4[xi>>26&15:]
	shift := xi >> 23 & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0]) // 32-bit product, wrapping
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * sincosfPi63, int(n)
}

// glibcSinf is sinf as glibc 2.36 computes it on an x86-64 CPU with FMA
// (__sinf_fma); see the comment at the top of this file.
func glibcSinf(y float32) float32 { return sinfGlibc(y, math.FMA) }

// glibcCosf is cosf as glibc 2.36 computes it on an x86-64 CPU with FMA
// (__cosf_fma).
func glibcCosf(y float32) float32 { return cosfGlibc(y, math.FMA) }

func sinfGlibc(y float32, fma fmaFunc) float32 {
	x := float64(y)
	p := &sincosfTab[0]
	switch top := abstop12(y); {
	case top < abstop12(0x1.921FB6p-1): // π/4 as a float
		if top < abstop12(0x1p-12) {
			return y
		}
		return sinfPoly(x, x*x, p, 0, fma)
	case top < abstop12(120):
		r, n := reduceFast(x, fma)
		s := sincosfSign[n&3]
		if n&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(r*s, r*r, p, n, fma)
	case top < abstop12(float32(math.Inf(1))):
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		r, n := reduceLarge(xi)
		s := sincosfSign[(n+sign)&3]
		if (n+sign)&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(r*s, r*r, p, n, fma)
	}
	return y - y // NaN for ±Inf and NaN
}

func cosfGlibc(y float32, fma fmaFunc) float32 {
	x := float64(y)
	p := &sincosfTab[0]
	switch top := abstop12(y); {
	case top < abstop12(0x1.921FB6p-1):
		if top < abstop12(0x1p-12) {
			return 1
		}
		return sinfPoly(x, x*x, p, 1, fma)
	case top < abstop12(120):
		r, n := reduceFast(x, fma)
		s := sincosfSign[n&3]
		if n&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(r*s, r*r, p, n^1, fma)
	case top < abstop12(float32(math.Inf(1))):
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		r, n := reduceLarge(xi)
		s := sincosfSign[(n+sign)&3]
		if (n+sign)&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(r*s, r*r, p, n^1, fma)
	}
	return y - y
}
