package runtime

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// IQ1_BN / IQ2_BN weights (ik_llama.cpp's ternary types 134/135) multiply
// with ik_llama.cpp's Q8_K64 activations as its x86 AVX2 CPU build does
// (ikawrakow/ik_llama.cpp 8337e4cd, built without HAVE_FANCY_SIMD):
//
//   - the activation row is quantized by quantize_row_q8_K64_ref's __AVX__
//     branch (ggml/src/iqk/iqk_quantize.cpp): element e belongs to group
//     (e mod 16)/4 (four groups, one per 32-bit lane of a 16-element load);
//     d_g = max_g|x|/127, q = round-half-even(x·(1/d_g)) saturated to int8,
//     and minus_g = d_g·Σ_{e∈g} q_e, each rounded to float32;
//   - the weight codes c ∈ {0, 1, 2} (ternary c − 1) are multiplied with q in
//     exact integer arithmetic, one int32 sum S_g per group
//     (kernels.SumsIQ1BN / kernels.SumsIQ2BN)
//     (mul_mat_iq1bn_q8_K64 / mul_mat_iq2bn_q8_K64 in
//     ggml/src/iqk/iqk_gemm_1bit.cpp: maddubs/madd lanes, the two 128-bit
//     halves added, so lane g holds exactly the group-g products);
//   - per group v_g = fma(d_g, float32(S_g), −minus_g) (_mm_fmsub_ps), then
//     hsum_float_4: (v_0 + v_2) + (v_1 + v_3), times the row scale (f32 for
//     IQ2_BN, f16 widened for IQ1_BN).
//
// Every step is a float32 operation in that order, so the row result equals
// the reference's bit for bit; it does not depend on batch size (the
// reference's multi-token kernels keep the same exact integer sums).

// q8K64Groups is the number of scales Q8_K64 keeps per activation row.
const q8K64Groups = 4

// newIQBNMatrix wraps an IQ1_BN or IQ2_BN tensor with ne = [k, m]: each row
// is its scale (IQ2_BN f32, IQ1_BN f16) followed by k/64 blocks (16 resp.
// 13 bytes, format.IQ2BN / format.IQ1BN). k must be a multiple of 64 and at
// least 512 (ik_llama.cpp's quantize_row_q8_K64_ref asserts k ≥ 512). A row
// scale that is NaN or infinite is an error. data must hold
// gguf.NBytes(typ, [k, m]) bytes (checked by NewMatrix).
func newIQBNMatrix(typ gguf.Type, k, m int, data []byte) (*Matrix, error) {
	var f format.Format = format.IQ2BN{}
	rowB := 4 + k/4
	if typ == gguf.TypeIQ1BN {
		f = format.IQ1BN{}
		rowB = 2 + 13*k/format.QKBN
	}
	if err := f.(format.RuntimeChecker).RuntimeCheck(k, m); err != nil {
		return nil, err
	}
	w := &Matrix{Type: typ, K: k, M: m, raw: data[:rowB*m], rowB: rowB}
	for r := 0; r < m; r++ {
		if s := w.iqbnScale(r); math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			return nil, fmt.Errorf("%s row %d scale is %v", typ, r, s)
		}
	}
	return w, nil
}

// iqbnScale returns row r's weight scale.
func (w *Matrix) iqbnScale(r int) float32 {
	row := w.raw[r*w.rowB:]
	if w.Type == gguf.TypeIQ1BN {
		return f16ToF32(binary.LittleEndian.Uint16(row))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(row))
}

// QuantizeQ8K64 quantizes x (len k, a multiple of 16) to ik_llama.cpp's
// Q8_K64 as its x86 build does (quantize_row_q8_K64_ref, __AVX__ branch,
// ggml/src/iqk/iqk_quantize.cpp): q (len k) gets the int8 codes in element
// order, d the four group scales max|x|/127 and minus the four products
// d_g·Σq over each group, where element e is in group (e mod 16)/4. A group
// of zeros has d = 0 and codes 0. It is kernels.QuantizeQ8K64 (assembly on
// amd64, the same bits as its pure-Go reference) and panics on mismatched
// lengths.
func QuantizeQ8K64(q []int8, d, minus *[q8K64Groups]float32, x []float32) {
	kernels.QuantizeQ8K64(q, d, minus, x)
}

// prepareQ8K64 fills a with x's Q8_K64 form.
func (a *Activation) prepareQ8K64(x []float32) {
	a.q = resizeI8(a.q, len(x))
	QuantizeQ8K64(a.q, &a.d64, &a.minus64, x)
}

// iqbnRow is row r of an IQ1_BN/IQ2_BN matrix times the Q8_K64 activation a.
func (w *Matrix) iqbnRow(r int, a *Activation) float32 {
	row := w.raw[r*w.rowB : (r+1)*w.rowB]
	var s [q8K64Groups]int32
	if w.Type == gguf.TypeIQ2BN {
		s = kernels.SumsIQ2BN(row[4:], a.q)
	} else {
		s = kernels.SumsIQ1BN(row[2:], a.q)
	}
	var v [q8K64Groups]float32
	for g := range v {
		v[g] = fma32(-a.minus64[g], a.d64[g], float32(s[g]))
	}
	return w.iqbnScale(r) * ((v[0] + v[2]) + (v[1] + v[3]))
}

// iq1Trits[v] are the five base-3 digits (0..2, least significant first) an
// IQ1_BN byte v stands for: digit j is ((v·3^(4−j)) mod 256)·3 >> 8, the
// _mm256_mullo_epi16 / _mm256_mulhi_epu16 pair of ik_llama.cpp's
// DequantizerIQ1BN (format.IQ1BN documents the packing).
var iq1Trits = func() (t [256][5]int8) {
	mult := [5]int{81, 27, 9, 3, 1}
	for v := range t {
		for j, m := range mult {
			t[v][j] = int8((v * m % 256 * 3) >> 8)
		}
	}
	return t
}()

// iqbnEmbedRow writes row id of an IQ1_BN/IQ2_BN matrix as (c − 1)·scale,
// as ik_llama.cpp's dequantize_row_iq{1,2}_bn.
func (w *Matrix) iqbnEmbedRow(dst []float32, id int) {
	row := w.raw[id*w.rowB : (id+1)*w.rowB]
	d := w.iqbnScale(id)
	if w.Type == gguf.TypeIQ2BN {
		blocks := row[4:]
		for b := 0; b < w.K/64; b++ {
			for j, c := range blocks[16*b : 16*b+16] {
				for i := 0; i < 4; i++ {
					dst[64*b+j+16*i] = d * float32(int(c>>(2*uint(i))&3)-1)
				}
			}
		}
		return
	}
	blocks := row[2:]
	for b := 0; b < w.K/64; b++ {
		blk := blocks[13*b : 13*b+13]
		for i16 := 0; i16 < 4; i16++ {
			for kk := 0; kk < 3; kk++ {
				for j, t := range iq1Trits[blk[3*i16+kk]] {
					dst[64*b+16*i16+5*kk+j] = d * float32(int(t)-1)
				}
			}
			dst[64*b+16*i16+15] = d * float32(int(iq1Trits[blk[12]][i16])-1)
		}
	}
}
