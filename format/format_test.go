package format_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// all is one of every format (TL with a tiling for 64×256).
var all = []format.Format{
	format.I2S{}, format.I2S{Layout: format.LayoutARM}, format.I2S{Layout: format.LayoutX86_1x4},
	format.TL1{Kernels: []format.Kernel{{M: 64, K: 256, BM: 64, BK: 128, Bm: 32}}},
	format.TL2{Kernels: []format.Kernel{{M: 64, K: 256, BM: 64, BK: 96, Bm: 32}}},
	format.TQ1_0{}, format.TQ2_0{}, format.Q2_0{}, format.IQ1BN{}, format.IQ2BN{},
}

// TestEveryFormatRoundTrip: random codes with random per-group scales (some
// zero) survive Encode/Decode in every format; sizes match gguf.NBytes.
func TestEveryFormatRoundTrip(t *testing.T) {
	const k, m = 256, 64
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range all {
		codes := make([]int8, k*m)
		for i := range codes {
			codes[i] = int8(r.IntN(3)) - 1
		}
		sc := make([]float32, format.NumScales(f, k, m))
		for i := range sc {
			sc[i] = 0.5 // exact in f16
		}
		nb, err := f.Bytes(k, m)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := gguf.NBytes(f.Type(), []uint64{k, m}); uint64(nb) != want {
			t.Errorf("%s: Bytes %d, gguf.NBytes %d", f.Name(), nb, want)
		}
		data := make([]byte, nb)
		if err := f.Encode(data, codes, sc, k, m); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		back := make([]int8, k*m)
		bs, err := f.Decode(back, data, k, m)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if !equalCodes(back, codes) {
			t.Errorf("%s: codes differ", f.Name())
		}
		only, err := f.Scales(data, k, m)
		if err != nil || len(only) != len(bs) || only[0] != 0.5 || bs[0] != 0.5 {
			t.Errorf("%s: scales %v / %v (%v)", f.Name(), only[:1], bs[:1], err)
		}
		// Short data and a wrong code count are errors, not panics.
		if _, err := f.Decode(back, data[:nb-1], k, m); err == nil {
			t.Errorf("%s: short data accepted", f.Name())
		}
		if err := f.Encode(data, codes[:k], sc, k, m); err == nil {
			t.Errorf("%s: wrong code count accepted", f.Name())
		}
		codes[7] = 2
		if err := f.Encode(data, codes, sc, k, m); err == nil {
			t.Errorf("%s: code 2 accepted", f.Name())
		}
	}
}

// Row rules: each format names the row length it cannot hold.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		f    format.Format
		k, m int
		want string
	}{
		{format.I2S{}, 192, 4, "K=192 is not a multiple of 128"},
		{format.I2S{Layout: format.LayoutARM}, 96, 4, "K=96 is not a multiple of 64"},
		{format.I2S{Layout: format.LayoutX86_1x4}, 128, 6, "row count M=6 is not a multiple of 4"},
		{format.TQ2_0{}, 320, 1, "K=320 is not a multiple of 256"},
		{format.TQ1_0{}, 128, 1, "K=128 is not a multiple of 256"},
		{format.IQ2BN{}, 96, 1, "K=96 is not a multiple of 64"},
		{format.TL2{}, 256, 64, "no tl2 kernel for [M=64, K=256]"},
	} {
		err := c.f.Check(c.k, c.m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s K=%d M=%d: %v, want %q", c.f.Name(), c.k, c.m, err, c.want)
		}
	}
	if err := format.CheckWrite(format.IQ1BN{}, 256, 4); err == nil || !strings.Contains(err.Error(), "512") {
		t.Errorf("IQ1_BN K=256: %v, want ik_llama.cpp's 512 minimum", err)
	}
	if format.CheckWrite(format.IQ1BN{}, 512, 4) != nil {
		t.Error("IQ1_BN K=512 refused")
	}
}

// Regroup: per-tensor → per-block gives 0 for all-zero blocks; different
// source scales inside one target group are an error (codes not kept).
func TestRegroup(t *testing.T) {
	codes := make([]int8, 512)
	codes[300] = -1
	got, err := format.Regroup(codes, []float32{0.25}, 0, 256)
	if err != nil || got[0] != 0 || got[1] != 0.25 {
		t.Errorf("per-block %v %v", got, err)
	}
	codes[0] = 1
	if _, err := format.Regroup(codes, []float32{0.25, 0.5}, 256, 0); err == nil {
		t.Error("two scales merged into one without an error")
	}
	if got, err := format.Regroup(codes, []float32{0.25, 0.25}, 256, 0); err != nil || got[0] != 0.25 {
		t.Errorf("equal scales: %v %v", got, err)
	}
}

