package format

// pack2 and unpack2 are the one 2-bit interleave every 2-bit ternary layout
// here is made of (I2_S x86 and arm, TQ2_0, IQ2_BN): a group of 4·s codes
// fills s bytes, code j + i·s of the group going to byte j, slot i. msbFirst
// puts slot 0 in bits 7-6 (I2_S: 6 − 2i), otherwise in bits 1-0 (TQ2_0,
// IQ2_BN: 2i). The stored 2-bit value is t + 1 (−1 → 0, 0 → 1, +1 → 2).

// pack2 packs len(codes) codes (a multiple of 4·s) into len(codes)/4 bytes.
// It reports false when a code is outside {−1, 0, +1}.
func pack2(dst []byte, codes []int8, s int, msbFirst bool) bool {
	var sh [4]uint
	for i := range sh {
		if msbFirst {
			sh[i] = uint(6 - 2*i)
		} else {
			sh[i] = uint(2 * i)
		}
	}
	ok := true
	for b := 0; b < len(codes); b += 4 * s {
		grp := codes[b : b+4*s : b+4*s]
		out := dst[b/4 : b/4+s : b/4+s]
		for j := range out {
			c0, c1, c2, c3 := byte(grp[j]+1), byte(grp[j+s]+1), byte(grp[j+2*s]+1), byte(grp[j+3*s]+1)
			if c0 > 2 || c1 > 2 || c2 > 2 || c3 > 2 {
				ok = false
			}
			out[j] = c0<<sh[0] | c1<<sh[1] | c2<<sh[2] | c3<<sh[3]
		}
	}
	return ok
}

// unpack2 is the inverse of pack2 for len(codes)/4 bytes of src. The unused
// value 3 decodes to +1 (the Python I2_S packer's reading; bitnet.cpp never
// writes it).
func unpack2(codes []int8, src []byte, s int, msbFirst bool) {
	var sh [4]uint
	for i := range sh {
		if msbFirst {
			sh[i] = uint(6 - 2*i)
		} else {
			sh[i] = uint(2 * i)
		}
	}
	for b := 0; b < len(codes); b += 4 * s {
		grp := codes[b : b+4*s : b+4*s]
		in := src[b/4 : b/4+s : b/4+s]
		for j, v := range in {
			grp[j] = decode2(v >> sh[0])
			grp[j+s] = decode2(v >> sh[1])
			grp[j+2*s] = decode2(v >> sh[2])
			grp[j+3*s] = decode2(v >> sh[3])
		}
	}
}

// decode2 maps the low 2 bits of c to a ternary value (0 → −1, 1 → 0, 2 and
// 3 → +1).
func decode2(c byte) int8 {
	return min(int8(c&3)-1, 1)
}
