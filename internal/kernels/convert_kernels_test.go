package kernels

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestAddAbs4x8MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 15))
	for _, rows := range []int{0, 1, 2, 16, 17, 256} {
		for trial := 0; trial < 8; trial++ {
			x := make([]float32, 32*rows)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(60)-30))
			}
			if trial == 1 && len(x) > 0 { // NaN, infinities, -0, subnormals
				x[0], x[len(x)/2] = float32(math.NaN()), float32(math.Inf(-1))
				x[len(x)-1] = float32(math.Copysign(0, -1))
				x[len(x)/3] = math.Float32frombits(0x80000001)
			}
			var got, want [32]float32
			for i := range got {
				got[i] = float32(r.NormFloat64())
				want[i] = got[i]
			}
			AddAbs4x8(&got, x)
			addAbs4x8Ref(&want, x)
			for i := range got {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("rows=%d trial %d lane %d: kernel %v, reference %v (%s)", rows, trial, i, got[i], want[i], Impl())
				}
			}
		}
	}
	var acc [32]float32
	AddAbs4x8(&acc, []float32{-1, 2, 3: -0.5, 8: 4, 31: -7, 32: 0.25, 63: 1})
	if acc[0] != 1.25 || acc[1] != 2 || acc[3] != 0.5 || acc[8] != 4 || acc[31] != 8 {
		t.Errorf("AddAbs4x8: %v", acc)
	}
}

func TestDecodeBF16MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 15))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 100, 1024} {
		for trial := 0; trial < 8; trial++ {
			raw := make([]byte, 2*n+3)
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			if trial%2 == 0 { // finite only: clear any all-ones exponent
				for i := 0; i < n; i++ {
					if raw[2*i+1]&0x7f == 0x7f && raw[2*i]&0x80 != 0 {
						raw[2*i+1] &^= 1
					}
				}
			}
			if trial == 2 && n > 0 { // one infinity at a chosen place
				k := r.IntN(n)
				raw[2*k], raw[2*k+1] = 0x80, 0xff
			}
			got, want := make([]float32, n), make([]float32, n)
			gb, wb := DecodeBF16(got, raw), decodeBF16Ref(want, raw)
			if gb != wb {
				t.Fatalf("n=%d trial %d: non-finite %v, reference %v", n, trial, gb, wb)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d trial %d: element %d %#x, reference %#x", n, trial, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
	got := make([]float32, 2)
	if DecodeBF16(got, []byte{0x80, 0x3f, 0x00, 0xc0}) || got[0] != 1 || got[1] != -2 {
		t.Errorf("DecodeBF16(1, -2) = %v", got)
	}
}

func TestPackI2SMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 15))
	for _, nb := range []int{0, 1, 2, 5, 64} {
		for trial := 0; trial < 10; trial++ {
			tv := make([]int8, 128*nb)
			for i := range tv {
				tv[i] = int8(r.IntN(3) - 1)
			}
			if trial > 5 && nb > 0 { // one bad value: 2, -2, 127 (wraps to -128 when 1 is added) or -128
				tv[r.IntN(len(tv))] = [4]int8{2, -2, 127, -128}[trial-6]
			}
			got, want := make([]byte, 32*nb), make([]byte, 32*nb)
			gok, wok := PackI2S(got, tv), packI2SRef(want, tv)
			if gok != wok {
				t.Fatalf("nb=%d trial %d: ok %v, reference %v", nb, trial, gok, wok)
			}
			if gok && !bytes.Equal(got, want) {
				t.Fatalf("nb=%d trial %d: packed bytes differ (%s)", nb, trial, Impl())
			}
		}
	}
	tv := make([]int8, 128)
	tv[0], tv[32], tv[64], tv[96], tv[1] = 1, 0, -1, 1, -1
	dst := make([]byte, 32)
	if !PackI2S(dst, tv) || dst[0] != 2<<6|1<<4|0<<2|2 || dst[1] != 0<<6|1<<4|1<<2|1 {
		t.Errorf("PackI2S: %08b %08b", dst[0], dst[1])
	}
}

func TestTernarizeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 15))
	for _, n := range []int{0, 1, 31, 32, 33, 100, 4096 + 7} {
		for trial := 0; trial < 6; trial++ {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			inv := float32(1 / (0.8 + r.Float64()))
			switch trial {
			case 1: // products exactly ±0.5 and next to it
				inv = 1
				for i := range x {
					x[i] = [5]float32{0.5, -0.5, math.Nextafter32(0.5, 1), math.Nextafter32(-0.5, -1), 0}[i%5]
				}
			case 2: // NaN, infinities, zeros of both signs
				for i := range x {
					x[i] = [5]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}[i%5]
				}
			case 3: // an infinite or NaN inv
				inv = [2]float32{float32(math.Inf(1)), float32(math.NaN())}[r.IntN(2)]
			}
			got, want := make([]int8, n), make([]int8, n)
			Ternarize(got, x, inv)
			ternarizeRef(want, x, inv)
			if !bytes.Equal(i8bytes(got), i8bytes(want)) {
				t.Fatalf("n=%d trial %d: codes differ (%s)", n, trial, Impl())
			}
		}
	}
	got := make([]int8, 5)
	Ternarize(got, []float32{0.6, -0.6, 0.5, -0.4, 2}, 1)
	if string(i8bytes(got)) != string(i8bytes([]int8{1, -1, 0, 0, 1})) {
		t.Errorf("Ternarize = %v", got)
	}
}

