package format

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
	bad := byte(0)
	for b := 0; b < len(codes); b += 4 * s {
		g0 := codes[b : b+s]
		g1 := codes[b+s : b+2*s]
		g2 := codes[b+2*s : b+3*s]
		g3 := codes[b+3*s : b+4*s]
		out := dst[b/4 : b/4+s]
		for j := range out {
			c0, c1, c2, c3 := byte(g0[j]+1), byte(g1[j]+1), byte(g2[j]+1), byte(g3[j]+1)
			bad |= (c0 | c1 | c2 | c3) &^ 3 // −2 and below wrap to ≥ 0xFE
			bad |= c0 & (c0 >> 1) & 1       // +2 is 3
			bad |= c1 & (c1 >> 1) & 1
			bad |= c2 & (c2 >> 1) & 1
			bad |= c3 & (c3 >> 1) & 1
			out[j] = c0<<s0 | c1<<s1 | c2<<s2 | c3<<s3
		}
	}
	return bad == 0
}

// unpack2 is the inverse of pack2 for len(codes)/4 bytes of src. The unused
// value 3 decodes to +1 (the Python I2_S packer's reading; bitnet.cpp never
// writes it).
func unpack2(codes []int8, src []byte, s int, msbFirst bool) {
	s0, s1, s2, s3 := uint(0), uint(2), uint(4), uint(6)
	if msbFirst {
		s0, s1, s2, s3 = 6, 4, 2, 0
	}
	for b := 0; b < len(codes); b += 4 * s {
		g0 := codes[b : b+s]
		g1 := codes[b+s : b+2*s]
		g2 := codes[b+2*s : b+3*s]
		g3 := codes[b+3*s : b+4*s]
		in := src[b/4 : b/4+s]
		for j, v := range in {
			g0[j] = decode2(v >> s0)
			g1[j] = decode2(v >> s1)
			g2[j] = decode2(v >> s2)
			g3[j] = decode2(v >> s3)
		}
	}
}

// decode2 maps the low 2 bits of c to a ternary value (0 → −1, 1 → 0, 2 and
// 3 → +1).
func decode2(c byte) int8 {
	return min(int8(c&3)-1, 1)
}
