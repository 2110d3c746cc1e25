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

// Encode writes each block's codes and its scale as f16 (a zero-scale block
// stores every code as 0).
func (f TQ1_0) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	for b, d := range scales {
		blk := codes[b*QKK : (b+1)*QKK]
		out := dst[b*54 : (b+1)*54]
		for i, slots := range tq1Slots {
			v := 0
			for _, e := range slots {
				t := 1
				if e >= 0 && d != 0 {
					t = int(blk[e]) + 1
					if t < 0 || t > 2 {
						return fmt.Errorf("TQ1_0: code %d of block %d is outside {-1, 0, 1}", blk[e], b)
					}
				} else if e < 0 {
					t = 0
				}
				v = 3*v + t
			}
			out[i] = byte((v*256 + 242) / 243)
		}
		binary.LittleEndian.PutUint16(out[52:], quantize.F32ToF16(d))
	}
	return nil
}

// trit returns base-3 digit n (0 = most significant) of a packed byte.
func trit(q byte, n int, pow3 [5]byte) int8 {
	v := q * pow3[n]
	return int8((uint16(v)*3)>>8) - 1
}

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
			for n, e := range slots {
				if e >= 0 {
					blk[e] = trit(in[i], n, tq1Pow3)
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
