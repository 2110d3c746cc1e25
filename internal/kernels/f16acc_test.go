package kernels

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// f16Acc1 is one lane of FMAF16Acc spelled out with the exported
// definitions: FMA32 of the widened values, then F32ToF16.
func f16Acc1(a, v uint16, c float32) uint16 {
	var h [1]uint16
	f32ToF16Ref(h[:], []float32{FMA32(F16ToF32(a), F16ToF32(v), c)})
	return h[0]
}

// f16Scale1 is one lane of ScaleF16.
func f16Scale1(a uint16, c float32) uint16 {
	var h [1]uint16
	f32ToF16Ref(h[:], []float32{F16ToF32(a) * c})
	return h[0]
}

// sameF16 reports whether two F16 values have the same bits or are both
// NaN: which NaN operand's payload a product keeps is the compiler's or
// the instruction's choice (as in sameF32), every other result is exact.
func sameF16(a, b uint16) bool {
	return a == b || (a&0x7c00 == 0x7c00 && a&0x3ff != 0 && b&0x7c00 == 0x7c00 && b&0x3ff != 0)
}

// checkF16Acc runs FMAF16Acc and ScaleF16 on acc, v and c and compares
// every lane, bit for bit (sameF16), with f16Acc1 and f16Scale1.
func checkF16Acc(t *testing.T, acc, v []uint16, c float32) {
	t.Helper()
	got := append([]uint16(nil), acc...)
	FMAF16Acc(got, v, c)
	for i := range got {
		if want := f16Acc1(acc[i], v[i], c); !sameF16(got[i], want) {
			t.Fatalf("FMAF16Acc lane %d of %d (acc %#04x, v %#04x, c %x): %#04x, want %#04x",
				i, len(acc), acc[i], v[i], math.Float32bits(c), got[i], want)
		}
	}
	got = append(got[:0], acc...)
	ScaleF16(got, c)
	for i := range got {
		if want := f16Scale1(acc[i], c); !sameF16(got[i], want) {
			t.Fatalf("ScaleF16 lane %d of %d (acc %#04x, c %x): %#04x, want %#04x",
				i, len(acc), acc[i], math.Float32bits(c), got[i], want)
		}
	}
}

// TestF16Acc: FMAF16Acc and ScaleF16 give the lane-by-lane definition's
// bits for random F16 lanes of every class (subnormals, infinities and
// NaNs included) and multipliers from 2^-30 to 2^30 and the special
// values, at lengths around the groups of eight (the assembly's) and the
// head sizes of the supported models (64, 80, 128, 256).
func TestF16Acc(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	cs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 65504, 1e-8,
		float32(math.Inf(1)), float32(math.NaN()), math.MaxFloat32}
	for range 200 {
		cs = append(cs, float32(math.Ldexp(r.Float64()*2-1, r.IntN(61)-30)))
	}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 64, 80, 128, 256} {
		for i, c := range cs {
			acc, v := make([]uint16, n), make([]uint16, n)
			for j := range acc {
				if i%2 == 0 {
					// Any bits: a NaN or Inf lane now and then.
					acc[j], v[j] = uint16(r.Uint32()), uint16(r.Uint32())
				} else {
					// Finite values of attention's size: exponent 2^-14 … 2^3.
					acc[j] = uint16(r.Uint32())&0x83ff | uint16(1+r.IntN(18))<<10
					v[j] = uint16(r.Uint32())&0x83ff | uint16(1+r.IntN(18))<<10
				}
			}
			checkF16Acc(t, acc, v, c)
		}
	}
	// Results at the edges of F16: overflow to Inf, a tie to even in the
	// last F16 bit, the subnormal range.
	checkF16Acc(t, []uint16{0x7bff, 0x3c00, 0x0001, 0x8400, 0x3c00, 0x3c00, 0x0400, 0xfbff},
		[]uint16{0x7bff, 0x1000, 0x0001, 0x0400, 0x3c01, 0x0001, 0x8400, 0xfbff}, 1)
}

// FuzzF16Acc: FMAF16Acc and ScaleF16 equal their lane-by-lane definition
// on any input: the first four bytes are c, then pairs of 16-bit words
// (acc, v).
func FuzzF16Acc(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x3c, 0x01, 0x00}, 20))
	f.Add(bytes.Repeat([]byte{0x00, 0x00, 0xc0, 0x7f, 0xff, 0x7b, 0x00, 0x7c, 0x01, 0x7e, 0x00, 0x80}, 12))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		c := math.Float32frombits(binary.LittleEndian.Uint32(data))
		n := (len(data) - 4) / 4
		acc, v := make([]uint16, n), make([]uint16, n)
		for i := range acc {
			acc[i] = binary.LittleEndian.Uint16(data[4+4*i:])
			v[i] = binary.LittleEndian.Uint16(data[6+4*i:])
		}
		checkF16Acc(t, acc, v, c)
	})
}
