package hf

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
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

// decodeBF16 shifts each bf16 into the high half of a float32 and returns the
// index of the first one whose exponent bits are all set (±Inf, NaN), or -1.
// (b & 0x7f80) + 0x80 has bit 15 set exactly for such values, so one OR per
// element tracks them without a branch.
func decodeBF16(dst []float32, raw []byte) int {
	raw = raw[:2*len(dst)]
	var flags uint16
	for i := range dst {
		b := uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		flags |= (b & 0x7f80) + 0x80
		dst[i] = math.Float32frombits(uint32(b) << 16)
	}
	if flags&0x8000 == 0 {
		return -1
	}
	for i, f := range dst {
		if f-f != 0 {
			return i
		}
	}
	return -1
}
