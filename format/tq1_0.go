package format

import (
	"encoding/binary"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// TQ1_0 is ggml's 1.6875-bit ternary type (34; ggml-org/llama.cpp
// ggml/src/ggml-quants.c quantize_row_tq1_0_ref / dequantize_row_tq1_0):
// blocks of 256 weights in 54 bytes: qs[48], qh[4], f16 d = max|w|.
//
//   - qs[m], m < 32: the 5 codes m + 32n (n = 0..4, n = 0 the most
//     significant base-3 digit) of elements 0..159;
//   - qs[32+m], m < 16: codes 160 + m + 16n of elements 160..239;
//   - qh[j], j < 4: codes 240 + j + 4n (n = 0..3) and a zero fifth digit.
//
// A byte holds v = Σ (t+1)·3^(4−n) stored as ⌈v·256/243⌉, so digit n is
// ((byte·3^n mod 256)·3) >> 8.
type TQ1_0 struct{}

// tq1Pow3 is 3^n for the digit extraction.
var tq1Pow3 = [5]byte{1, 3, 9, 27, 81}

// Name is "TQ1_0".
func (TQ1_0) Name() string { return "TQ1_0" }

// Type is gguf.TypeTQ1_0.
func (TQ1_0) Type() gguf.Type { return gguf.TypeTQ1_0 }

// ScaleGroup is 256: one f16 scale per block.
func (TQ1_0) ScaleGroup(int) int { return QKK }

// StoredScale is s rounded to f16 (quantize.F32ToF16, as Encode stores it)
// and widened back, as Decode returns it.
func (TQ1_0) StoredScale(s float32) float32 { return quantize.F16ToF32(quantize.F32ToF16(s)) }

// Check: K must be a multiple of 256.
func (TQ1_0) Check(k, m int) error { return checkQK(k, QKK, "TQ1_0") }

// Bytes is k·m/256·54.
func (TQ1_0) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeTQ1_0, k, m) }

// tq1Slots lists, for each of the 52 code bytes of a block, the element of
// each base-3 digit (n = 0 first; -1 for the fifth digit of the qh bytes).
var tq1Slots = func() (s [52][5]int) {
	for m := 0; m < 32; m++ {
		for n := 0; n < 5; n++ {
			s[m][n] = m + 32*n
		}
	}
	for m := 0; m < 16; m++ {
		for n := 0; n < 5; n++ {
			s[32+m][n] = 160 + m + 16*n
		}
	}
	for j := 0; j < 4; j++ {
		for n := 0; n < 4; n++ {
			s[48+j][n] = 240 + j + 4*n
		}
		s[48+j][4] = -1
	}
	return s
}()

// pack5 is ⌈v·256/243⌉ for v < 243: the byte holding five base-3 digits.
// (Indices up to 511 so invalid codes, reported as errors, stay in range.)
var pack5 = func() (t [512]byte) {
	for v := range t {
		t[v] = byte((v*256 + 242) / 243)
	}
	return t
}()

// Encode writes each block's codes and its scale as f16 (a zero-scale block
// stores every code as 0).
func (f TQ1_0) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	var zero [QKK]int8
	for b, d := range scales {
		blk := codes[b*QKK : (b+1)*QKK]
		if d == 0 {
			blk = zero[:]
		}
		out := dst[b*54 : (b+1)*54]
		if !validCodes(blk) {
			return fmt.Errorf("TQ1_0: a code of block %d is outside {-1, 0, 1}", b)
		}
		bb := asBytes(blk)
		// Bytes 0..31 (elements i + 32n) and 32..47 (160 + i + 16n): eight
		// bytes at a time, the base-3 value Σ (t+1)·3^(4−n) computed in byte
		// lanes (at most 242, so no carries), then ⌈v·256/243⌉ per lane.
		for _, r := range [2]struct{ base, s, at int }{{0, 32, 0}, {160, 16, 32}} {
			for j := 0; j < r.s; j += 8 {
				v := uint64(0)
				for n := 0; n < 5; n++ {
					v = v*3 + plus1(binary.LittleEndian.Uint64(bb[r.base+n*r.s+j:]))
				}
				for l := 0; l < 8; l++ {
					out[r.at+j+l] = pack5[byte(v>>(8*l))]
				}
			}
		}
		for j := 0; j < 4; j++ { // elements 240 + j + 4n, fifth digit 0
			c := func(e int) int { return int(blk[e]) + 1 }
			out[48+j] = pack5[(c(240+j)*27+c(244+j)*9+c(248+j)*3+c(252+j))*3]
		}
		binary.LittleEndian.PutUint16(out[52:], quantize.F32ToF16(d))
	}
	return nil
}

// trit returns base-3 digit n of a packed byte, multiplying by pow3[n] to
// bring it to the top (ggml's and ik_llama.cpp's digit extraction).
func trit(q byte, n int, pow3 [5]byte) int8 {
	v := q * pow3[n]
	return int8((uint16(v)*3)>>8) - 1
}

// tritTable holds the five digits of every byte for one digit order.
func tritTable(pow3 [5]byte) (t [256][5]int8) {
	for q := range t {
		for n := range t[q] {
			t[q][n] = trit(byte(q), n, pow3)
		}
	}
	return t
}

// tq1Digits are TQ1_0's digits of every byte, most significant first.
var tq1Digits = tritTable(tq1Pow3)

// Decode unpacks every block and returns the block scales.
func (f TQ1_0) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	scales := make([]float32, k*m/QKK)
	for b := range scales {
		blk := codes[b*QKK : (b+1)*QKK]
		in := data[b*54 : (b+1)*54]
		for i, slots := range tq1Slots {
			dg := &tq1Digits[in[i]]
			for n, e := range slots {
				if e >= 0 {
					blk[e] = dg[n]
				}
			}
		}
		scales[b] = quantize.F16ToF32(binary.LittleEndian.Uint16(in[52:]))
	}
	zeroCodesOfZeroScales(codes, scales, QKK)
	return scales, nil
}

// Scales returns the f16 block scales.
func (f TQ1_0) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, k*m/QKK, 54, 52, true)
}
