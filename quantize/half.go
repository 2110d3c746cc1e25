package quantize

import (
	"math"

	"github.com/x448/float16"
)

// BF16ToF32 decodes a bfloat16 bit pattern exactly: the 16 bits become the
// high half of a float32 (NaN payloads and subnormals are kept).
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 rounds f to bfloat16 with round-to-nearest-even on the dropped 16
// bits (torch's float → bfloat16 cast). NaN stays a quiet NaN with its sign;
// values that round past the largest bf16 become ±Inf.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return uint16(u>>16) | 0x0040
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// F16ToF32 decodes an IEEE binary16 bit pattern exactly
// (github.com/x448/float16).
func F16ToF32(h uint16) float32 { return float16.Frombits(h).Float32() }

// F32ToF16 rounds f to IEEE binary16 with round-to-nearest-even, as numpy's
// astype(np.float16) does: values beyond 65504 (after rounding) become ±Inf,
// so check F16Overflow first when that must not happen silently.
func F32ToF16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// F16Max is the largest finite IEEE binary16 value.
const F16Max = 65504

// f16Limit is the smallest magnitude that rounds to Inf in binary16:
// 65520 = 65504 + half an ulp (ties round to even, which is Inf here).
const f16Limit = 65520

// F16Overflow scans x before an f16 cast (BR-22) and returns the largest
// finite |value| and bad = true when any finite value would round to ±Inf in
// binary16 (|x| ≥ 65520) or any value is already ±Inf or NaN.
func F16Overflow(x []float32) (maxAbs float32, bad bool) {
	for _, v := range x {
		a := abs32(v)
		if a != a || a > math.MaxFloat32 {
			bad = true
			continue
		}
		if a > maxAbs {
			maxAbs = a
		}
		if a >= f16Limit {
			bad = true
		}
	}
	return maxAbs, bad
}
