package convert

import (
	"encoding/binary"
	"sync"

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
	lut := bf16ToF16()
	n := len(raw) / 2
	_ = out[2*n-1]
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

// unpackLUT[v][i] is the ternary value of bit pair i of a packed byte v
// (code − 1, with the unused code 3 clamped to +1, as
// quantize.UnpackPackedU8 does).
var unpackLUT = func() (t [256][4]int8) {
	for v := range t {
		for i := 0; i < 4; i++ {
			t[v][i] = min(int8((v>>(2*i))&3)-1, 1)
		}
	}
	return
}()

// unpackPackedRange unpacks packed[lo:hi] of an HF U8 tensor of n bytes
// into codes (4n values): codes[i·n + k] is bit pair i of packed[k]
// (quantize.UnpackPackedU8's layout, computed for a slice of k so the work
// can be split over the cores).
func unpackPackedRange(codes []int8, packed []byte, lo, hi int) {
	n := len(packed)
	c0, c1, c2, c3 := codes[:n], codes[n:2*n], codes[2*n:3*n], codes[3*n:4*n]
	for k := lo; k < hi; k++ {
		e := &unpackLUT[packed[k]]
		c0[k], c1[k], c2[k], c3[k] = e[0], e[1], e[2], e[3]
	}
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
