package convert

import (
	"encoding/binary"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// bf16ToF16 maps every bfloat16 bit pattern to the IEEE binary16 bits that
// quantize.F32ToF16(quantize.BF16ToF32(b)) gives, so a BF16 → F16 tensor
// (the embedding and head of every I2_S/TL file) converts with one table
// lookup per value instead of a float round trip (128 KiB, built on first
// use; identical results by construction).
var bf16ToF16 = sync.OnceValue(func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for b := range t {
		t[b] = quantize.F32ToF16(quantize.BF16ToF32(uint16(b)))
	}
	return &t
})

// bf16F16Limit is the smallest |bf16| bit pattern (sign cleared) whose value
// exceeds 65504, the F16 maximum: bf16 65280 is 0x477F, the next value
// 65536 is 0x4780.
const bf16F16Limit = 0x4780

// bf16NonFinite is the exponent mask: a bf16 whose exponent bits are all set
// is ±Inf or NaN.
const bf16NonFinite = 0x7f80

// encodeBF16ToF16 converts raw BF16 bytes to F16 bytes in out (len(raw)
// bytes). It returns the index of the first non-finite value (or -1) and
// whether any finite value exceeds the F16 range; out is only meaningful
// when both are clear.
func encodeBF16ToF16(out, raw []byte) (bad int, overflow bool) {
	n := len(raw) / 2
	_ = out[2*n-1]
	// The vector path (internal/kernels.BF16ToF16: the same rounding, checked
	// over every bf16 pattern) covers the common case; a value out of the
	// F16 range anywhere takes the loop below, which finds the first one.
	if kernels.BF16ToF16(out[:2*n], raw[:2*n]) {
		return -1, false
	}
	lut := bf16ToF16()
	for i := 0; i < n; i++ {
		b := binary.LittleEndian.Uint16(raw[2*i:])
		a := b & 0x7fff
		if a >= bf16F16Limit {
			if a&bf16NonFinite == bf16NonFinite {
				return i, false
			}
			overflow = true
		}
		binary.LittleEndian.PutUint16(out[2*i:], lut[b])
	}
	return -1, overflow
}

// unpackPackedRange unpacks packed[lo:hi] of an HF U8 tensor of n bytes
// into codes (4n values): codes[i·n + k] is bit pair i of packed[k], code −
// 1 with the unused code 3 clamped to +1 (quantize.UnpackPackedU8's layout
// and values, computed for a slice of k so the work can be split over the
// cores; internal/kernels.UnpackU8 does the work).
func unpackPackedRange(codes []int8, packed []byte, lo, hi int) {
	kernels.UnpackU8(codes[lo:], len(packed), packed[lo:hi])
}

// firstCode3 returns the index of the first packed byte holding a 2-bit
// pair 11 (code 3, outside the ternary codes 0, 1, 2), or −1.
func firstCode3(packed []byte) int {
	for k, b := range packed {
		if b&(b>>1)&0x55 != 0 {
			return k
		}
	}
	return -1
}
