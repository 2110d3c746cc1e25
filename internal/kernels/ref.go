package kernels

import (
	"math"

	"github.com/x448/float16"
)

// The pure-Go kernels below are the reference: every assembly kernel of this
// package must return exactly what they return (tests compare both on random
// and edge inputs, and the `purego` build tag makes the exported functions
// call these directly). They were the runtime's own kernels before the
// assembly existed (runtime/matrix.go dotI2S, runtime/dot.go dotF16ggml,
// runtime/act.go QuantizeI8S).

// f16Table maps every IEEE binary16 bit pattern to its float32 value (exact).
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
}()

// dotI2SRef returns Σ code_k·q_k over one packed I2_S row (x86 layout: each
// 32-byte block holds 128 codes, byte j carrying elements j, j+32, j+64,
// j+96 in bits 7-6, 5-4, 3-2, 1-0), with the integer arithmetic of
// bitnet.cpp's AVX2 ggml_vec_dot_i2_i8_s (src/ggml-bitnet-mad.cpp of
// microsoft/BitNet): pairs of code·q products go to sixteen int16 lanes
// (lane l takes bytes 2l and 2l+1 of every sub-block), the lanes accumulate
// up to 32 blocks in 16 bits, wrapping on overflow, and only then are
// widened to int32. The wrap can only happen for rows of thousands of
// inputs with large activations; reproducing it keeps such rows equal to
// the reference.
func dotI2SRef(row []byte, q []int8) int32 {
	var total int32
	nb := len(row) / 32
	for g := 0; g < nb; g += 32 {
		// Per byte position j, the int32 sum over the group; lane l of the
		// reference is bytes 2l and 2l+1. Wrapping int16 additions give the
		// exact sum modulo 2^16 (each added term is below 2^11), so the lane
		// value is int16(s[2l] + s[2l+1]).
		var s [32]int32
		for b := g; b < min(g+32, nb); b++ {
			blk := row[b*32 : b*32+32 : b*32+32]
			x := q[b*128 : b*128+128 : b*128+128]
			for j := 0; j < 32; j++ {
				c := blk[j]
				s[j] += int32(c>>6)*int32(x[j]) + int32(c>>4&3)*int32(x[j+32]) +
					int32(c>>2&3)*int32(x[j+64]) + int32(c&3)*int32(x[j+96])
			}
		}
		for l := 0; l < 16; l++ {
			total += int32(int16(s[2*l] + s[2*l+1]))
		}
	}
	return total
}

// dotI2S4Ref is DotI2S4's reference: dotI2SRef of the row with each
// activation row.
func dotI2S4Ref(row []byte, q0, q1, q2, q3 []int8) [4]int32 {
	return [4]int32{dotI2SRef(row, q0), dotI2SRef(row, q1), dotI2SRef(row, q2), dotI2SRef(row, q3)}
}

// dotF16RowsRef is DotF16RowsStride's reference for len(x) a multiple of
// 32: row r is w[r·stride:][:len(x)].
func dotF16RowsRef(dst []float32, w []uint16, stride int, x []float32) {
	k := len(x)
	for r := range dst {
		dst[r] = dotF16BodyRef(w[r*stride:r*stride+k], x)
	}
}

// f32ToF16Ref is F32ToF16's reference (x448/float16.Fromfloat32, checked
// by its author on all 2^32 inputs against IEEE round to nearest even).
func f32ToF16Ref(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = float16.Fromfloat32(v).Bits()
	}
}

// roundF16sRef is RoundF16's reference.
func roundF16sRef(dst, src []float32) {
	for i, v := range src {
		dst[i] = f16Table[float16.Fromfloat32(v).Bits()]
	}
}

// dotI2SRowsRef is DotI2SRows's reference: dotI2SRef of each row of rowB
// bytes, then bitnet.cpp's epilogue in float32.
func dotI2SRowsRef(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32) {
	for r := range dst {
		v := float32(dotI2SRef(rows[r*rowB:(r+1)*rowB], q)) - sumf
		v = v / s
		dst[r] = v * scale
	}
}

// reduce8x4 is GGML_F32x8_REDUCE on four 8-lane accumulators: acc0+acc2 and
// acc1+acc3 added lane by lane, then lanes l and l+4 added, then
// (t0+t1)+(t2+t3).
func reduce8x4(acc *[4][8]float32) float32 {
	var x [8]float32
	for l := range x {
		a := acc[0][l] + acc[2][l]
		b := acc[1][l] + acc[3][l]
		x[l] = a + b
	}
	t0, t1, t2, t3 := x[0]+x[4], x[1]+x[5], x[2]+x[6], x[3]+x[7]
	return (t0 + t1) + (t2 + t3)
}

