package format

import (
	"encoding/binary"
	"unsafe"
)

// pack2 and unpack2 are the one 2-bit interleave every 2-bit ternary layout
// here is made of (I2_S x86 and arm, TQ2_0, IQ2_BN): a group of 4·s codes
// fills s bytes, code j + i·s of the group going to byte j, slot i. msbFirst
// puts slot 0 in bits 7-6 (I2_S: 6 − 2i), otherwise in bits 1-0 (TQ2_0,
// IQ2_BN: 2i). The stored 2-bit value is t + 1 (−1 → 0, 0 → 1, +1 → 2).

// pack2 packs len(codes) codes (a multiple of 4·s) into len(codes)/4 bytes.
// It reports false when a code is outside {−1, 0, +1}.
func pack2(dst []byte, codes []int8, s int, msbFirst bool) bool {
	s0, s1, s2, s3 := uint(0), uint(2), uint(4), uint(6)
	if msbFirst {
		s0, s1, s2, s3 = 6, 4, 2, 0
	}
	c := asBytes(codes)
	var bad uint64
	// Eight output bytes at a time: each uint64 holds eight codes of one
	// slot, one per byte lane; t + 1 is 0..2 in every lane, and a lane
	// shifted by at most 6 stays in its byte.
	for b := 0; b < len(c); b += 4 * s {
		g := c[b : b+4*s]
		out := dst[b/4 : b/4+s]
		for j := 0; j+8 <= s; j += 8 {
			w0 := plus1(binary.LittleEndian.Uint64(g[j:]))
			w1 := plus1(binary.LittleEndian.Uint64(g[s+j:]))
			w2 := plus1(binary.LittleEndian.Uint64(g[2*s+j:]))
			w3 := plus1(binary.LittleEndian.Uint64(g[3*s+j:]))
			bad |= laneBad(w0) | laneBad(w1) | laneBad(w2) | laneBad(w3)
			binary.LittleEndian.PutUint64(out[j:], w0<<s0|w1<<s1|w2<<s2|w3<<s3)
		}
	}
	return bad == 0
}

// plus1 adds 1 to every byte lane of w without carries between lanes
// (codes −1, 0, +1 become 0, 1, 2; an invalid lane becomes ≥ 3, which
// laneBad reports).
func plus1(w uint64) uint64 {
	return ((w ^ 0x8080808080808080) + ones) ^ 0x8080808080808080
}

// ones has 1 in every byte lane.
const ones = 0x0101010101010101

// laneBad is nonzero when a lane of w (t + 1 per byte, from plus1) is not
// 0, 1 or 2.
func laneBad(w uint64) uint64 {
	return w&0xFCFCFCFCFCFCFCFC | w&(w>>1)&ones
}

// unpack2 is the inverse of pack2 for len(codes)/4 bytes of src. The unused
// value 3 decodes to +1 (the Python I2_S packer's reading; bitnet.cpp never
// writes it).
func unpack2(codes []int8, src []byte, s int, msbFirst bool) {
	s0, s1, s2, s3 := uint(0), uint(2), uint(4), uint(6)
	if msbFirst {
		s0, s1, s2, s3 = 6, 4, 2, 0
	}
	c := asBytes(codes)
	for b := 0; b < len(c); b += 4 * s {
		g := c[b : b+4*s]
		in := src[b/4 : b/4+s]
		for j := 0; j+8 <= s; j += 8 {
			v := binary.LittleEndian.Uint64(in[j:])
			binary.LittleEndian.PutUint64(g[j:], lanesToCodes(v>>s0))
			binary.LittleEndian.PutUint64(g[s+j:], lanesToCodes(v>>s1))
			binary.LittleEndian.PutUint64(g[2*s+j:], lanesToCodes(v>>s2))
			binary.LittleEndian.PutUint64(g[3*s+j:], lanesToCodes(v>>s3))
		}
	}
}

// lanesToCodes turns the low two bits of every byte lane of v into the
// ternary value as an int8 byte: 0 → −1, 1 → 0, 2 and 3 → +1.
func lanesToCodes(v uint64) uint64 {
	w := v & 0x0303030303030303
	w &^= w & (w >> 1) & ones // 3 → 2
	// (w | 0x80) − 1 per lane without borrows, then flip the 0x80 bit:
	// 0 → 0xFF, 1 → 0x00, 2 → 0x01.
	return ((w | 0x8080808080808080) - ones) ^ 0x8080808080808080
}

// asBytes views ternary codes as bytes (same size and layout).
func asBytes(c []int8) []byte {
	if len(c) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c))
}

// decode2 maps the low 2 bits of c to a ternary value (0 → −1, 1 → 0, 2 and
// 3 → +1).
func decode2(c byte) int8 {
	return min(int8(c&3)-1, 1)
}

// validCodes reports whether every code is −1, 0 or +1 (eight at a time).
func validCodes(codes []int8) bool {
	c := asBytes(codes)
	var bad uint64
	i := 0
	for ; i+8 <= len(c); i += 8 {
		bad |= laneBad(plus1(binary.LittleEndian.Uint64(c[i:])))
	}
	for ; i < len(c); i++ {
		if codes[i] < -1 || codes[i] > 1 {
			return false
		}
	}
	return bad == 0
}
