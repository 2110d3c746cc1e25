package kernels

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/x448/float16"
)

// QuantizeQ8K quantizes x (len a multiple of 256) to ggml's Q8_K blocks as
// quantize_row_q8_K_ref does (ggml/src/ggml-quants.c, mainline llama.cpp
// and bitnet.cpp's fork): per 256-element block, max is the element of
// largest magnitude (the first one on ties), iscale = −127/max, q =
// min(127, nearest_int(iscale·x)) with the product rounded to float32 and
// nearest_int rounding half to even, d = 1/iscale, and bsums[j] = Σ of
// q[16j…16j+15]; an all-zero block gets d = 0 and zero codes. q receives
// len(x) codes, d one scale per block, bsums 16 sums per block. Blocks
// without NaNs or infinities take the assembly absolute maximum and
// rounding of QuantizeI8S where there is one; the others the pure-Go
// reference, so the result never depends on the kernel. It panics on
// length mismatches.
func QuantizeQ8K(q []int8, d []float32, bsums []int16, x []float32) {
	if len(x)%256 != 0 || len(q) != len(x) || len(d) != len(x)/256 || len(bsums) != len(x)/16 {
		panic("kernels: QuantizeQ8K length mismatch")
	}
	for b := range d {
		xs := x[b*256 : (b+1)*256 : (b+1)*256]
		qs := q[b*256 : (b+1)*256 : (b+1)*256]
		bs := bsums[b*16 : (b+1)*16 : (b+1)*16]
		bits := absMaxBits(xs)
		switch {
		case bits >= 0x7f800000:
			quantizeQ8KRef(qs, d[b:b+1], bs, xs)
			continue
		case bits == 0:
			d[b] = 0
			clear(qs)
			clear(bs)
			continue
		}
		var vmax float32
		for _, v := range xs {
			if math.Float32bits(v)&0x7fffffff == bits {
				vmax = v
				break
			}
		}
		iscale := -127 / vmax
		if math.IsInf(float64(iscale), 0) {
			// A subnormal max: 0·∞ products are NaNs, whose conversion
			// is the reference's.
			quantizeQ8KRef(qs, d[b:b+1], bs, xs)
			continue
		}
		// |iscale·x| ≤ 127 after rounding, so QuantizeI8S's clamp to
		// −128…127 is the reference's min(127, ·).
		quantI8S(qs, xs, iscale)
		sumBytes16(bs, qs)
		d[b] = 1 / iscale
	}
}

// sumBytes16 writes the sum of each 16 consecutive codes of qs (256) to
// bs (16): eight codes at a time as the bytes of a uint64, biased by 128,
// added in pairs as 16-bit lanes, then the lanes folded; exact (at most
// 16·255 before the bias is taken off).
func sumBytes16(bs []int16, qs []int8) {
	const lo8 = 0x00ff00ff00ff00ff
	u := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(qs))), len(qs))
	for j := range bs {
		w0 := binary.LittleEndian.Uint64(u[16*j:]) ^ 0x8080808080808080
		w1 := binary.LittleEndian.Uint64(u[16*j+8:]) ^ 0x8080808080808080
		s := w0&lo8 + w0>>8&lo8 + w1&lo8 + w1>>8&lo8
		bs[j] = int16(int(s*0x0001000100010001>>48) - 16*128)
	}
}

// quantizeQ8KRef is QuantizeQ8K in Go, one block or more.
func quantizeQ8KRef(q []int8, d []float32, bsums []int16, x []float32) {
	for b := range d {
		xs := x[b*256 : (b+1)*256 : (b+1)*256]
		qs := q[b*256 : (b+1)*256 : (b+1)*256]
		bs := bsums[b*16 : (b+1)*16 : (b+1)*16]
		var vmax, amax float32
		for _, v := range xs {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, vmax = a, v
			}
		}
		if amax == 0 {
			d[b] = 0
			clear(qs)
			clear(bs)
			continue
		}
		iscale := -127 / vmax
		for j, v := range xs {
			n := int(roundHalfEven32(iscale * v))
			qs[j] = int8(min(127, max(n, -128)))
		}
		for j := range bs {
			var s int16
			for _, c := range qs[16*j : 16*j+16] {
				s += int16(c)
			}
			bs[j] = s
		}
		d[b] = 1 / iscale
	}
}

// QuantizeQ8_0 quantizes x (len a multiple of 32) to Q8_0 blocks the way
// ggml's AVX2 quantize_row_q8_0 does (ggml/src/ggml-cpu/arch/x86/quants.c):
// per block amax = max |x| (float32), d = F16(amax/127) widened back, id =
// 127/amax (0 when amax is 0), q = round_half_even(x·id). qs receives
// len(x) codes and d one scale per block: the activations of Q2_0, Q8_0
// and Q4_0 products. Codes convert as the AVX2 code's _mm256_cvtps_epi32
// and saturating packs do (cvtPackI8): a block whose amax is below
// 127/MaxFloat32 gets −128 codes, as ggml's does. On amd64 with AVX2 the blocks run in assembly; a
// block with a NaN or an infinity takes the Go reference. It panics on
// length mismatches.
func QuantizeQ8_0(qs []int8, d []float32, x []float32) {
	if len(x)%32 != 0 || len(qs) != len(x) || len(d) != len(x)/32 {
		panic("kernels: QuantizeQ8_0 length mismatch")
	}
	quantizeQ8_0(qs, d, x)
}

// quantizeQ8_0Ref is QuantizeQ8_0 in Go.
func quantizeQ8_0Ref(qs []int8, d []float32, x []float32) {
	for b := range d {
		blk := x[b*32 : (b+1)*32]
		var amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d[b] = f16Table[float16.Fromfloat32(amax/127).Bits()]
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for i, v := range blk {
			qs[b*32+i] = cvtPackI8(roundHalfEven32(v * id))
		}
	}
}

// cvtPackI8 is what VCVTPS2DQ, VPACKSSDW and VPACKSSWB make of an integral
// float32: the value clamped to [−128, 127], and −128 for a NaN or a value
// outside int32 (the conversion's "integer indefinite" 0x80000000). Only
// blocks with amax below 127/MaxFloat32 (id overflows to +Inf) or with an
// infinity reach those cases.
func cvtPackI8(r float32) int8 {
	switch {
	case !(r > -0x1p31 && r < 0x1p31):
		return -128
	case r > 127:
		return 127
	case r < -128:
		return -128
	}
	return int8(r)
}