// dotF16BodyRef is the vector part of ggml's AVX2 + F16C vec_dot_f16
// (ggml/src/ggml.c of bitnet.cpp's llama.cpp fork) over len(w) elements, a
// multiple of 32: four accumulators of eight lanes, element i+8j+l of each
// 32-element step going to lane l of accumulator j as a float32 product
// (rounded) added in float32 (rounded), then reduce8x4. The explicit
// float32 conversion of the product keeps the Go compiler from fusing the
// multiply and add on any GOARCH (the Go spec allows fusion otherwise).
// When w and x both hold F16 values the product is exact and fusion would
// not matter; the assembly kernels round it too, so they agree with this
// function for any x.
func dotF16BodyRef(w []uint16, x []float32) float32 {
	n := len(w)
	x = x[:n]
	var acc [4][8]float32
	for i := 0; i < n; i += 32 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 8; l++ {
				k := i + j*8 + l
				acc[j][l] += float32(f16Table[w[k]] * x[k])
			}
		}
	}
	return reduce8x4(&acc)
}

// dotF16Ref is ggml_vec_dot_f16 (AVX2 + F16C) for a row of F16 bits and a
// float32 activation: dotF16BodyRef over the first len(w)&^31 elements,
// then the tail's float32 products summed in float64 (ggml_float), and the
// result rounded to float32.
func dotF16Ref(w []uint16, x []float32) float32 {
	n := len(w)
	x = x[:n]
	np := n &^ 31
	sum := float64(dotF16BodyRef(w[:np], x[:np]))
	for i := np; i < n; i++ {
		sum += float64(float32(f16Table[w[i]] * x[i]))
	}
	return float32(sum)
}

// roundHalfEven32 rounds f to the nearest integer, ties to even, as ggml's
// nearest_int (the 12582912.f magic-number trick) and _mm256_round_ps with
// _MM_ROUND_NEAREST do.
func roundHalfEven32(f float32) float32 { return float32(math.RoundToEven(float64(f))) }

// quantizeI8SRef is bitnet.cpp's quantize_row_i8_s (src/ggml-bitnet-mad.cpp):
// amax = max(1e-5, max_k |x_k|) in float64, scale = float32(127/amax),
// q_k = clamp(round_half_even(float32(x_k·scale)), −128, 127), sum = Σ q_k.
// len(dst) ≥ len(x).
func quantizeI8SRef(dst []int8, x []float32) (scale float32, sum int32) {
	amax := 1e-5
	for _, v := range x {
		amax = math.Max(amax, math.Abs(float64(v)))
	}
	scale = float32(127 / amax)
	return scale, quantI8SRef(dst, x, scale)
}

// quantI8SRef is the second pass of quantizeI8SRef: codes and their sum for
// a given scale.
func quantI8SRef(dst []int8, x []float32, scale float32) (sum int32) {
	dst = dst[:len(x)]
	for i, v := range x {
		r := roundHalfEven32(v * scale)
		if r > 127 {
			r = 127
		} else if r < -128 {
			r = -128
		}
		dst[i] = int8(r)
		sum += int32(r)
	}
	return sum
}

// absMaxBitsRef returns max_k bits(x_k) & 0x7fffffff: the bits of the
// largest |x_k| when every x_k is finite; a NaN or an infinity anywhere
// gives a value ≥ 0x7f800000.
func absMaxBitsRef(x []float32) uint32 {
	var m uint32
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return m
}

// addAbs4x8Ref adds |x[32i+8k+l]| to acc[8k+l] for every 32-float row i of
// x, in row order: the level-0 step of torch's cascade sum of |x| with
// 8-lane vectors and four interleaved accumulators (quantize.blockSum,
// aten/src/ATen/native/cpu/SumKernel.cpp multi_row_sum).
func addAbs4x8Ref(acc *[32]float32, x []float32) {
	for i := 0; i+32 <= len(x); i += 32 {
		row := x[i : i+32 : i+32]
		for l, f := range row {
			acc[l] += math.Float32frombits(math.Float32bits(f) &^ (1 << 31))
		}
	}
}

// decodeBF16Ref widens len(dst) little-endian bf16 values of raw and
// reports whether one of them is ±Inf or NaN (exponent bits all set).
func decodeBF16Ref(dst []float32, raw []byte) (nonFinite bool) {
	raw = raw[:2*len(dst)]
	var flags uint16
	for i := range dst {
		b := uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		flags |= (b & 0x7f80) + 0x80 // bit 15 set exactly when the exponent is all ones
		dst[i] = math.Float32frombits(uint32(b) << 16)
	}
	return flags&0x8000 != 0
}