func i8bytes(v []int8) []byte {
	b := make([]byte, len(v))
	for i, c := range v {
		b[i] = byte(c)
	}
	return b
}

// TestBF16ToF16Exhaustive converts every bf16 pattern below the F16 limit
// (both signs) at once and compares with the reference; each pattern at or
// above it must clear the in-range flag wherever it sits.
func TestBF16ToF16Exhaustive(t *testing.T) {
	var raw []byte
	var big []uint16
	for b := 0; b < 1<<16; b++ {
		if b&0x7fff >= 0x4780 {
			big = append(big, uint16(b))
			continue
		}
		raw = append(raw, byte(b), byte(b>>8))
	}
	raw = append(raw, 0x80, 0x3f, 0, 0) // 1, 0: an odd tail of the 32-byte steps
	got, want := make([]byte, len(raw)), make([]byte, len(raw))
	if !BF16ToF16(got, raw) || !bf16ToF16Ref(want, raw) {
		t.Fatal("in-range values reported out of range")
	}
	if !bytes.Equal(got, want) {
		for i := 0; i < len(got); i += 2 {
			if got[i] != want[i] || got[i+1] != want[i+1] {
				t.Fatalf("bf16 %#04x: F16 %#04x, reference %#04x (%s)", uint16(raw[i])|uint16(raw[i+1])<<8,
					uint16(got[i])|uint16(got[i+1])<<8, uint16(want[i])|uint16(want[i+1])<<8, Impl())
			}
		}
	}
	if got[len(got)-4] != 0x00 || got[len(got)-3] != 0x3c {
		t.Errorf("bf16 1.0 → F16 %#02x%02x, want 0x3c00", got[len(got)-3], got[len(got)-4])
	}
	r := rand.New(rand.NewPCG(9, 15))
	for _, b := range big {
		buf := append([]byte(nil), raw[:200]...)
		k := 2 * r.IntN(100)
		buf[k], buf[k+1] = byte(b), byte(b>>8)
		if BF16ToF16(make([]byte, len(buf)), buf) {
			t.Fatalf("bf16 %#04x at byte %d not reported", b, k)
		}
	}
}

func TestUnpackU8MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 15))
	for _, n := range []int{0, 1, 31, 32, 33, 256, 1000} {
		packed := make([]byte, n)
		for i := range packed {
			packed[i] = byte(i) // every byte value, codes 3 included
			if i >= 256 {
				packed[i] = byte(r.Uint32())
			}
		}
		for _, extra := range []int{0, 5} {
			stride := n + extra
			got, want := make([]int8, 4*stride), make([]int8, 4*stride)
			UnpackU8(got, stride, packed)
			unpackU8Ref(want, stride, packed)
			if !bytes.Equal(i8bytes(got), i8bytes(want)) {
				t.Fatalf("n=%d stride %d: codes differ (%s)", n, stride, Impl())
			}
		}
	}
	codes := make([]int8, 4)
	UnpackU8(codes, 1, []byte{0b11_10_01_00})
	if string(i8bytes(codes)) != string(i8bytes([]int8{-1, 0, 1, 1})) {
		t.Errorf("UnpackU8(0b11100100) = %v, want [-1 0 1 1]", codes)
	}
}

// randBF16 returns n random bf16 values (bytes) of magnitudes 2^-30…2^30,
// with the all-ones exponents cleared unless nonFinite.
func randBF16(r *rand.Rand, n int, nonFinite bool) []byte {
	raw := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		b := math.Float32bits(float32(r.NormFloat64()*math.Ldexp(1, r.IntN(60)-30))) >> 16
		if nonFinite && r.IntN(64) == 0 {
			b = uint32(r.Uint32()) | 0x7f80
		}
		raw[2*i], raw[2*i+1] = byte(b), byte(b>>8)
	}
	return raw
}

