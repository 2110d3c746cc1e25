package format

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// QKBN is ik_llama.cpp's BitNet block length QK_IQ1BN (64), the IQ1_BN and
// IQ2_BN block.
const QKBN = 64

// minRowBN is the shortest row ik_llama.cpp multiplies in IQ1_BN/IQ2_BN: its
// activation quantizer asserts k >= 8·QK_IQ1BN (quantize_row_q8_K64_ref in
// ggml/src/iqk/iqk_quantize.cpp).
const minRowBN = 8 * QKBN

// IQ2BN is ik_llama.cpp's IQ2_BN (type 135; ggml/src/iqk/iqk_quantize.cpp
// IQ1BNQuantizer::quantize_one_row_2bn, dequantize_row_iq2_bn): every row is
// its f32 scale max|w| followed by K/64 blocks of 16 bytes; code 64b + j +
// 16i at byte 16b + j, bits 2i. The reference takes code 1 for |w| < max/2,
// 0 for w < 0, else 2, so an all-zero row (max 0) stores code 2 everywhere.
type IQ2BN struct{}

// Name is "IQ2_BN".
func (IQ2BN) Name() string { return "IQ2_BN" }

// Type is gguf.TypeIQ2BN.
func (IQ2BN) Type() gguf.Type { return gguf.TypeIQ2BN }

// ScaleGroup is k: one scale per row.
func (IQ2BN) ScaleGroup(k int) int { return k }

// StoredScale is s unchanged: the scale is stored as float32.
func (IQ2BN) StoredScale(s float32) float32 { return s }

// Check: K must be a multiple of 64.
func (IQ2BN) Check(k, m int) error { return checkQK(k, QKBN, "IQ2_BN") }

// RuntimeCheck: ik_llama.cpp multiplies only rows of at least 512 (see
// minRowBN).
func (IQ2BN) RuntimeCheck(k, m int) error { return checkBN(k, "IQ2_BN") }

func checkBN(k int, name string) error {
	if err := checkQK(k, QKBN, name); err != nil {
		return err
	}
	if k < minRowBN {
		return fmt.Errorf("row length K=%d is shorter than %d, the least ik_llama.cpp multiplies in %s", k, minRowBN, name)
	}
	return nil
}

// Bytes is m·(4 + k/4).
func (IQ2BN) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeIQ2BN, k, m) }

// Encode writes each row's scale and codes.
func (f IQ2BN) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	rb := 4 + k/4
	for r, s := range scales {
		out := dst[r*rb : (r+1)*rb]
		binary.LittleEndian.PutUint32(out, math.Float32bits(s))
		if s == 0 {
			for i := range out[4:] {
				out[4+i] = 0xAA
			}
			continue
		}
		if !pack2(out[4:], codes[r*k:(r+1)*k], QKBN/4, false) {
			return fmt.Errorf("IQ2_BN: a code of row %d is outside {-1, 0, 1}", r)
		}
	}
	return nil
}

// Decode unpacks every row and returns the row scales.
func (f IQ2BN) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	rb := 4 + k/4
	scales := make([]float32, m)
	for r := range scales {
		in := data[r*rb : (r+1)*rb]
		scales[r] = math.Float32frombits(binary.LittleEndian.Uint32(in))
		unpack2(codes[r*k:(r+1)*k], in[4:], QKBN/4, false)
	}
	zeroCodesOfZeroScales(codes, scales, k)
	return scales, nil
}

// Scales returns the f32 row scales.
func (f IQ2BN) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, m, 4+k/4, 0, false)
}
