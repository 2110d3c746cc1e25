package quantize

import (
	"encoding/binary"
	"math"
)

// Q6_K block geometry (ggml block_q6_K: ql[128] low 4 bits, qh[64] high 2
// bits, int8 scales[16], f16 d; 256 weights in 210 bytes).
const (
	QKK      = 256
	Q6KBytes = 210
)

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose max |x| is below it is
// all zero.
const groupMaxEps float32 = 1e-15

// nearestInt is ggml's nearest_int (the 12582912 magic-number rounding):
// round half to even for |v| < 2^22.
func nearestInt(v float32) int { return int(math.RoundToEven(float64(v))) }

// makeQxQuants is ggml-org/llama.cpp ggml-quants.c make_qx_quants for
// rmse_type 1 without importance weights (weights x²), as
// quantize_row_q6_K_ref calls it (n = 16, nmax = 32): the best scale of a
// small search around −nmax/max, with levels L ∈ [0, 2·nmax). Every product
// is rounded to float32 as the C code does (explicit conversions keep Go from
// fusing multiply-adds).
func makeQxQuants(nmax int, x []float32, L []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, mx = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	fn := float32(nmax)
	clamp := func(l int) int { return max(-nmax, min(nmax-1, l)) }
	iscale := -fn / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale * v))
		L[i] = int8(l + nmax)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(w * float32(l) * float32(l))
	}
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fn + float32(float32(0.1)*float32(is))) / mx
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clamp(nearestInt(iscale * v))
			w := float32(v * v)
			sumlx += float32(float32(w*v) * float32(l))
			suml2 += float32(float32(w*float32(l)) * float32(l))
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clamp(nearestInt(iscale*v)))
			}
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// QuantizeQ6K encodes x (len a multiple of 256) as ggml Q6_K blocks into dst
// (len(x)/256·210 bytes), byte for byte as ggml-org/llama.cpp
// ggml/src/ggml-quants.c quantize_row_q6_K_ref (what llama-quantize uses
// without an importance matrix). It panics on a length mismatch.
func QuantizeQ6K(dst []byte, x []float32) {
	if len(x)%QKK != 0 || len(dst) != len(x)/QKK*Q6KBytes {
		panic("quantize: QuantizeQ6K: length mismatch")
	}
	var L [QKK]int8
	var scales [QKK / 16]float32
	for b := 0; b < len(x)/QKK; b++ {
		xb := x[b*QKK : (b+1)*QKK]
		out := dst[b*Q6KBytes : (b+1)*Q6KBytes]
		ql, qh, sc := out[:128], out[128:192], out[192:208]
		var maxScale, maxAbsScale float32
		for ib := range scales {
			s := makeQxQuants(32, xb[16*ib:16*ib+16], L[16*ib:16*ib+16])
			scales[ib] = s
			if a := abs32(s); a > maxAbsScale {
				maxAbsScale, maxScale = a, s
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(out)
			continue
		}
		iscale := -128 / maxScale
		dh := F32ToF16(1 / iscale)
		binary.LittleEndian.PutUint16(out[208:], dh)
		for ib, s := range scales {
			sc[ib] = byte(int8(min(127, nearestInt(iscale*s))))
		}
		df := F16ToF32(dh)
		for j := 0; j < QKK/16; j++ {
			d := float32(df * float32(int8(sc[j])))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(xb[16*j+ii] / d)
				L[16*j+ii] = int8(max(-32, min(31, l)) + 32)
			}
		}
		for j := 0; j < QKK; j += 128 {
			q, h := ql[j/2:j/2+64], qh[j/4:j/4+32]
			for l := 0; l < 32; l++ {
				q1, q2, q3, q4 := byte(L[j+l]), byte(L[j+l+32]), byte(L[j+l+64]), byte(L[j+l+96])
				q[l] = q1&0xF | (q3&0xF)<<4
				q[l+32] = q2&0xF | (q4&0xF)<<4
				h[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// DequantizeQ6K decodes Q6_K blocks (ggml dequantize_row_q6_K:
// (d·scale)·q in float32) into dst (len(src)/210·256 values). It panics on a
// length mismatch.
func DequantizeQ6K(dst []float32, src []byte) {
	if len(src)%Q6KBytes != 0 || len(dst) != len(src)/Q6KBytes*QKK {
		panic("quantize: DequantizeQ6K: length mismatch")
	}
	for b := 0; b < len(src)/Q6KBytes; b++ {
		in := src[b*Q6KBytes : (b+1)*Q6KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(in[208:]))
		y := dst[b*QKK : (b+1)*QKK]
		for n := 0; n < QKK; n += 128 {
			ql, qh, sc := in[n/2:n/2+64], in[128+n/4:128+n/4+32], in[192+n/16:192+n/16+8]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int8(ql[l]&0xF|(qh[l]>>0&3)<<4) - 32
				q2 := int8(ql[l+32]&0xF|(qh[l]>>2&3)<<4) - 32
				q3 := int8(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int8(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				y[n+l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				y[n+l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				y[n+l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				y[n+l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}
