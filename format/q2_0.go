package format

import (
	"encoding/binary"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// QK2_0 is mainline ggml's Q2_0 block length (64 weights).
const QK2_0 = 64

// q2_0Bytes is sizeof(block_q2_0): an f16 d then 16 bytes of codes.
const q2_0Bytes = 18

// Q2_0 is mainline ggml's 2-bit type Q2_0 (id 42; ggml-org/llama.cpp
// ggml/src/ggml-common.h block_q2_0, ggml/src/ggml-quants.c
// quantize_row_q2_0_ref / dequantize_row_q2_0, PR #24448): blocks of 64
// weights in 18 bytes, the f16 d = max|w| of the block, then qs[16] where
// element j of the block is byte j/4, bits 2·(j%4), holding code c with
// value (c − 1)·d. A ternary tensor maps onto it exactly: codes 0, 1, 2 are
// −1, 0, +1. Code 3 (+2·d) is not ternary: Decode refuses it (Code3 counts
// it). An all-zero block has d = 0 and code 1 everywhere (the reference's
// id = 0 for d = 0).
type Q2_0 struct{}

// Name is "Q2_0".
func (Q2_0) Name() string { return "Q2_0" }

// Type is gguf.TypeQ2_0.
func (Q2_0) Type() gguf.Type { return gguf.TypeQ2_0 }

// ScaleGroup is 64: one f16 scale per block.
func (Q2_0) ScaleGroup(int) int { return QK2_0 }

// StoredScale is s rounded to f16 (GGML_FP32_TO_FP16, round to nearest
// even) and widened back.
func (Q2_0) StoredScale(s float32) float32 { return quantize.F16ToF32(quantize.F32ToF16(s)) }

// Check: K must be a multiple of 64 (a block straddling rows would mix
// rows; mainline's quantize_q2_0 quantizes row by row).
func (Q2_0) Check(k, m int) error { return checkQK(k, QK2_0, "Q2_0") }

// Bytes is k·m/64·18.
func (Q2_0) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeQ2_0, k, m) }

// Encode writes each block's f16 d and its codes (t + 1 at bits 2·(j%4) of
// byte j/4). A block whose scale is 0 stores code 1 everywhere, as the
// reference does.
func (f Q2_0) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	return encodeQ2(dst, codes, scales, QK2_0, f.Name())
}

// Decode unpacks every block and returns the block scales. A block holding
// code 3 (+2·d) is an error naming it: the tensor is not ternary.
func (f Q2_0) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	return decodeQ2(codes, data, k, QK2_0, f.Name())
}

// encodeQ2 writes blocks of qk codes as an f16 d and qk/4 bytes of the
// Q2_0 codec (Q2_0, and Prism's g128 layout).
func encodeQ2(dst []byte, codes []int8, scales []float32, qk int, name string) error {
	bs := 2 + qk/4
	for b, d := range scales {
		out := dst[b*bs : (b+1)*bs]
		binary.LittleEndian.PutUint16(out, quantize.F32ToF16(d))
		blk := codes[b*qk : (b+1)*qk]
		for i := range out[2:] {
			var v byte
			for l := 0; l < 4; l++ {
				t := blk[4*i+l]
				if d == 0 {
					t = 0
				}
				if t < -1 || t > 1 {
					return fmt.Errorf("%s: code %d of block %d is %d, outside {-1, 0, 1}", name, 4*i+l, b, t)
				}
				v |= byte(t+1) << (2 * l)
			}
			out[2+i] = v
		}
	}
	return nil
}

// decodeQ2 reads blocks of qk codes in the Q2_0 codec; code 3 is an error
// naming the block and its row.
func decodeQ2(codes []int8, data []byte, k, qk int, name string) ([]float32, error) {
	bs := 2 + qk/4
	scales := make([]float32, len(codes)/qk)
	for b := range scales {
		in := data[b*bs : (b+1)*bs]
		scales[b] = quantize.F16ToF32(binary.LittleEndian.Uint16(in))
		blk := codes[b*qk : (b+1)*qk]
		for i, v := range in[2:] {
			for l := 0; l < 4; l++ {
				c := v >> (2 * l) & 3
				if c == 3 {
					return nil, fmt.Errorf("%s block %d (row %d) holds code 3 (+2·d), which is not ternary", name, b, b*qk/k)
				}
				blk[4*i+l] = int8(c) - 1
			}
		}
	}
	zeroCodesOfZeroScales(codes, scales, qk)
	return scales, nil
}

// Scales returns the f16 block scales.
func (f Q2_0) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, k*m/QK2_0, q2_0Bytes, 0, true)
}

// NonTernaryCounter is implemented by layouts that can hold a code with no
// ternary meaning (Q2_0's code 3, +2·d): Code3 counts such elements of an
// [m, k] tensor, for inspect.
type NonTernaryCounter interface {
	Code3(data []byte, k, m int) (int, error)
}

// Code3 counts the elements of a Q2_0 tensor ([m, k], data at least
// Bytes(k, m) long) that hold code 3 (+2·d, not ternary), for inspect.
func (f Q2_0) Code3(data []byte, k, m int) (int, error) {
	nb, err := f.Bytes(k, m)
	if err != nil || f.Check(k, m) != nil || len(data) < nb {
		return 0, fmt.Errorf("Q2_0: %d bytes do not hold [M=%d, K=%d]", len(data), m, k)
	}
	return code3(data[:nb], q2_0Bytes), nil
}

// code3 counts the 2-bit codes 3 in blocks of bs bytes (an f16 d first).
func code3(data []byte, bs int) int {
	n := 0
	for b := 0; b+bs <= len(data); b += bs {
		for _, v := range data[b+2 : b+bs] {
			// A 2-bit code is 3 when both of its bits are set.
			n += popcount8(v & (v >> 1) & 0x55)
		}
	}
	return n
}

func popcount8(v byte) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}
