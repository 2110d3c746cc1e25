package hf

import (
	"encoding/binary"
	"math"
	"testing"
)

// DecodeFloats gives the same floats and the same first non-finite index on
// aligned and unaligned data (BR-21: safetensors data need not be aligned).
func TestDecodeBF16AlignedAndUnaligned(t *testing.T) {
	const n = 1000
	buf := make([]byte, 2*n+1)
	for off := 0; off < 2; off++ {
		raw := buf[off : off+2*n]
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(uint64(i)*2654435761>>7))
		}
		dst := make([]float32, n)
		bad := DecodeFloats(dst, raw, BF16)
		first := -1
		for i := 0; i < n; i++ {
			want := bf16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
			if math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("offset %d, element %d: %v, want %v", off, i, dst[i], want)
			}
			if first < 0 && (math.IsNaN(float64(want)) || math.IsInf(float64(want), 0)) {
				first = i
			}
		}
		if bad != first {
			t.Errorf("offset %d: first non-finite %d, want %d", off, bad, first)
		}
	}
}

func bf16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
