package runtime

import (
	"encoding/binary"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// ggml's TQ1_0 / TQ2_0 ternary types (mainline llama.cpp, and bitnet.cpp's
// llama.cpp fork 406a5036) multiply with activations quantized to Q8_K, as
// ggml's mul_mat converts src1 to the type's vec_dot_type (ggml.c
// type_traits: TQ1_0 and TQ2_0 have vec_dot_type Q8_K). The code
// below follows ggml/src/ggml-quants.c of that fork: quantize_row_q8_K_ref,
// the AVX2 branches of ggml_vec_dot_tq1_0_q8_K / ggml_vec_dot_tq2_0_q8_K,
// dequantize_row_tq1_0 / dequantize_row_tq2_0 (get_rows).
//
// The AVX2 kernels keep 16-bit integer sums whose 16 lanes cover byte pairs
// of each 32-activation chunk; _mm256_madd_epi16(·, 1) folds them into eight
// int32 lanes, lane L holding the activations i with (i mod 32)/4 = L, and
// the per-block bsums are subtracted lane-wise (lane L loses bsums 2L and
// 2L+1, whatever activations those cover). With codes 0…2 and |q| ≤ 127 no
// 16-bit sum can wrap (at most 8128 in magnitude), so each lane value is an
// exact integer. The eight float lanes then accumulate
// float32(lane)·(d_y·d_x) block by block (a multiply and an add, not fused)
// and are reduced by hsum_float_8 (sumExp8). tqLanes computes the lanes.

// qkK is ggml's QK_K, the super-block of Q8_K, TQ1_0 and TQ2_0.
const qkK = 256

// Block sizes in bytes (ggml-common.h block_tq1_0, block_tq2_0).
const (
	tq1Bytes = 54 // qs[48], qh[4], f16 d
	tq2Bytes = 66 // qs[64], f16 d
)

// quantizeQ8K is ggml's quantize_row_q8_K_ref (the Q8_K from_float of the
// 406a5036 fork) on x (len a multiple of 256): per block the element of
// largest magnitude max (the first one on ties), iscale = −127/max,
// q = min(127, nearest_int(iscale·x)), d = 1/iscale, and bsums[j] = Σ of
// q[16j…16j+15]. An all-zero block gets d = 0 and zero codes. q receives
// len(x) codes, d one scale per block, bsums 16 sums per block. It panics on
// length mismatches. The work is kernels.QuantizeQ8K (the assembly absolute
// maximum and rounding of QuantizeI8S, the same bits as its pure-Go
// reference).
func quantizeQ8K(q []int8, d []float32, bsums []int16, x []float32) {
	if len(x)%qkK != 0 || len(q) != len(x) || len(d) != len(x)/qkK || len(bsums) != len(x)/16 {
		panic("runtime: quantizeQ8K length mismatch")
	}
	kernels.QuantizeQ8K(q, d, bsums, x)
}

// prepareQ8K fills a with x quantized to Q8_K (quantizeQ8K) for weights of
// type typ with rows rows, and, where the integer lanes have no assembly
// (kernels.TernaryAccelerated), the tables of dotTQ2_0 (always) or dotTQ1_0
// (from tq1LUTMinRows rows, one token at a time: 32 KiB per block and token
// would make a batch of 256 tokens through a 6912-input matrix cost 226 MB).
func (a *Activation) prepareQ8K(x []float32, typ gguf.Type, rows int) {
	a.q = resizeI8(a.q, len(x))
	a.d = resizeF32(a.d, len(x)/qkK)
	if cap(a.bsums) < len(x)/16 {
		a.bsums = make([]int16, len(x)/16)
	}
	a.bsums = a.bsums[:len(x)/16]
	quantizeQ8K(a.q, a.d, a.bsums, x)
	per := 0
	switch {
	case kernels.TernaryAccelerated():
	case typ == gguf.TypeTQ2_0:
		per = tq2LUTPerBlock
	case typ == gguf.TypeTQ1_0 && rows >= tq1LUTMinRows && !a.inBatch:
		per = tq1LUTPerBlock
	}
	n := len(x) / qkK * per
	if cap(a.lutTQ) < n {
		a.lutTQ = make([]int16, n)
	}
	a.lutTQ = a.lutTQ[:n]
	switch per {
	case tq2LUTPerBlock:
		buildTQ2LUT(a.lutTQ, a.q)
	case tq1LUTPerBlock:
		buildTQ1LUT(a.lutTQ, a.q)
	}
}

// tq1LUTPerBlock is the size of one block's TQ1_0 tables: 256 entries for
// each of qs[0…31] and two (even and odd digits) for each of qs[32…47].
const tq1LUTPerBlock = (32 + 2*16) * 256

// tq1LUTMinRows is the smallest TQ1_0 matrix (in rows) whose activations get
// the tables: building them (16384 entries per block) costs about what the
// lookups save on some hundred rows; smaller matrices take the direct digit
// products.
const tq1LUTMinRows = 256

// buildTQ1LUT fills, for the Q8_K codes q, the tables dotTQ1_0 reads: for
// block b, table m < 32 (entries (b·64 + m)·256 + c) holds Σ_n digit_n(c)·
// q[e + m + 32n] over the five digits of byte value c, e = 256b; for
// m = 32…47, table m holds the even digits' Σ (activations 160 + (m−32) +
// 16n, n = 0, 2, 4, integer lane (m−32)/4) and table m + 16 the odd ones'
// (n = 1, 3, lane 4 + (m−32)/4). Exact (at most 5·2·127 in magnitude).
func buildTQ1LUT(lut []int16, q []int8) {
	for b := 0; b < len(q)/qkK; b++ {
		y := q[b*qkK : (b+1)*qkK : (b+1)*qkK]
		tabs := lut[b*tq1LUTPerBlock : (b+1)*tq1LUTPerBlock]
		for m := 0; m < 32; m++ {
			t := (*[256]int16)(tabs[m*256:])
			y0, y1, y2, y3, y4 := int16(y[m]), int16(y[32+m]), int16(y[64+m]), int16(y[96+m]), int16(y[128+m])
			for c := range t {
				d := &tq1Trits[c]
				t[c] = int16(d[0])*y0 + int16(d[1])*y1 + int16(d[2])*y2 + int16(d[3])*y3 + int16(d[4])*y4
			}
		}
		for m := 0; m < 16; m++ {
			ev, od := (*[256]int16)(tabs[(32+m)*256:]), (*[256]int16)(tabs[(48+m)*256:])
			y0, y1, y2, y3, y4 := int16(y[160+m]), int16(y[176+m]), int16(y[192+m]), int16(y[208+m]), int16(y[224+m])
			for c := range ev {
				d := &tq1Trits[c]
				ev[c] = int16(d[0])*y0 + int16(d[2])*y2 + int16(d[4])*y4
				od[c] = int16(d[1])*y1 + int16(d[3])*y3
			}
		}
	}
}

// tq2LUTPerBlock is the size of one block's TQ2_0 nibble tables: for each
// of its 64 code bytes, 16 entries for the low nibble and 16 for the high.
const tq2LUTPerBlock = 64 * 32

// buildTQ2LUT fills, for the Q8_K codes q, the tables dotTQ2_0 reads: for
// the code byte at 32h + m of block b (activations 128h + 32l + m in bits
// 2l), entry ((b·64 + 32h + m)·32 + c) is c₁₀·q[e] + c₃₂·q[e+32] for the low
// nibble c and entry (…·32 + 16 + c) c₁₀·q[e+64] + c₃₂·q[e+96] for the high
// nibble, e = 256b + 128h + m. Their sum is the byte's Σ code·q, exactly
// (at most 4·3·127 in magnitude).
func buildTQ2LUT(lut []int16, q []int8) {
	for b := 0; b < len(q)/qkK; b++ {
		for h := 0; h < 2; h++ {
			ys := q[b*qkK+128*h : b*qkK+128*h+128 : b*qkK+128*h+128]
			for m := 0; m < 32; m++ {
				t := (*[32]int16)(lut[(b*64+32*h+m)*32:])
				y0, y1, y2, y3 := int16(ys[m]), int16(ys[32+m]), int16(ys[64+m]), int16(ys[96+m])
				for c := int16(0); c < 16; c++ {
					lo, hi := c&3, c>>2
					t[c] = lo*y0 + hi*y1
					t[16+c] = lo*y2 + hi*y3
				}
			}
		}
	}
}

// tq1Trits[b][n] is base-3 digit n (0 the most significant) of a TQ1_0 byte
// b: ((b·3^n mod 256)·3) >> 8, the code 0…2 (value code − 1). The AVX2 kernel
// computes the same digit with _mm256_avg_epu8 (TestTQ1DigitsAVX2).
var tq1Trits = func() (t [256][5]uint8) {
	pow := [5]uint8{1, 3, 9, 27, 81}
	for b := range t {
		for n, p := range pow {
			t[b][n] = uint8((uint16(uint8(b)*p) * 3) >> 8)
		}
	}
	return t
}()

// tqAccumulate adds one block's eight integer lanes (tqLanes) times
// d = d_y·f16(d_x) to the float lanes, as the AVX2 kernels do:
// acc_L += float32(lane_L)·d, rounded after the multiply and after the add.
//
// With fused (Activation.fmaAcc: gcc's build, mainline llama.cpp) the
// multiply and the add are one fused multiply-add, as gcc contracts
// _mm256_add_ps(_mm256_mul_ps(…), sumf).
func tqAccumulate(acc *[8]float32, lanes *[8]int32, bs []int16, d float32, fused bool) {
	for l := range acc {
		s := lanes[l] - int32(bs[2*l]) - int32(bs[2*l+1])
		if fused {
			acc[l] = fma32(acc[l], float32(s), d)
			continue
		}
		acc[l] += float32(float32(s) * d)
	}
}

// dotTQ2_0 is ggml_vec_dot_tq2_0_q8_K (AVX2) for one row of TQ2_0 blocks
// (byte 32h + m of qs holds the codes of activations 128h + 32l + m in bits
// 2l, l = 0…3; the f16 d follows) and the Q8_K activation a: each byte's
// Σ code·q comes from two nibble-table reads (buildTQ2LUT) into integer
// lane m/4, or, without the tables, from kernels.LanesTQ2_0.
func dotTQ2_0(row []byte, a *Activation) float32 {
	if len(a.lutTQ) == 0 {
		return dotTQLanes(row, a, false)
	}
	var acc [8]float32
	for b := range a.d {
		blk := (*[tq2Bytes]byte)(row[b*tq2Bytes:])
		lut := (*[tq2LUTPerBlock]int16)(a.lutTQ[b*tq2LUTPerBlock:])
		var lanes [8]int32
		for j := 0; j < 64; j += 4 {
			c0, c1, c2, c3 := blk[j], blk[j+1], blk[j+2], blk[j+3]
			t := lut[j*32 : j*32+128 : j*32+128]
			lanes[(j&31)>>2] += int32(t[c0&15]+t[16+c0>>4]) + int32(t[32+c1&15]+t[48+c1>>4]) +
				int32(t[64+c2&15]+t[80+c2>>4]) + int32(t[96+c3&15]+t[112+c3>>4])
		}
		d := a.d[b] * f16Table[binary.LittleEndian.Uint16(blk[64:])]
		tqAccumulate(&acc, &lanes, a.bsums[b*16:b*16+16], d, a.fmaAcc)
	}
	return sumExp8(acc[:])
}

// dotTQ1_0 is ggml_vec_dot_tq1_0_q8_K (AVX2) for one row of TQ1_0 blocks
// (format.TQ1_0 has the layout: qs[m] holds activations m + 32n, qs[32+m]
// activations 160 + m + 16n, qh[j] activations 240 + j + 4n) and the Q8_K
// activation a. Each activation i goes to integer lane (i mod 32)/4, as in
// the kernel's 32-byte vectors. With the tables of buildTQ1LUT (matrices
// of tq1LUTMinRows rows or more, where the lanes have no assembly) a code
// byte costs one read (two for qs[32…47]); otherwise kernels.LanesTQ1_0
// computes the digit products. The integers are the same.
func dotTQ1_0(row []byte, a *Activation) float32 {
	if len(a.lutTQ) == 0 {
		return dotTQLanes(row, a, true)
	}
	var acc [8]float32
	for b := range a.d {
		blk := row[b*tq1Bytes : (b+1)*tq1Bytes : (b+1)*tq1Bytes]
		y := a.q[b*qkK : (b+1)*qkK : (b+1)*qkK]
		var lanes [8]int32
		tabs := a.lutTQ[b*tq1LUTPerBlock : (b+1)*tq1LUTPerBlock : (b+1)*tq1LUTPerBlock]
		for m, c := range blk[:32] {
			lanes[m>>2] += int32(tabs[m*256+int(c)])
		}
		for m, c := range blk[32:48] {
			lanes[m>>2] += int32(tabs[(32+m)*256+int(c)])
			lanes[4+m>>2] += int32(tabs[(48+m)*256+int(c)])
		}
		for j, c := range blk[48:52] {
			t := &tq1Trits[c]
			// activations 240+j+4n sit at chunk positions 16+j+4n: lane 4+n.
			for n := 0; n < 4; n++ {
				lanes[4+n] += int32(t[n]) * int32(y[240+j+4*n])
			}
		}
		d := a.d[b] * f16Table[binary.LittleEndian.Uint16(blk[52:])]
		tqAccumulate(&acc, &lanes, a.bsums[b*16:b*16+16], d, a.fmaAcc)
	}
	return sumExp8(acc[:])
}

// dotTQLanes is dotTQ1_0 (tq1) / dotTQ2_0 with each block's lanes and
// their accumulation (tqAccumulate's arithmetic) from kernels.AccTQ1_0 /
// kernels.AccTQ2_0, then sumExp8 as there.
func dotTQLanes(row []byte, a *Activation, tq1 bool) float32 {
	var acc [8]float32
	if tq1 {
		kernels.AccTQ1_0(&acc, row, a.q, a.bsums, a.d, a.fmaAcc)
	} else {
		kernels.AccTQ2_0(&acc, row, a.q, a.bsums, a.d, a.fmaAcc)
	}
	return sumExp8(acc[:])
}

// embedRowTQ writes row id of a TQ1_0/TQ2_0 token_embd as float32, as ggml's
// get_rows does with dequantize_row_tq{1,2}_0: (code − 1)·f16(d).
func (w *Matrix) embedRowTQ(dst []float32, id int, tq1 bool) {
	row := w.raw[id*w.rowB : (id+1)*w.rowB]
	for b := 0; b < w.K/qkK; b++ {
		y := dst[b*qkK : (b+1)*qkK]
		if tq1 {
			blk := row[b*tq1Bytes : (b+1)*tq1Bytes]
			d := f16Table[binary.LittleEndian.Uint16(blk[52:])]
			for m, c := range blk[:32] {
				for n, t := range tq1Trits[c] {
					y[m+32*n] = float32(int(t)-1) * d
				}
			}
			for m, c := range blk[32:48] {
				for n, t := range tq1Trits[c] {
					y[160+m+16*n] = float32(int(t)-1) * d
				}
			}
			for j, c := range blk[48:52] {
				for n, t := range tq1Trits[c][:4] {
					y[240+j+4*n] = float32(int(t)-1) * d
				}
			}
			continue
		}
		blk := row[b*tq2Bytes : (b+1)*tq2Bytes]
		d := f16Table[binary.LittleEndian.Uint16(blk[64:])]
		for h := 0; h < 2; h++ {
			for m, c := range blk[32*h : 32*h+32] {
				for l := 0; l < 4; l++ {
					y[128*h+32*l+m] = float32(int(c>>(2*l)&3)-1) * d
				}
			}
		}
	}
}
