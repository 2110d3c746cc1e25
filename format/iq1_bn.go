package format

import (
	"encoding/binary"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// IQ1BN is ik_llama.cpp's IQ1_BN (type 134; ggml/src/iqk/iqk_quantize.cpp
// IQ1BNQuantizer::quantize_one_row_1bn, dequantize_row_iq1_bn): every row is
// its f16 scale max|w| followed by K/64 blocks of 13 bytes. In block element
// order, for each 16-element group i16 (0..3): bytes ql[3·i16 + k] (k < 3)
// hold the 5 codes 16·i16 + 5k + j (j = 0 the least significant base-3
// digit), and the 16th code of each group is digit i16 of the 13th byte
// (extra). A byte holding v = Σ (t+1)·3^j stores ⌈256·v/243⌉; digit j is read
// as ((byte·3^(4−j) mod 256)·3) >> 8. Codes come from |w| < max/2 → 1, w < 0
// → 0, else 2, so an all-zero row stores code 2 everywhere.
type IQ1BN struct{}

// iq1Mult is 3^(4−j): multiplying by it brings digit j to the top.
var iq1Mult = [5]byte{81, 27, 9, 3, 1}

// Name is "IQ1_BN".
func (IQ1BN) Name() string { return "IQ1_BN" }

// Type is gguf.TypeIQ1BN.
func (IQ1BN) Type() gguf.Type { return gguf.TypeIQ1BN }

// ScaleGroup is k: one f16 scale per row.
func (IQ1BN) ScaleGroup(k int) int { return k }

// StoredScale is s rounded to f16 (quantize.F32ToF16, as Encode stores it)
// and widened back, as Decode returns it.
func (IQ1BN) StoredScale(s float32) float32 { return quantize.F16ToF32(quantize.F32ToF16(s)) }

// Check: K must be a multiple of 64.
func (IQ1BN) Check(k, m int) error { return checkQK(k, QKBN, "IQ1_BN") }

// RuntimeCheck: ik_llama.cpp multiplies only rows of at least 512 (see
// minRowBN).
func (IQ1BN) RuntimeCheck(k, m int) error { return checkBN(k, "IQ1_BN") }

// Bytes is m·(2 + 13·k/64).
func (IQ1BN) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeIQ1BN, k, m) }

// iq1Digits are IQ1_BN's digits of every byte, least significant first.
var iq1Digits = tritTable(iq1Mult)

// Encode writes each row's f16 scale and codes (a zero-scale row stores
// code 2 everywhere, as the reference does).
func (f IQ1BN) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	rb := 2 + 13*k/QKBN
	var plus [QKBN]int8
	for i := range plus {
		plus[i] = 1
	}
	for r, s := range scales {
		out := dst[r*rb : (r+1)*rb]
		binary.LittleEndian.PutUint16(out, quantize.F32ToF16(s))
		row := codes[r*k : (r+1)*k]
		if s == 0 {
			row = nil
		} else if !validCodes(row) {
			return fmt.Errorf("IQ1_BN: a code of row %d is outside {-1, 0, 1}", r)
		}
		for b := 0; b < k/QKBN; b++ {
			xb := plus[:]
			if row != nil {
				xb = row[b*QKBN : (b+1)*QKBN]
			}
			ob := out[2+13*b : 2+13*b+13]
			// Digit j of each byte is code 5k + j + 1 (j = 0 least
			// significant); the 13th byte holds the 16th code of each group.
			for i16 := 0; i16 < 4; i16++ {
				g := xb[16*i16 : 16*i16+16]
				for kk := 0; kk < 3; kk++ {
					q := g[5*kk : 5*kk+5]
					v := int(q[0]+1) + 3*int(q[1]+1) + 9*int(q[2]+1) + 27*int(q[3]+1) + 81*int(q[4]+1)
					ob[3*i16+kk] = pack5[v]
				}
			}
			ob[12] = pack5[int(xb[15]+1)+3*int(xb[31]+1)+9*int(xb[47]+1)+27*int(xb[63]+1)]
		}
	}
	return nil
}

// Decode unpacks every row and returns the row scales.
func (f IQ1BN) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	rb := 2 + 13*k/QKBN
	scales := make([]float32, m)
	for r := range scales {
		in := data[r*rb : (r+1)*rb]
		scales[r] = quantize.F16ToF32(binary.LittleEndian.Uint16(in))
		row := codes[r*k : (r+1)*k]
		for b := 0; b < k/QKBN; b++ {
			xb := row[b*QKBN : (b+1)*QKBN]
			ib := in[2+13*b : 2+13*b+13]
			for i16 := 0; i16 < 4; i16++ {
				for kk := 0; kk < 3; kk++ {
					copy(xb[16*i16+5*kk:16*i16+5*kk+5], iq1Digits[ib[3*i16+kk]][:])
				}
				xb[16*i16+15] = iq1Digits[ib[12]][i16]
			}
		}
	}
	zeroCodesOfZeroScales(codes, scales, k)
	return scales, nil
}

// Scales returns the f16 row scales.
func (f IQ1BN) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, m, 2+13*k/QKBN, 0, true)
}
