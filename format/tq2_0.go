package format

import (
	"encoding/binary"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// QKK is ggml's super-block length QK_K (256), the TQ1_0/TQ2_0 block.
const QKK = 256

// TQ2_0 is ggml's 2-bit ternary type (35; ggml-org/llama.cpp
// ggml/src/ggml-quants.c quantize_row_tq2_0_ref / dequantize_row_tq2_0):
// blocks of 256 weights in 66 bytes, qs[64] then an f16 scale d = max|w| of
// the block. Code 128h + 32i + m (h = 0, 1; i, m < 32 … per half) is at byte
// 32h + m, bits 2i: the x86 I2_S interleave with the slots in the other
// order. An all-zero block has d = 0. Code 3 is not ternary: Decode refuses
// it (Code3 counts it).
type TQ2_0 struct{}

// Name is "TQ2_0".
func (TQ2_0) Name() string { return "TQ2_0" }

// Type is gguf.TypeTQ2_0.
func (TQ2_0) Type() gguf.Type { return gguf.TypeTQ2_0 }

// ScaleGroup is 256: one f16 scale per block.
func (TQ2_0) ScaleGroup(int) int { return QKK }

// StoredScale is s rounded to f16 (quantize.F32ToF16, as Encode stores it)
// and widened back, as Decode returns it.
func (TQ2_0) StoredScale(s float32) float32 { return quantize.F16ToF32(quantize.F32ToF16(s)) }

// Check: K must be a multiple of 256 (a block straddling rows mixes rows;
// bitnet.cpp's llama-quantize writes such rows anyway and they compute
// garbage).
func (TQ2_0) Check(k, m int) error { return checkQK(k, QKK, "TQ2_0") }

// Bytes is k·m/256·66.
func (TQ2_0) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeTQ2_0, k, m) }

// Encode writes each block's codes and its scale as f16. A block whose scale
// is 0 stores code 0 everywhere (lroundf(x·0) in the reference).
func (f TQ2_0) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	for b, d := range scales {
		blk := codes[b*QKK : (b+1)*QKK]
		out := dst[b*66 : (b+1)*66]
		if d == 0 {
			for i := range out[:64] {
				out[i] = 0x55
			}
		} else if !pack2(out[:64], blk, 32, false) {
			return fmt.Errorf("TQ2_0: a code of block %d is outside {-1, 0, 1}", b)
		}
		binary.LittleEndian.PutUint16(out[64:], quantize.F32ToF16(d))
	}
	return nil
}

// Decode unpacks every block and returns the block scales. A block holding
// code 3 is an error naming it and its row: the tensor is not ternary.
func (f TQ2_0) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	scales := make([]float32, k*m/QKK)
	for b := range scales {
		in := data[b*66 : (b+1)*66]
		if firstCode3(in[:64]) >= 0 {
			return nil, code3Error(f.Name(), fmt.Sprintf("block %d", b), b*QKK/k)
		}
		unpack2(codes[b*QKK:(b+1)*QKK], in[:64], 32, false)
		scales[b] = quantize.F16ToF32(binary.LittleEndian.Uint16(in[64:]))
	}
	zeroCodesOfZeroScales(codes, scales, QKK)
	return scales, nil
}

// checkQK is the row-length rule of the block formats.
func checkQK(k, qk int, name string) error {
	if k%qk != 0 {
		return fmt.Errorf("row length K=%d is not a multiple of %d (the %s block)", k, qk, name)
	}
	return nil
}

// Scales returns the f16 block scales.
func (f TQ2_0) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, k*m/QKK, 66, 64, true)
}
