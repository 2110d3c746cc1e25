package quantize_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

func TestTernarizeRounding(t *testing.T) {
	// m = mean|x| of each input is chosen so x·s hits the half-way points.
	cases := []struct {
		name string
		x    []float32
		want []int8
	}{
		// mean|x| = 1 ⇒ s = 1: 0.5 → 0 (half to even), 1.5 → 2 → 1, -0.5 → -0, 0.49 → 0.
		{"half to even", []float32{0.5, 1.5, -0.5, 1.51, -1.5, 0.49, 0.5, 1.5}, []int8{0, 1, 0, 1, -1, 0, 0, 1}},
		// 2.5 → 2 → clamp 1; large magnitudes clamp.
		{"clamp", []float32{2.5, -2.5, 0, -1}, []int8{1, -1, 0, -1}},
		// all-zero: m floored to 1e-5, every code 0.
		{"zeros", []float32{0, 0, 0, 0}, []int8{0, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int8, len(tc.x))
			quantize.Ternarize(got, tc.x)
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("x=%v: codes %v, want %v", tc.x, got, tc.want)
				}
			}
		})
	}
	_, m := quantize.Ternarize(make([]int8, 4), []float32{0, 0, 0, 0})
	if m != quantize.AbsMeanFloor {
		t.Errorf("all-zero absMean = %g, want the 1e-5 floor", m)
	}
}

func TestTernarizeScaleIsRoundTrip(t *testing.T) {
	// scale = f32(1/f32(1/m)), which may differ from m by an ulp.
	r := rand.New(rand.NewPCG(1, 2))
	diff := 0
	for k := 0; k < 2000; k++ {
		x := make([]float32, 16)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		scale, m := quantize.Ternarize(make([]int8, len(x)), x)
		s := 1 / m
		if scale != 1/s {
			t.Fatalf("scale %v != f32(1/f32(1/m)) %v", scale, 1/s)
		}
		if scale != m {
			diff++
		}
	}
	if diff == 0 {
		t.Error("expected some inputs where f32(1/f32(1/m)) != m")
	}
}

