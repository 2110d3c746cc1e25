package format

import (
	"encoding/binary"
	"math"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// i2sToTQ2 maps an x86 I2_S byte (slot i of the 32-byte block at bits
// 6 − 2i) to the TQ2_0 byte of the same four codes (slot i at bits 2i), with
// the unused value 3 read as +1 as Decode reads it.
var i2sToTQ2 = func() (t [256]byte) {
	for v := range t {
		var out byte
		for i := 0; i < 4; i++ {
			c := byte(v>>(6-2*i)) & 3
			if c == 3 {
				c = 2
			}
			out |= c << (2 * i)
		}
		t[v] = out
	}
	return t
}()

// Transcode converts the stored bytes of an [m, k] tensor from one format
// to another without expanding the codes, when a direct path exists, and
// reports whether it did. The bytes equal those of Decode, Regroup and
// Encode. Direct paths: I2_S (x86) → TQ2_0, where each 128-weight group of
// TQ2_0 is the I2_S block with its four slots in the other bit order and
// each 256-block gets d = f16(scale), or 0 when all its codes are 0.
func Transcode(from, to Format, dst, src []byte, k, m, threads int) (bool, error) {
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
	scale := math.Float32frombits(binary.LittleEndian.Uint32(src[k*m/4:]))
	d := quantize.F32ToF16(scale)
	rowBlocks := k / QKK
	err := chunks(m, max(threads, 1), func(r0, r1 int) error {
		for b := r0 * rowBlocks; b < r1*rowBlocks; b++ {
			in := src[b*64 : b*64+64]
			out := dst[b*66 : b*66+66]
			nonzero := false
			for j, v := range in {
				out[j] = i2sToTQ2[v]
				nonzero = nonzero || v != 0x55
			}
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