// TestAbsSumBF16BlocksMatchesReference: the kernel against its reference
// and against DecodeBF16 + AddAbs4x8 from zero (the converter's earlier
// path), for block lengths of torch's cascade (512, 1024) and odd ones,
// with -0, subnormals, and one ±Inf/NaN at chosen places.
func TestAbsSumBF16BlocksMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 15))
	for _, blockLen := range []int{32, 64, 96, 512, 1024} {
		for _, nb := range []int{0, 1, 2, 7} {
			for trial := 0; trial < 6; trial++ {
				n := blockLen * nb
				raw := randBF16(r, n, false)
				if trial == 1 && n > 0 { // -0, the smallest subnormal, the largest finite
					raw[0], raw[1] = 0x00, 0x80
					raw[2*(n/2)], raw[2*(n/2)+1] = 0x01, 0x80
					raw[2*n-2], raw[2*n-1] = 0x7f, 0x7f
				}
				wantBad := false
				if trial >= 2 && n > 0 { // +Inf, -Inf, a NaN, a negative NaN
					k := r.IntN(n)
					v := [4]uint16{0x7f80, 0xff80, 0x7fc1, 0xffff}[trial-2]
					raw[2*k], raw[2*k+1] = byte(v), byte(v>>8)
					wantBad = true
				}
				got, want := make([]float32, 32*nb), make([]float32, 32*nb)
				gb, wb := AbsSumBF16Blocks(got, raw, blockLen), absSumBF16BlocksRef(want, raw, blockLen)
				if gb != wb || gb != wantBad {
					t.Fatalf("blockLen %d nb %d trial %d: non-finite %v, reference %v, want %v", blockLen, nb, trial, gb, wb, wantBad)
				}
				if wantBad {
					continue
				}
				x := make([]float32, n)
				DecodeBF16(x, raw)
				for b := 0; b < nb; b++ {
					var acc [32]float32
					AddAbs4x8(&acc, x[b*blockLen:(b+1)*blockLen])
					for l := range acc {
						g, w := got[32*b+l], want[32*b+l]
						if math.Float32bits(g) != math.Float32bits(w) || math.Float32bits(w) != math.Float32bits(acc[l]) {
							t.Fatalf("blockLen %d nb %d trial %d block %d lane %d: kernel %v, reference %v, AddAbs4x8 %v (%s)", blockLen, nb, trial, b, l, g, w, acc[l], Impl())
						}
					}
				}
			}
		}
	}
	// Two blocks of 32: 1, -2, 3 at lanes 0, 1, 31; then 0.5 at lane 8.
	raw := make([]byte, 128)
	raw[0], raw[1], raw[2], raw[3], raw[62], raw[63] = 0x80, 0x3f, 0x00, 0xc0, 0x40, 0x40
	raw[64+16], raw[64+17] = 0x00, 0x3f
	sums := make([]float32, 64)
	if AbsSumBF16Blocks(sums, raw, 32) || sums[0] != 1 || sums[1] != 2 || sums[31] != 3 || sums[32+8] != 0.5 || sums[32] != 0 {
		t.Errorf("AbsSumBF16Blocks: %v", sums)
	}
}

// TestTernarizePackI2SMatchesReference: the fused kernel against its
// reference and against DecodeBF16 + Ternarize + PackI2S, with products
// exactly ±0.5 and next to it, infinities, NaNs and zeros of both signs.
func TestTernarizePackI2SMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 15))
	for _, nb := range []int{0, 1, 2, 3, 64} {
		for trial := 0; trial < 6; trial++ {
			n := 128 * nb
			raw := randBF16(r, n, trial == 2)
			inv := float32(math.Ldexp(1/(0.8+r.Float64()), r.IntN(40)-20))
			switch trial {
			case 1: // products exactly ±0.5 and next to it (bf16 0.5 = 0x3f00)
				inv = 1
				for i := 0; i < n; i++ {
					v := [6]uint16{0x3f00, 0xbf00, 0x3f01, 0xbf01, 0x3eff, 0xbeff}[i%6]
					raw[2*i], raw[2*i+1] = byte(v), byte(v>>8)
				}
			case 3: // zeros of both signs
				for i := 0; i < n; i++ {
					v := [2]uint16{0, 0x8000}[i%2]
					raw[2*i], raw[2*i+1] = byte(v), byte(v>>8)
				}
			case 4: // an infinite or NaN inv
				inv = [2]float32{float32(math.Inf(1)), float32(math.NaN())}[r.IntN(2)]
			}
			got, want := make([]byte, n/4), make([]byte, n/4)
			TernarizePackI2S(got, raw, inv)
			ternarizePackI2SRef(want, raw, inv)
			x, codes, two := make([]float32, n), make([]int8, n), make([]byte, n/4)
			DecodeBF16(x, raw)
			Ternarize(codes, x, inv)
			if !PackI2S(two, codes) {
				t.Fatal("PackI2S refused ternary codes")
			}
			if !bytes.Equal(got, want) || !bytes.Equal(want, two) {
				t.Fatalf("nb %d trial %d: packed bytes differ from the reference or the two-step path (%s)", nb, trial, Impl())
			}
		}
	}
	// 0.75 → +1 at position 0 (bits 7-6), -0.75 → -1 at 32 (bits 5-4),
	// 0.25 → 0 at 64, 1 → +1 at 96: byte 0 = 2<<6 | 0<<4 | 1<<2 | 2.
	raw := make([]byte, 256)
	for i := 0; i < 128; i++ {
		raw[2*i+1] = 0x80 // -0: code 0
	}
	raw[0], raw[1], raw[64], raw[65], raw[128], raw[129], raw[192], raw[193] = 0x40, 0x3f, 0x40, 0xbf, 0x80, 0x3e, 0x80, 0x3f
	dst := make([]byte, 32)
	TernarizePackI2S(dst, raw, 1)
	if dst[0] != 2<<6|0<<4|1<<2|2 || dst[1] != 0x55 {
		t.Errorf("TernarizePackI2S: %08b %08b", dst[0], dst[1])
	}
}
