package gguf

import (
	"errors"
	"math"
	"testing"
)

// TestNBytes checks the size rule of every type family against sizes the
// reference files hold (tiny-bitnet outputs/gguf_list_*.txt) or ggml's
// type_traits.
func TestNBytes(t *testing.T) {
	cases := []struct {
		typ  Type
		ne   []uint64
		want uint64
	}{
		{TypeF32, []uint64{256, 512}, 524288},  // gguf_list_f32 token_embd
		{TypeF16, []uint64{256, 512}, 262144},  // gguf_list_i2_s token_embd
		{TypeQ8_0, []uint64{256, 512}, 139264}, // gguf_list_i2_s-q8embd token_embd
		{TypeI2S, []uint64{512, 256}, 32800},   // n/4 + 32
		{TypeI2S, []uint64{256, 128}, 8224},    // gguf_list_i2_s attn_k
		{TypeTL1, []uint64{256, 256}, 16416},   // gguf_list_tl1 attn_q
		{TypeTL2, []uint64{512, 256}, 30080},   // gguf_list_tl2 ffn_down: pad32(30037)+32
		{TypeTL2, []uint64{256, 512}, 32800},   // gguf_list_tl2 ffn_gate
		{TypeTL2, []uint64{256, 128}, 8224},    // gguf_list_tl2 attn_k
		{TypeBF16, []uint64{3, 5}, 30},
		{TypeQ4_K, []uint64{512, 2}, 2 * 2 * 144},
		{TypeQ6_K, []uint64{256}, 210},
		{TypeTQ2_0, []uint64{256, 4}, 4 * 66},
		{TypeI8, []uint64{7}, 7},
		{TypeF64, nil, 8}, // 0-d tensor: one element
		{TypeF32, []uint64{0, 5}, 0},
	}
	for _, c := range cases {
		got, err := NBytes(c.typ, c.ne)
		if err != nil || got != c.want {
			t.Errorf("NBytes(%s, %v) = %d, %v; want %d", c.typ, c.ne, got, err, c.want)
		}
	}
}

func TestNBytesErrors(t *testing.T) {
	cases := []struct {
		typ  Type
		ne   []uint64
		want error
	}{
		{Type(77), []uint64{4}, ErrUnknownType},
		{TypeQ8_0, []uint64{33}, ErrBlockSize},
		{TypeQ4_K, []uint64{128}, ErrBlockSize},
		{TypeF32, []uint64{1 << 40, 1 << 40}, ErrOverflow},
		{TypeF32, []uint64{1 << 62, 4}, ErrOverflow},       // elements fit, bytes do not
		{TypeI2S, []uint64{1 << 32, 1 << 32}, ErrOverflow}, // 2^64 elements
		{TypeTL2, []uint64{256}, nil},                      // needs 2 dims: plain error
		{TypeTL2, []uint64{math.MaxUint64 / 2, 1 << 20}, ErrOverflow},
	}
	for _, c := range cases {
		_, err := NBytes(c.typ, c.ne)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("NBytes(%s, %v) err = %v, want %v", c.typ, c.ne, err, c.want)
		}
	}
	// BR-28 (c): ne = [4, 2^30−1, 2^30+1, 1] F32 is 2^64−16 bytes, which still
	// fits in uint64; it is padding to the alignment that overflows (the
	// reader and writer both pad, and both reject it).
	nb, err := NBytes(TypeF32, []uint64{4, 1073741823, 1073741825, 1})
	if err != nil || nb != math.MaxUint64-15 {
		t.Fatalf("BR-28c NBytes = %d, %v", nb, err)
	}
	if _, err := Pad(nb, DefaultAlignment); !errors.Is(err, ErrOverflow) {
		t.Errorf("Pad(2^64-16, 32) err = %v, want ErrOverflow", err)
	}
}

func TestTL2DataBytes(t *testing.T) {
	cases := []struct{ k, m, want uint64 }{
		{512, 256, 30037}, // (256·256/3·5/8) + 256·256/2·4/8 = 13653 + 16384
		{256, 256, 16384},
		{2560, 2560, 2560*2304/3*5/8 + 2560*256/2*4/8},
		// K < 256: C signed arithmetic truncating toward zero:
		// −96·96/3 = −3072, ·5/8 = −1920; 256·96/2·4/8 = 6144.
		{160, 96, 4224},
		{0, 3, 32}, // −256·3/3·5/8 = −160, plus 192
	}
	for _, c := range cases {
		got, err := TL2DataBytes(c.k, c.m)
		if err != nil || got != c.want {
			t.Errorf("TL2DataBytes(%d, %d) = %d, %v; want %d", c.k, c.m, got, err, c.want)
		}
	}
	if _, err := TL2DataBytes(math.MaxUint64/2, 1<<20); !errors.Is(err, ErrOverflow) {
		t.Errorf("TL2DataBytes overflow err = %v", err)
	}
}

