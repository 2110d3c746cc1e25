package kernels

import "math"

// fmaFast is FMA32 (a + b·c rounded once to float32) by the hardware's
// float64 fused multiply-add (math.FMA): the exact sum rounded to float64,
// then to float32. The second rounding differs from a single one only when
// the float64 result lies exactly halfway between two float32 values (a
// float64 rounding to nearest cannot cross such a midpoint, which is a
// float64 itself) or below float32's normal range; those take FMA32.
func fmaFast(a, b, c float32) float32 {
	r := math.FMA(float64(b), float64(c), float64(a))
	if fma64Unsafe(r) {
		return fmaSlow(a, b, c)
	}
	return float32(r)
}

// fma64Unsafe reports whether the float64 r = a + b·c may not round to
// a + b·c's float32: r exactly halfway between two float32 values, or a
// non-zero |r| below 2^−126 (u<<1 drops the sign; such r has a biased
// exponent under 1023−126 = 897; zero wraps to the largest value).
func fma64Unsafe(r float64) bool {
	u := math.Float64bits(r)
	return u&(1<<29-1) == 1<<28 || u<<1-1 < 897<<53-1
}

// fmaSlow is FMA32 kept out of line, so that fmaFast inlines.
//
//go:noinline
func fmaSlow(a, b, c float32) float32 { return FMA32(a, b, c) }

// tinyDotsF16Ref is TinyBLASDotsF16 (lengths checked by the caller).
func tinyDotsF16Ref(dst []float32, w []uint16, x []float32, xs int) {
	k := len(w)
	for t := range dst {
		xt := x[t*xs : t*xs+k]
		var l [8]float32
		for j := 0; j+8 <= k; j += 8 {
			wj, xj := (*[8]uint16)(w[j:j+8]), (*[8]float32)(xt[j:j+8])
			for i := range l {
				l[i] = fmaFast(l[i], f16Table[wj[i]], xj[i])
			}
		}
		dst[t] = TinyBLASHsum(&l)
	}
}

// tinyDotsF32Ref is TinyBLASDotsF32 (lengths checked by the caller).
func tinyDotsF32Ref(dst []float32, w []float32, x []float32, xs int) {
	k := len(w)
	for t := range dst {
		xt := x[t*xs : t*xs+k]
		var l [8]float32
		for j := 0; j+8 <= k; j += 8 {
			wj, xj := (*[8]float32)(w[j:j+8]), (*[8]float32)(xt[j:j+8])
			for i := range l {
				l[i] = fmaFast(l[i], wj[i], xj[i])
			}
		}
		dst[t] = TinyBLASHsum(&l)
	}
}

// tinyLanesF16Ref advances the accumulators lanes[8i:8i+8] of the F16
// rows w[i·wr : i·wr+len(x)] (i < nr; len(x) a multiple of 8) against x.
func tinyLanesF16Ref(lanes []float32, w []uint16, wr int, x []float32, nr int) {
	k := len(x)
	for r := 0; r < nr; r++ {
		l := (*[8]float32)(lanes[8*r : 8*r+8])
		wr := w[r*wr : r*wr+k]
		for j := 0; j+8 <= k; j += 8 {
			wj, xj := (*[8]uint16)(wr[j:j+8]), (*[8]float32)(x[j:j+8])
			for i := range l {
				l[i] = fmaFast(l[i], f16Table[wj[i]], xj[i])
			}
		}
	}
}