// packI2SRef packs ternary values into the x86 I2_S layout (QK 128; for
// block b and j < 32, dst[32b+j] = c[128b+j]<<6 | c[128b+j+32]<<4 |
// c[128b+j+64]<<2 | c[128b+j+96] with c = t+1; bitnet.cpp quantize_i2_s)
// and reports whether every value was in {-1, 0, 1}. It stops at the first
// block holding another value.
func packI2SRef(dst []byte, t []int8) (ok bool) {
	for b := 0; b+128 <= len(t); b += 128 {
		blk := t[b : b+128 : b+128]
		out := dst[b/4 : b/4+32 : b/4+32]
		for j := 0; j < 32; j++ {
			c0, c1, c2, c3 := byte(blk[j]+1), byte(blk[j+32]+1), byte(blk[j+64]+1), byte(blk[j+96]+1)
			if c0 > 2 || c1 > 2 || c2 > 2 || c3 > 2 {
				return false
			}
			out[j] = c0<<6 | c1<<4 | c2<<2 | c3
		}
	}
	return true
}

// ternarizeRef writes t = clamp(round_half_even(float32(x·inv)), −1, 1)
// for every element: +1 above 0.5, −1 below −0.5, else 0 (0.5 rounds to
// 0; a NaN product gives 0), the second half of BitNet's weight_quant
// (quantize.TernarizeWith).
func ternarizeRef(dst []int8, x []float32, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		p := v * inv
		var c int8
		if p > 0.5 {
			c = 1
		} else if p < -0.5 {
			c = -1
		}
		dst[i] = c
	}
}

// bf16ToF16Ref converts len(raw)/2 little-endian bf16 values to little-endian
// F16 bits (widened exactly, then rounded to nearest even by
// x448/float16, which is quantize.F32ToF16) and reports whether all had
// |b| < 0x4780 (below 65536: finite and within the F16 range).
func bf16ToF16Ref(out, raw []byte) (inRange bool) {
	inRange = true
	for i := 0; i+1 < len(raw); i += 2 {
		b := uint16(raw[i]) | uint16(raw[i+1])<<8
		if b&0x7fff >= 0x4780 {
			inRange = false
		}
		h := float16.Fromfloat32(math.Float32frombits(uint32(b) << 16)).Bits()
		out[i], out[i+1] = byte(h), byte(h>>8)
	}
	return inRange
}

// unpackU8Ref writes codes[i·stride+k] = min(((packed[k]>>2i)&3) − 1, 1),
// i < 4: the ternary values of an HF packed U8 tensor (code 3, never
// written by the packers, clamps to +1 as quantize.UnpackPackedU8 does).
func unpackU8Ref(codes []int8, stride int, packed []byte) {
	for k, v := range packed {
		for i := 0; i < 4; i++ {
			codes[i*stride+k] = min(int8(v>>(2*i)&3)-1, 1)
		}
	}
}

// absSumBF16BlocksRef decodes each block of blockLen bf16 values of raw and
// sums |x| from a zero accumulator as addAbs4x8Ref does (the level-0 block
// sums of torch's cascade, quantize.AbsMeanFromBlocks), and reports whether
// any value is ±Inf or NaN.
func absSumBF16BlocksRef(sums []float32, raw []byte, blockLen int) (nonFinite bool) {
	var row [32]float32
	for b := 0; b < len(sums)/32; b++ {
		var acc [32]float32
		blk := raw[2*blockLen*b : 2*blockLen*(b+1)]
		for i := 0; i < len(blk); i += 64 {
			nonFinite = decodeBF16Ref(row[:], blk[i:i+64]) || nonFinite
			addAbs4x8Ref(&acc, row[:])
		}
		copy(sums[32*b:32*b+32], acc[:])
	}
	return nonFinite
}

// ternarizePackI2SRef is decodeBF16Ref, ternarizeRef and packI2SRef over
// each 128 bf16 values of raw (x86 I2_S layout; the codes are always in
// {-1, 0, 1}, so the pack cannot fail).
func ternarizePackI2SRef(dst, raw []byte, inv float32) {
	var x [128]float32
	var t [128]int8
	for b := 0; 256*b < len(raw); b++ {
		decodeBF16Ref(x[:], raw[256*b:256*b+256])
		ternarizeRef(t[:], x[:], inv)
		packI2SRef(dst[32*b:32*b+32], t[:])
	}
}