func TestPadAndScaleOffset(t *testing.T) {
	for _, c := range []struct{ n, a, want uint64 }{{0, 32, 0}, {1, 32, 32}, {32, 32, 32}, {33, 32, 64}, {5, 1, 5}} {
		if got, err := Pad(c.n, c.a); err != nil || got != c.want {
			t.Errorf("Pad(%d, %d) = %d, %v", c.n, c.a, got, err)
		}
	}
	for _, c := range []struct {
		typ  Type
		ne   []uint64
		want uint64
		ok   bool
	}{
		{TypeI2S, []uint64{256, 256}, 16384, true},
		{TypeTL1, []uint64{256, 256}, 16384, true},
		{TypeTL2, []uint64{512, 256}, 30048, true}, // pad32(30037)
		{TypeF32, []uint64{256}, 0, false},
	} {
		got, ok := ScaleOffset(c.typ, c.ne)
		if got != c.want || ok != c.ok {
			t.Errorf("ScaleOffset(%s, %v) = %d, %v; want %d, %v", c.typ, c.ne, got, ok, c.want, c.ok)
		}
	}
}

func TestTypeNames(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		name string
	}{{TypeI2S, "I2_S"}, {TypeTL1, "TL1"}, {TypeTL2, "TL2"}, {TypeQ8_0, "Q8_0"}, {TypeBF16, "BF16"}, {Type(99), "type(99)"}} {
		if got := c.typ.String(); got != c.name {
			t.Errorf("Type(%d).String() = %q, want %q", uint32(c.typ), got, c.name)
		}
		if pt, ok := ParseType(c.name); ok != (c.name != "type(99)") || (ok && pt != c.typ) {
			t.Errorf("ParseType(%q) = %d, %v", c.name, pt, ok)
		}
	}
	if uint32(TypeI2S) != 36 || uint32(TypeTL1) != 38 || uint32(TypeTL2) != 39 {
		t.Error("bitnet.cpp type ids changed") // BR-28 (e): 36 as in microsoft/BitNet #206
	}
}

func TestValueAccessors(t *testing.T) {
	for _, c := range []struct {
		v    Value
		u    uint64
		uok  bool
		f    float64
		fok  bool
		text string
	}{
		{Uint8(7), 7, true, 7, true, "7"},
		{Int32(-1), 0, false, 0, false, "-1"},
		{Int64(5), 5, true, 5, true, "5"},
		{Uint64(math.MaxUint64), math.MaxUint64, true, math.MaxUint64, true, "18446744073709551615"},
		{Float32(0.5), 0, false, 0.5, true, "0.5"},
		{String("x"), 0, false, 0, false, "x"},
		{Bool(true), 0, false, 0, false, "true"},
		{Strings([]string{"a"}), 0, false, 0, false, "[string array]"},
	} {
		u, uok := c.v.Uint()
		f, fok := c.v.Float()
		if (uok && u != c.u) || uok != c.uok || (fok && f != c.f) || fok != c.fok || c.v.String() != c.text {
			t.Errorf("%#v: Uint %d %v, Float %v %v, String %q", c.v, u, uok, f, fok, c.v.String())
		}
	}
	for vt, size := range map[ValueType]uint64{ValueUint8: 1, ValueBool: 1, ValueInt16: 2, ValueFloat32: 4, ValueFloat64: 8} {
		if got, ok := vt.Size(); !ok || got != size {
			t.Errorf("%s.Size() = %d, %v", vt, got, ok)
		}
	}
	if _, ok := ValueString.Size(); ok {
		t.Error("string has a fixed size")
	}
	if ValueType(13).String() != "value(13)" || ValueFloat64.String() != "float64" {
		t.Error("ValueType names")
	}
}

// TestResolveCollision: id 39 is TL2 in a BitNet file when the TL2 size
// fits, MXFP4 otherwise and in any other arch; other ids are unchanged.
func TestResolveCollision(t *testing.T) {
	tl2, _ := NBytes(TypeTL2, []uint64{256, 128})
	for _, c := range []struct {
		arch string
		ne   []uint64
		span uint64
		want Type
	}{
		{"bitnet", []uint64{256, 128}, tl2, TypeTL2},
		{"bitnet-b1.58", []uint64{256, 128}, 1 << 20, TypeTL2},
		{"gpt-oss", []uint64{256, 128}, 1 << 20, TypeMXFP4},
		{"", []uint64{2880, 256}, 391680, TypeMXFP4},
		{"bitnet", []uint64{64}, 34, TypeMXFP4},           // TL2 needs 2 dimensions
		{"bitnet", []uint64{256, 128}, tl2 - 32, TypeTL2}, // neither fits: the TL2 error follows
	} {
		if got := ResolveCollision(TypeTL2, c.arch, c.ne, c.span); got != c.want {
			t.Errorf("ResolveCollision(39, %q, %v, %d) = %v, want %v", c.arch, c.ne, c.span, got, c.want)
		}
	}
	if got := ResolveCollision(TypeI2S, "gpt-oss", []uint64{128}, 0); got != TypeI2S {
		t.Errorf("I2_S resolved to %v", got)
	}
	for _, c := range []struct {
		t     Type
		ne    []uint64
		bytes uint64
		id    uint32
	}{{TypeMXFP4, []uint64{2880, 256}, 391680, 39}, {TypeNVFP4, []uint64{128, 2}, 144, 40}, {TypeQ1_0, []uint64{256, 3}, 108, 41}} {
		if n, err := NBytes(c.t, c.ne); err != nil || n != c.bytes || c.t.ID() != c.id {
			t.Errorf("%v %v: %d bytes (%v), id %d; want %d, %d", c.t, c.ne, n, err, c.t.ID(), c.bytes, c.id)
		}
	}
}