// An all-zero IQ row stores ik_llama.cpp's code 2 with scale 0 and decodes
// to zeros.
func TestZeroRowIQ(t *testing.T) {
	codes := make([]int8, 512)
	for _, f := range []format.Format{format.IQ2BN{}, format.IQ1BN{}} {
		nb, _ := f.Bytes(512, 1)
		data := make([]byte, nb)
		if err := f.Encode(data, codes, []float32{0}, 512, 1); err != nil {
			t.Fatal(err)
		}
		back := make([]int8, 512)
		for i := range back {
			back[i] = 1
		}
		if _, err := f.Decode(back, data, 512, 1); err != nil || !equalCodes(back, codes) {
			t.Errorf("%s: zero row decodes to %v (%v)", f.Name(), back[:4], err)
		}
		if f.Type() == gguf.TypeIQ2BN && data[4] != 0xAA {
			t.Errorf("IQ2_BN zero row byte %#x, want 0xaa (code 2)", data[4])
		}
	}
}

// FuzzDecode: arbitrary bytes never panic any decoder, and decoded codes
// are ternary and re-encode to data that decodes the same.
func FuzzDecode(f *testing.F) {
	f.Add(make([]byte, 64*256), uint8(0))
	f.Add([]byte("0123456789abcdef"), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		fm := all[int(which)%len(all)]
		const k, m = 256, 64
		codes := make([]int8, k*m)
		sc, err := fm.Decode(codes, data, k, m)
		if err != nil {
			return
		}
		for _, c := range codes {
			if c < -1 || c > 1 {
				t.Fatalf("%s: code %d", fm.Name(), c)
			}
		}
		nb, _ := fm.Bytes(k, m)
		again := make([]byte, nb)
		if err := fm.Encode(again, codes, sc, k, m); err != nil {
			return // e.g. a NaN or out-of-range scale from random bytes
		}
		back := make([]int8, k*m)
		if _, err := fm.Decode(back, again, k, m); err != nil || !equalCodes(back, codes) {
			t.Fatalf("%s: re-encode changed the codes (%v)", fm.Name(), err)
		}
	})
}

// EncodeParallel and DecodeParallel give Encode's bytes and Decode's codes
// and scales for any thread count, in every format.
func TestParallelSameBytes(t *testing.T) {
	const k, m = 512, 200 // 200 rows: three full chunks and a partial one
	r := rand.New(rand.NewPCG(9, 9))
	codes := make([]int8, k*m)
	for i := range codes {
		codes[i] = int8(r.IntN(3)) - 1
	}
	clear(codes[5*k : 6*k]) // a zero row
	for _, f := range []format.Format{format.I2S{}, format.I2S{Layout: format.LayoutARM}, format.I2S{Layout: format.LayoutX86_1x4}, format.TQ1_0{}, format.TQ2_0{}, format.Q2_0{}, format.IQ1BN{}, format.IQ2BN{}} {
		sc, err := format.Regroup(codes, []float32{0.25}, 0, f.ScaleGroup(k))
		if err != nil {
			t.Fatal(err)
		}
		nb, _ := f.Bytes(k, m)
		want, got := make([]byte, nb), make([]byte, nb)
		for i := range got {
			got[i] = 0xEE
		}
		if err := f.Encode(want, codes, sc, k, m); err != nil {
			t.Fatal(err)
		}
		if err := format.EncodeParallel(f, got, codes, sc, k, m, 3); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: parallel bytes differ at %d", f.Name(), firstDiff(got, want))
		}
		back := make([]int8, k*m)
		bs, err := format.DecodeParallel(f, back, want, k, m, 3)
		ws, _ := f.Decode(make([]int8, k*m), want, k, m)
		if err != nil || !equalCodes(back, codes) || len(bs) != len(ws) || bs[len(bs)-1] != ws[len(ws)-1] || bs[0] != ws[0] {
			t.Errorf("%s: parallel decode differs (%v)", f.Name(), err)
		}
	}
}

