package quantize

import (
	"encoding/binary"
	"math"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// QKI2S is the x86 I2_S block length in elements (QK_I2_S = 128 in
// bitnet.cpp src/ggml-bitnet-mad.cpp, ACT_PARALLEL build): 128 codes pack
// into 32 bytes.
const QKI2S = 128

// I2STailBytes is the size of the per-tensor tail after the packed codes: a
// little-endian float32 scale followed by 28 pad bytes (spec §3.3).
const I2STailBytes = 32

// PackI2S packs ternary values t (flat, HF row-major [out, in]) into the x86
// I2_S layout (QK 128, spec conversion.md §3.1; bitnet.cpp quantize_i2_s with
// ACT_PARALLEL): for block b and j = 0..31,
//
//	dst[32b+j] = c[128b+j]<<6 | c[128b+j+32]<<4 | c[128b+j+64]<<2 | c[128b+j+96]
//
// with c = t + 1. dst must have len(t)/4 bytes. It panics (programmer error)
// when len(t) is not a multiple of 128, when len(dst) != len(t)/4, or when a
// value is outside {-1, 0, 1}. Per-row validity (K % 128 == 0) is the
// caller's check.
func PackI2S(dst []byte, t []int8) {
	if len(t)%QKI2S != 0 {
		panic("quantize: PackI2S: len(t) is not a multiple of 128")
	}
	if len(dst) != len(t)/4 {
		panic("quantize: PackI2S: len(dst) != len(t)/4")
	}
	if !kernels.PackI2S(dst, t) {
		panic("quantize: PackI2S: ternary value outside {-1, 0, 1}")
	}
}

// UnpackI2S is the inverse of PackI2S: it decodes len(packed)·4 ternary
// values into dst. Code 3 is never written by bitnet.cpp; it decodes to +1,
// as the Python I2_S packer treats it (the integer kernel would weight it +2).
// It panics when len(packed) % 32 != 0 or len(dst) != 4·len(packed).
func UnpackI2S(dst []int8, packed []byte) {
	if len(packed)%(QKI2S/4) != 0 {
		panic("quantize: UnpackI2S: len(packed) is not a multiple of 32")
	}
	if len(dst) != 4*len(packed) {
		panic("quantize: UnpackI2S: len(dst) != 4*len(packed)")
	}
	for b := 0; b < len(packed); b += 32 {
		out := dst[4*b : 4*b+QKI2S]
		for j := 0; j < 32; j++ {
			v := packed[b+j]
			out[j] = decode2(v >> 6)
			out[j+32] = decode2(v >> 4)
			out[j+64] = decode2(v >> 2)
			out[j+96] = decode2(v)
		}
	}
}

// decode2 maps the low 2 bits of c to a ternary value (0 → -1, 1 → 0, 2 and
// 3 → +1).
func decode2(c byte) int8 {
	return min(int8(c&3)-1, 1)
}

// I2SBytes returns the whole GGUF data of one I2_S tensor (ggml_nbytes =
// n/4 + 32): the codes packed by PackI2S, the scale as little-endian float32
// at byte n/4, then 28 zero bytes (the reference leaves those uninitialised;
// spec §3.3). It panics under the same conditions as PackI2S.
func I2SBytes(t []int8, scale float32) []byte {
	out := make([]byte, len(t)/4+I2STailBytes)
	PackI2S(out[:len(t)/4], t)
	binary.LittleEndian.PutUint32(out[len(t)/4:], math.Float32bits(scale))
	return out
}

// UnpackPackedU8 unpacks a pre-quantized HF uint8 weight (BitNet-b1.58-2B-4T
// style, spec conversion.md §2.4, convert-hf-to-gguf-bitnet.py unpack_weights)
// of HF shape [rows, cols] into ternary values of HF shape [4·rows, cols]
// along axis 0: dst[(i·rows + r)·cols + c] = ((packed[r·cols+c] >> 2i) & 3) − 1
// for i = 0..3, so bits 1-0 give the first rows rows and bits 7-6 the last.
// Code 3 (which would be +2) is clamped to +1. It panics when
// len(packed) != rows·cols or len(dst) != 4·rows·cols.
func UnpackPackedU8(dst []int8, packed []byte, rows, cols int) {
	if rows < 0 || cols < 0 || len(packed) != rows*cols {
		panic("quantize: UnpackPackedU8: len(packed) != rows*cols")
	}
	if len(dst) != 4*len(packed) {
		panic("quantize: UnpackPackedU8: len(dst) != 4*rows*cols")
	}
	n := len(packed)
	for i := 0; i < 4; i++ {
		out := dst[i*n : (i+1)*n]
		shift := 2 * uint(i)
		for k, v := range packed {
			out[k] = decode2(v >> shift)
		}
	}
}
