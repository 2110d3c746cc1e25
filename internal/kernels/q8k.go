package kernels

import (
	"encoding/binary"
	"math"
	"unsafe"
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
