package format

import (
	"encoding/binary"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// q2_0G128Bytes is the size of one block of Prism's legacy Q2_0: an f16 d
// and 32 bytes of codes for 128 weights.
const q2_0G128Bytes = 34

// Q2_0G128 is PrismML's legacy Q2_0 (pre-v7 fork; shared/spec
// formats-2026.md §5), stored under mainline's id 42 (gguf.TypeQ2_0G128,
// told apart by size in the reader): the Q2_0 codec (element j of a block
// at byte j/4, bits 2·(j%4), value (c − 1)·d) with 128-weight blocks of 34
// bytes. Read for requant, which turns it into mainline Q2_0 losslessly
// (Transcode: each 128 block becomes two 64 blocks with the same d); never
// an --outtype.
type Q2_0G128 struct{}

// Name is "Q2_0_g128".
func (Q2_0G128) Name() string { return "Q2_0_g128" }

// Type is gguf.TypeQ2_0G128.
func (Q2_0G128) Type() gguf.Type { return gguf.TypeQ2_0G128 }

// ScaleGroup is 128.
func (Q2_0G128) ScaleGroup(int) int { return 2 * QK2_0 }

// StoredScale is s rounded to f16.
func (Q2_0G128) StoredScale(s float32) float32 { return quantize.F16ToF32(quantize.F32ToF16(s)) }

// Check: K must be a multiple of 128.
func (Q2_0G128) Check(k, m int) error { return checkQK(k, 2*QK2_0, "Q2_0_g128") }

// Bytes is k·m/128·34.
func (Q2_0G128) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeQ2_0G128, k, m) }

// Encode writes the blocks (used to build test files: no command writes
// this layout).
func (f Q2_0G128) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	return encodeQ2(dst, codes, scales, 2*QK2_0, f.Name())
}

// Decode unpacks the blocks; code 3 is an error naming the block.
func (f Q2_0G128) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	return decodeQ2(codes, data, k, 2*QK2_0, f.Name())
}

// Scales returns the f16 block scales.
func (f Q2_0G128) Scales(data []byte, k, m int) ([]float32, error) {
	return strideScales(f, data, k, m, k*m/(2*QK2_0), q2_0G128Bytes, 0, true)
}

// Code3 counts the elements holding code 3 (+2·d).
func (f Q2_0G128) Code3(data []byte, k, m int) (int, error) {
	nb, err := f.Bytes(k, m)
	if err != nil || f.Check(k, m) != nil || len(data) < nb {
		return 0, fmt.Errorf("Q2_0_g128: %d bytes do not hold [M=%d, K=%d]", len(data), m, k)
	}
	return code3(data[:nb], q2_0G128Bytes), nil
}

// transcodeG128 splits every 34-byte block of src into two 18-byte Q2_0
// blocks with the same d (element j < 64 of the 128 block is at byte j/4,
// so the first 16 code bytes are the first 64 weights): the codes, code 3
// included, and every d are kept exactly.
func transcodeG128(dst, src []byte) {
	for b := 0; b+q2_0G128Bytes <= len(src); b += q2_0G128Bytes {
		in := src[b : b+q2_0G128Bytes]
		out := dst[b/q2_0G128Bytes*2*q2_0Bytes:]
		d := binary.LittleEndian.Uint16(in)
		binary.LittleEndian.PutUint16(out, d)
		copy(out[2:q2_0Bytes], in[2:18])
		binary.LittleEndian.PutUint16(out[q2_0Bytes:], d)
		copy(out[q2_0Bytes+2:2*q2_0Bytes], in[18:34])
	}
}
