package format

import (
	"encoding/binary"
	"math"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Transcode converts the stored bytes of an [m, k] tensor from one format
// to another without expanding the codes, when a direct path exists, and
// reports whether it did. The bytes equal those of Decode, Regroup and
// Encode. Direct paths: Prism's legacy Q2_0_g128 → Q2_0 (each 128 block
// split into two 64 blocks with the same d: lossless, code 3 and the d of
// an all-zero half kept as stored); I2_S (x86) → TQ2_0, where each 128-weight group of
// TQ2_0 is the I2_S block with its four slots in the other bit order and
// each 256-block gets d = f16(scale), or 0 when all its codes are 0; an
// I2_S tensor holding code 3 is refused as Decode refuses it.
func Transcode(from, to Format, dst, src []byte, k, m, threads int) (bool, error) {
	if _, ok := from.(Q2_0G128); ok {
		if _, ok := to.(Q2_0); ok {
			if err := checkLens(from, k*m, len(src), k, m, -1); err != nil {
				return true, err
			}
			if err := checkLens(to, k*m, len(dst), k, m, -1); err != nil {
				return true, err
			}
			nb, _ := from.Bytes(k, m)
			transcodeG128(dst, src[:nb])
			return true, nil
		}
	}
	fi, ok1 := from.(I2S)
	_, ok2 := to.(TQ2_0)
	if !ok1 || !ok2 || fi.layout() != LayoutX86 {
		return false, nil
	}
	if err := checkLens(from, k*m, len(src), k, m, -1); err != nil {
		return true, err
	}
	if err := checkLens(to, k*m, len(dst), k, m, -1); err != nil {
		return true, err
	}
	if err := fi.checkCode3(src[:k*m/4], k); err != nil {
		return true, err
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(src[k*m/4:]))
	d := quantize.F32ToF16(scale)
	rowBlocks := k / QKK
	err := chunks(m, max(threads, 1), func(r0, r1 int) error {
		for b := r0 * rowBlocks; b < r1*rowBlocks; b++ {
			in := src[b*64 : b*64+64]
			out := dst[b*66 : b*66+66]
			// Eight bytes at a time: value 3 (refused above) → 2, then the four 2-bit
			// slots of every byte in the other order (x86 I2_S slot i is at bits
			// 6 − 2i, TQ2_0 slot i at bits 2i).
			var diff uint64
			for j := 0; j < 64; j += 8 {
				x := binary.LittleEndian.Uint64(in[j:])
				diff |= x ^ 0x5555555555555555
				x &^= x & (x >> 1) & 0x5555555555555555
				x = (x&0x3333333333333333)<<2 | (x>>2)&0x3333333333333333
				x = (x&0x0F0F0F0F0F0F0F0F)<<4 | (x>>4)&0x0F0F0F0F0F0F0F0F
				binary.LittleEndian.PutUint64(out[j:], x)
			}
			nonzero := diff != 0
			if scale == 0 || !nonzero {
				for j := range out[:64] {
					out[j] = 0x55
				}
				out[64], out[65] = 0, 0
				continue
			}
			binary.LittleEndian.PutUint16(out[64:], d)
		}
		return nil
	})
	return true, err
}