func TestAbsMeanSmall(t *testing.T) {
	cases := []struct {
		x    []float32
		want float32
	}{
		{[]float32{1, -2, 3, -4}, 2.5},
		{[]float32{0.05, -0.02, 0, -0.06}, 0.0325},
		{nil, 0},
		{[]float32{float32(math.Inf(-1)), 1}, float32(math.Inf(1))},
	}
	for _, tc := range cases {
		if got := quantize.AbsMean(tc.x); got != tc.want {
			t.Errorf("AbsMean(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// TestAbsMeanCascadeOrder checks the cascade against a sum that torch's order
// gives exactly: 2^24 + 1 + 1 … is where naive float32 summation loses the
// small terms, but the 32 lane accumulators each see only one large value.
func TestAbsMeanCascadeOrder(t *testing.T) {
	x := make([]float32, 4096)
	x[0] = 1 << 24
	for i := 1; i < len(x); i++ {
		x[i] = 1
	}
	var naive float32
	for _, v := range x {
		naive += v
	}
	if naive != 1<<24 {
		t.Fatalf("naive sum %v, expected to lose every +1", naive)
	}
	o := quantize.TorchSumOrder{VecWidth: 8, Threads: 1}
	want := float32(1<<24+4095) / 4096 // exact: other lanes sum small ints exactly; lane 0 loses its +1s
	got := o.AbsMean(x)
	// Lane 0 holds x[0] plus 127 ones from its own stream (each lost: 2^24+1
	// rounds to 2^24 in float32, ties to even), so the total misses 127 ones
	// at most and gains nothing.
	if got > want || got < float32(1<<24+4095-127)/4096 {
		t.Errorf("cascade AbsMean %v, want in [%v, %v]", got, float32(1<<24+4095-127)/4096, want)
	}
	if got == naive/4096 {
		t.Errorf("cascade order gave the naive result %v", got)
	}
}

func TestPackUnpackI2S(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	codes := make([]int8, 1024)
	for i := range codes {
		codes[i] = int8(r.IntN(3)) - 1
	}
	packed := make([]byte, len(codes)/4)
	packI2S(packed, codes)
	back := make([]int8, len(codes))
	unpackI2S(back, packed)
	for i := range codes {
		if back[i] != codes[i] {
			t.Fatalf("round trip differs at %d: %d != %d", i, back[i], codes[i])
		}
	}
	// Layout spot checks (spec §3.1): element 128b+j goes to bits 7-6 of
	// byte 32b+j, +32 to bits 5-4, +64 to 3-2, +96 to 1-0.
	one := make([]int8, 256)
	for _, tc := range []struct {
		elem  int
		byteI int
		want  byte
	}{
		{0, 0, 0x95}, {32, 0, 0x65}, {64, 0, 0x59}, {96, 0, 0x56}, {128 + 31, 63, 0x95}, {255, 63, 0x56},
	} {
		clear(one)
		one[tc.elem] = 1
		p := make([]byte, 64)
		packI2S(p, one)
		if p[tc.byteI] != tc.want {
			t.Errorf("+1 at element %d: byte %d = %#02x, want %#02x", tc.elem, tc.byteI, p[tc.byteI], tc.want)
		}
	}
	// All +1 → 0xAA, all -1 → 0x00, code 3 decodes to +1.
	for _, tc := range []struct {
		v    int8
		want byte
	}{{1, 0xAA}, {-1, 0x00}, {0, 0x55}} {
		c := make([]int8, 128)
		for i := range c {
			c[i] = tc.v
		}
		p := make([]byte, 32)
		packI2S(p, c)
		if p[0] != tc.want || p[31] != tc.want {
			t.Errorf("all %d packs to %#02x, want %#02x", tc.v, p[0], tc.want)
		}
	}
	d := make([]int8, 128)
	unpackI2S(d, make([]byte, 32))
	threes := make([]byte, 32)
	for i := range threes {
		threes[i] = 0xFF
	}
	// Code 3 is not ternary: the decoder refuses it (gguf2hf, requant and
	// gpu-pack name the tensor) rather than reading it as +1.
	data := append(threes, make([]byte, format.I2STailBytes)...)
	data[32+3] = 0x3f
	if _, err := (format.I2S{}).Decode(d, data, len(d), 1); err == nil || !strings.Contains(err.Error(), "code 3") {
		t.Errorf("code 3: Decode error %v, want a refusal naming code 3", err)
	}
}

func TestI2SBytesLayout(t *testing.T) {
	codes := make([]int8, 256)
	b := i2sBytes(codes, 0.0325)
	if len(b) != 256/4+32 {
		t.Fatalf("len %d, want n/4+32 = 96", len(b))
	}
	if got := math.Float32frombits(uint32(b[64]) | uint32(b[65])<<8 | uint32(b[66])<<16 | uint32(b[67])<<24); got != 0.0325 {
		t.Errorf("scale at n/4 = %v", got)
	}
	for i := 68; i < 96; i++ {
		if b[i] != 0 {
			t.Fatalf("tail byte %d = %#x, want 0", i, b[i])
		}
	}
}

func TestPackI2SPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"u8 length":        func() { quantize.UnpackPackedU8(make([]int8, 8), make([]byte, 3), 1, 2) },
		"ternarize length": func() { quantize.Ternarize(make([]int8, 3), make([]float32, 4)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestUnpackPackedU8 follows spec §2.4 / BR-06: packed (R, C) → (4R, C)
// along axis 0; bits 1-0 fill the first R rows, bits 7-6 the last R rows;
// value = code − 1, code 3 clamps to +1.
func TestUnpackPackedU8(t *testing.T) {
	const R, C = 2, 3
	packed := []byte{
		// row 0: codes (i=0..3) per byte, low bits first
		0b10_01_00_10, // c0: i0=2(+1) i1=0(-1) i2=1(0) i3=2(+1)
		0b00_00_00_00, // c1: all -1
		0b01_01_01_01, // c2: all 0
		// row 1
		0b11_10_01_00, // c0: i0=0(-1) i1=1(0) i2=2(+1) i3=3(+1 clamped)
		0b10_10_10_10, // c1: all +1
		0b00_01_10_11, // c2: i0=3(+1) i1=2(+1) i2=1(0) i3=0(-1)
	}
	want := [4 * R][C]int8{
		{1, -1, 0}, {-1, 1, 1}, // bits 1-0: rows 0,1
		{-1, -1, 0}, {0, 1, 1}, // bits 3-2: rows 2,3
		{0, -1, 0}, {1, 1, 0}, // bits 5-4: rows 4,5
		{1, -1, 0}, {1, 1, -1}, // bits 7-6: rows 6,7
	}
	dst := make([]int8, 4*R*C)
	quantize.UnpackPackedU8(dst, packed, R, C)
	for r := 0; r < 4*R; r++ {
		for c := 0; c < C; c++ {
			if dst[r*C+c] != want[r][c] {
				t.Errorf("row %d col %d = %d, want %d", r, c, dst[r*C+c], want[r][c])
			}
		}
	}
}

func TestHalfFloats(t *testing.T) {
	inf := float32(math.Inf(1))
	cases := []struct {
		name      string
		bf16      uint16  // bit pattern
		f32       float32 // exact decode of bf16
		f16       uint16  // F32ToF16(f32)
		overflows bool    // F16Overflow flags it
	}{
		{"70000", 0x4789, 70144, 0x7c00, true}, // bf16(70000) = 70144 (RNE), beyond f16 max
		{"-1e-8", 0xb22c, -1.0011718e-08, 0x8000, false},
		{"3e38", 0x7f62, 3.0040553e38, 0x7c00, true},
		{"+Inf", 0x7f80, inf, 0x7c00, true},
		{"bf16 subnormal", 0x0001, 9.18355e-41, 0x0000, false},
		{"one", 0x3f80, 1, 0x3c00, false},
		{"f16 max", 0x477f, 65280, 0x7bf8, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := quantize.BF16ToF32(tc.bf16); got != tc.f32 {
				t.Errorf("BF16ToF32(%#04x) = %g, want %g", tc.bf16, got, tc.f32)
			}
			if got := quantize.F32ToBF16(tc.f32); got != tc.bf16 {
				t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", tc.f32, got, tc.bf16)
			}
			if got := quantize.F32ToF16(tc.f32); got != tc.f16 {
				t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.f32, got, tc.f16)
			}
			if _, bad := quantize.F16Overflow([]float32{tc.f32}); bad != tc.overflows {
				t.Errorf("F16Overflow(%g) bad = %v, want %v", tc.f32, bad, tc.overflows)
			}
		})
	}
	// Rounding of the literal inputs of BR-22 to bf16.
	for _, tc := range []struct {
		f    float32
		want uint16
	}{{70000, 0x4789}, {-1e-8, 0xb22c}, {3.0e38, 0x7f62}, {1.00390625, 0x3f80}, {1.01171875, 0x3f82}} {
		if got := quantize.F32ToBF16(tc.f); got != tc.want {
			t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", tc.f, got, tc.want)
		}
	}
	// NaN: decode keeps NaN, encode keeps a NaN, F16Overflow flags it.
	nan := quantize.BF16ToF32(0x7fc0)
	if nan == nan {
		t.Error("BF16ToF32(0x7fc0) is not NaN")
	}
	if b := quantize.F32ToBF16(float32(math.NaN())); b&0x7f80 != 0x7f80 || b&0x7f == 0 {
		t.Errorf("F32ToBF16(NaN) = %#04x, not a NaN", b)
	}
	if m, bad := quantize.F16Overflow([]float32{nan, 2}); !bad || m != 2 {
		t.Errorf("F16Overflow(NaN, 2) = %v, %v; want 2, true", m, bad)
	}
	// The f16 boundary: 65519 rounds to 65504, 65520 rounds to Inf.
	if _, bad := quantize.F16Overflow([]float32{65519}); bad {
		t.Error("65519 flagged, but it rounds to 65504")
	}
	if _, bad := quantize.F16Overflow([]float32{-65520}); !bad {
		t.Error("-65520 not flagged, but it rounds to -Inf")
	}
	if quantize.F32ToF16(65519) != 0x7bff || quantize.F32ToF16(65520) != 0x7c00 {
		t.Error("F32ToF16 boundary disagrees with F16Overflow")
	}
	if got := quantize.F16ToF32(0x7bff); got != 65504 {
		t.Errorf("F16ToF32(0x7bff) = %v", got)
	}
	if got := quantize.F16ToF32(0x0001); got != 5.9604645e-08 {
		t.Errorf("F16ToF32(0x0001) = %v", got)
	}
}

func benchTensor() []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 2560*6912)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
	}
	return x
}

func BenchmarkTernarize(b *testing.B) {
	x := benchTensor()
	codes := make([]int8, len(x))
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for b.Loop() {
		quantize.Ternarize(codes, x)
	}
}

func BenchmarkAbsMean(b *testing.B) {
	x := benchTensor()
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for b.Loop() {
		quantize.AbsMean(x)
	}
}

func BenchmarkTernarizeWith(b *testing.B) {
	x := benchTensor()
	codes := make([]int8, len(x))
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for b.Loop() {
		quantize.TernarizeWith(codes, x, 40)
	}
}

func TestTernarizeWithSpecials(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	x := []float32{nan, inf, -inf, 0.5, -0.5, 0.50000006, -0.50000006, float32(math.Copysign(0, -1))}
	want := []int8{0, 1, -1, 0, 0, 1, -1, 0}
	got := make([]int8, len(x))
	quantize.TernarizeWith(got, x, 1)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("x=%v: code %d, want %d", x[i], got[i], want[i])
		}
	}
}
