package format

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// Layout is the bit layout of an I2_S tensor. GGUF records none (spec
// conversion.md §3.2, quirk Q18): bitnet.cpp's quantize_i2_s
// (src/ggml-bitnet-mad.cpp, microsoft/BitNet 16da220) writes the layout of
// the build that runs it, so our files also carry LayoutKey.
type Layout string

// I2_S layouts.
const (
	// LayoutX86 is QK_I2_S = 128 (x86 builds with ACT_PARALLEL, the
	// default, and every bitnet.cpp build before 112f853): block b of 128
	// codes fills bytes [32b, 32b+32), code 128b + j + 32i in byte 32b + j at
	// bits 6 − 2i.
	LayoutX86 Layout = "x86"
	// LayoutARM is QK_I2_S = 64 (ARM NEON builds since BitNet 112f853):
	// code 64b + j + 16i in byte 16b + j at bits 6 − 2i.
	LayoutARM Layout = "arm"
	// LayoutX86_1x4 is x86 without ACT_PARALLEL: rows in groups of 4, one
	// byte per column c, row 4g + i at bits 6 − 2i of byte g·K + c.
	LayoutX86_1x4 Layout = "x86-1x4"
)

// Layouts lists the I2_S layouts in --i2s-layout order.
var Layouts = []Layout{LayoutX86, LayoutARM, LayoutX86_1x4}

// LayoutKey is the GGUF key under which our I2_S files record their layout
// (a string from Layouts). bitnet.cpp ignores it.
const LayoutKey = "bitnet_convert.i2s_layout"

// ParseLayout validates an --i2s-layout / --from-layout value.
func ParseLayout(s string) (Layout, error) {
	for _, l := range Layouts {
		if string(l) == strings.ToLower(s) {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown I2_S layout %q (supported: x86, arm, x86-1x4)", s)
}

// I2STailBytes is the per-tensor tail after the packed codes: a
// little-endian float32 scale and 28 pad bytes (spec conversion.md §3.3;
// bitnet.cpp leaves the pad uninitialised, we write zeros).
const I2STailBytes = 32

// I2S is bitnet.cpp's I2_S type (36): n/4 bytes of 2-bit codes in Layout,
// then the per-tensor float32 scale at byte n/4 and 28 zero bytes.
type I2S struct{ Layout Layout }

// Name is "I2_S" for the x86 layout and "I2_S/<layout>" otherwise.
func (f I2S) Name() string {
	if f.layout() == LayoutX86 {
		return "I2_S"
	}
	return "I2_S/" + string(f.layout())
}

func (f I2S) layout() Layout {
	if f.Layout == "" {
		return LayoutX86
	}
	return f.Layout
}

// Type is gguf.TypeI2S.
func (I2S) Type() gguf.Type { return gguf.TypeI2S }

// ScaleGroup is 0: one scale per tensor.
func (I2S) ScaleGroup(int) int { return 0 }

// StoredScale is s unchanged: the scale is stored as float32.
func (I2S) StoredScale(s float32) float32 { return s }

// qk is the block length of the layout (K must be a multiple).
func (f I2S) qk() int {
	if f.layout() == LayoutARM {
		return 64
	}
	return 128
}

// Check: K must be a multiple of the block (128 x86, 64 arm; bitnet.cpp
// addresses row r at byte r·K/4, so a block straddling rows computes
// garbage, spec §3.1); x86-1x4 also needs M % 4 == 0.
func (f I2S) Check(k, m int) error {
	if k%f.qk() != 0 {
		return fmt.Errorf("row length K=%d is not a multiple of %d (the %s block); bitnet.cpp computes garbage for such rows", k, f.qk(), f.Name())
	}
	if f.layout() == LayoutX86_1x4 && m%4 != 0 {
		return fmt.Errorf("row count M=%d is not a multiple of 4 (the %s row group)", m, f.Name())
	}
	switch f.layout() {
	case LayoutX86, LayoutARM, LayoutX86_1x4:
		return nil
	}
	return fmt.Errorf("unknown I2_S layout %q", f.Layout)
}

// Bytes is k·m/4 + 32.
func (f I2S) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeI2S, k, m) }

// Encode packs codes in the layout and writes scales[0] and a zero pad.
func (f I2S) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	n := k * m
	ok := true
	if scales[0] == 0 {
		// quantize_i2_s: |x| < 1e-6 gives code 1 (zero).
		for i := range dst[:n/4] {
			dst[i] = 0x55
		}
	} else {
		switch f.layout() {
		case LayoutX86_1x4:
			ok = pack1x4(dst[:n/4], codes, k)
		case LayoutX86:
			// The same bytes as pack2 with 32-byte groups, in AVX2 where
			// the machine has it (internal/kernels.PackI2S).
			ok = kernels.PackI2S(dst[:n/4], codes)
		default:
			ok = pack2(dst[:n/4], codes, f.qk()/4, true)
		}
	}
	if !ok {
		return fmt.Errorf("%s: a code is outside {-1, 0, 1}", f.Name())
	}
	binary.LittleEndian.PutUint32(dst[n/4:], math.Float32bits(scales[0]))
	clear(dst[n/4+4 : n/4+I2STailBytes])
	return nil
}

// Decode unpacks the codes and returns the scale. Code 3 is an error
// naming its byte and row: the tensor is not ternary.
func (f I2S) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	n := k * m
	if err := f.checkCode3(data[:n/4], k); err != nil {
		return nil, err
	}
	if f.layout() == LayoutX86_1x4 {
		unpack1x4(codes, data[:n/4], k)
	} else {
		unpack2(codes, data[:n/4], f.qk()/4, true)
	}
	s := []float32{math.Float32frombits(binary.LittleEndian.Uint32(data[n/4:]))}
	zeroCodesOfZeroScales(codes, s, 0)
	return s, nil
}

// pack1x4 writes byte g·k + c = q[4g][c]<<6 | q[4g+1][c]<<4 | q[4g+2][c]<<2 |
// q[4g+3][c] (codes t + 1).
func pack1x4(dst []byte, codes []int8, k int) bool {
	ok := true
	for g := 0; g < len(codes)/(4*k); g++ {
		r0 := codes[4*g*k:]
		out := dst[g*k : g*k+k]
		for c := range out {
			c0, c1, c2, c3 := byte(r0[c]+1), byte(r0[k+c]+1), byte(r0[2*k+c]+1), byte(r0[3*k+c]+1)
			if c0 > 2 || c1 > 2 || c2 > 2 || c3 > 2 {
				ok = false
			}
			out[c] = c0<<6 | c1<<4 | c2<<2 | c3
		}
	}
	return ok
}

func unpack1x4(codes []int8, src []byte, k int) {
	for g := 0; g < len(codes)/(4*k); g++ {
		r0 := codes[4*g*k:]
		for c, v := range src[g*k : g*k+k] {
			r0[c] = decode2(v >> 6)
			r0[k+c] = decode2(v >> 4)
			r0[2*k+c] = decode2(v >> 2)
			r0[3*k+c] = decode2(v)
		}
	}
}

// Scales returns the per-tensor scale at byte k·m/4.
func (f I2S) Scales(data []byte, k, m int) ([]float32, error) {
	return tailScale(f, data, k, m, k*m/4)
}
