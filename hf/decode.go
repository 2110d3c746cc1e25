package hf

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// IsFloat reports the dtypes DecodeFloats handles: BF16, F16, F32.
func (d DType) IsFloat() bool { return d == BF16 || d == F16 || d == F32 }

// DecodeFloats decodes little-endian BF16, F16 or F32 bytes exactly into dst
// (len(raw) must be len(dst) times the dtype size) and returns the index of
// the first non-finite value, or -1; other dtypes leave dst unchanged.
// Converters call it on ranges of a tensor's Raw bytes to decode in chunks
// on several cores. BF16 (every real master checkpoint) takes a branch-free
// path over the bits.
func DecodeFloats(dst []float32, raw []byte, dt DType) int {
	switch dt {
	case BF16:
		return decodeBF16(dst, raw)
	case F16:
		for i := range dst {
			dst[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
		}
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	for i, f := range dst {
		if f-f != 0 { // NaN or ±Inf
			return i
		}
	}
	return -1
}

// decodeBF16 shifts each bf16 into the high half of a float32
// (internal/kernels.DecodeBF16: assembly where available, same bits) and
// returns the index of the first one whose exponent bits are all set (±Inf,
// NaN), or -1.
func decodeBF16(dst []float32, raw []byte) int {
	if !kernels.DecodeBF16(dst, raw) {
		return -1
	}
	for i, f := range dst {
		if f-f != 0 {
			return i
		}
	}
	return -1
}