// Transcode I2_S → TQ2_0 gives the bytes of Decode + Regroup + Encode,
// also with all-zero blocks, a zero scale and the unused code 3.
func TestTranscodeI2SToTQ2(t *testing.T) {
	const k, m = 512, 130
	r := rand.New(rand.NewPCG(4, 4))
	for _, scale := range []float32{0.3, 0} {
		codes := make([]int8, k*m)
		for i := range codes {
			codes[i] = int8(r.IntN(3)) - 1
		}
		clear(codes[256:512]) // an all-zero block
		nb, _ := format.I2S{}.Bytes(k, m)
		src := make([]byte, nb)
		if err := (format.I2S{}).Encode(src, codes, []float32{scale}, k, m); err != nil {
			t.Fatal(err)
		}
		tb, _ := format.TQ2_0{}.Bytes(k, m)
		fast := make([]byte, tb)
		ok, err := format.Transcode(format.I2S{}, format.TQ2_0{}, fast, src, k, m, 3)
		if !ok || err != nil {
			t.Fatalf("no fast path: %v %v", ok, err)
		}
		dec := make([]int8, k*m)
		sc, _ := format.I2S{}.Decode(dec, src, k, m)
		rg, _ := format.Regroup(dec, sc, 0, 256)
		slow := make([]byte, tb)
		if err := (format.TQ2_0{}).Encode(slow, dec, rg, k, m); err != nil {
			t.Fatal(err)
		}
		if string(fast) != string(slow) {
			t.Errorf("scale %v: fast path differs at %d", scale, firstDiff(fast, slow))
		}
	}
	if ok, _ := format.Transcode(format.I2S{Layout: format.LayoutARM}, format.TQ2_0{}, nil, nil, 256, 1, 1); ok {
		t.Error("fast path claimed for the ARM layout")
	}
}

// Every out-of-range code is refused by the 2-bit packers, also those
// that wrap around in a byte.
func TestPack2RefusesBadCodes(t *testing.T) {
	for _, bad := range []int8{2, -2, 3, 127, -128} {
		for _, f := range []format.Format{format.I2S{}, format.I2S{Layout: format.LayoutARM}, format.TQ2_0{}, format.IQ2BN{}} {
			codes := make([]int8, 512)
			codes[77] = bad
			nb, _ := f.Bytes(512, 1)
			sc := make([]float32, format.NumScales(f, 512, 1))
			for i := range sc {
				sc[i] = 1
			}
			if err := f.Encode(make([]byte, nb), codes, sc, 512, 1); err == nil {
				t.Errorf("%s: code %d accepted", f.Name(), bad)
			}
		}
	}
}

// TestStoredScale: for every format, the scales Decode returns after Encode
// are exactly StoredScale of the scales given (f16 rounding for TQ1_0, TQ2_0
// and IQ1_BN, none for the float32 formats), over scales that f16 rounds
// (not exact in f16, near its subnormal and overflow ends) and 0, so that
// verify may derive expected scales without an Encode/Decode round.
func TestStoredScale(t *testing.T) {
	const k, m = 256, 64
	r := rand.New(rand.NewPCG(3, 4))
	values := []float32{0.0123456, 1.0 / 3, 2.7182817, 6.1e-5, 3e-8, 65504, 65519, 0.5}
	for _, f := range all {
		for _, v := range values {
			codes := make([]int8, k*m)
			for i := range codes {
				codes[i] = int8(r.IntN(3)) - 1
			}
			sc := make([]float32, format.NumScales(f, k, m))
			for i := range sc {
				sc[i] = v
			}
			nb, _ := f.Bytes(k, m)
			data := make([]byte, nb)
			if err := f.Encode(data, codes, sc, k, m); err != nil {
				t.Fatalf("%s: %v", f.Name(), err)
			}
			got, err := f.Decode(make([]int8, k*m), data, k, m)
			if err != nil {
				t.Fatalf("%s: %v", f.Name(), err)
			}
			want := f.StoredScale(v)
			if spec, _ := format.SpecOf(f.Type()); spec.Scale.F16() != (want != v) && v != 0.5 && v != 65504 {
				t.Errorf("%s: StoredScale(%v) = %v: rounding does not match the stored type", f.Name(), v, want)
			}
			for g, s := range got {
				if s != want {
					t.Fatalf("%s: scale %d decoded %v, StoredScale(%v) = %v", f.Name(), g, s, v, want)
				}
			}
		}
		if s := f.StoredScale(0); s != 0 {
			t.Errorf("%s: StoredScale(0) = %v", f.Name(), s)
		}
	}
}
