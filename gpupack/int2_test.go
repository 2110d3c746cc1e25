package gpupack

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// packSteps packs codes the way gpu/pack_weight.py describes it, step by
// step (a separate derivation from Int2Address): permute each 16×32 tile
// through the shared-memory load map, pack four 2-bit values per byte in
// order, then interleave the 16 values of every int32 so that value o goes
// to bit 8·(o%4) + 2·(o/4).
func packSteps(codes []int8, n, k int) []byte {
	// 1. permutated[bn][bk][i][j] = w[bn·16 + row(i,j)][bk·32 + col(i,j)]
	perm := make([]byte, n*k)
	at := 0
	for bn := range n / 16 {
		for bk := range k / 32 {
			for i := range 16 {
				for j := range 32 {
					tid := i*2 + j/16
					row := (tid/16)*8 + tid%8
					col := j%16 + 16*((tid%16)/8)
					perm[at] = byte(codes[(bn*16+row)*k+bk*32+col] + 2)
					at++
				}
			}
		}
	}
	// 2. four values per byte, value q of the four at bits 2q
	comp := make([]byte, n*k/4)
	for i := range comp {
		for q := range 4 {
			comp[i] |= perm[4*i+q] << (2 * q)
		}
	}
	// 3. interleave inside each little-endian int32
	out := make([]byte, len(comp))
	for w := 0; w < len(comp); w += 4 {
		in := binary.LittleEndian.Uint32(comp[w:])
		var v uint32
		for o := range 16 {
			v |= (in >> (2 * o) & 3) << ((o%4)*8 + (o/4)*2)
		}
		binary.LittleEndian.PutUint32(out[w:], v)
	}
	return out
}

func randomCodes(rng *rand.Rand, n int) []int8 {
	c := make([]int8, n)
	for i := range c {
		c[i] = int8(rng.IntN(3)) - 1
	}
	return c
}

// TestInt2PackDecode (acceptance c): for random shapes with N % 16 = 0 and
// K % 32 = 0, PackInt2 equals the step-by-step packing of pack_weight.py and
// UnpackInt2 (the kernel's address arithmetic) gives back every code.
func TestInt2PackDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	shapes := [][2]int{{16, 32}, {32, 64}, {3840, 64}, {16, 2560}}
	for range 40 {
		shapes = append(shapes, [2]int{16 * (1 + rng.IntN(24)), 32 * (1 + rng.IntN(24))})
	}
	for _, s := range shapes {
		n, k := s[0], s[1]
		codes := randomCodes(rng, n*k)
		got := make([]byte, n*k/4)
		PackInt2(got, codes, n, k)
		if want := packSteps(codes, n, k); !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("[%d, %d]: byte %d is %08b, pack_weight.py's steps give %08b", n, k, i, got[i], want[i])
		}
		back := make([]int8, n*k)
		if err := UnpackInt2(back, got, n, k); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back, codes) {
			t.Fatalf("[%d, %d]: decoded codes differ", n, k)
		}
	}
}

// TestInt2AddressExamples pins a few addresses worked out by hand from A4's
// closed form.
func TestInt2AddressExamples(t *testing.T) {
	for _, c := range []struct {
		n, k, K int
		b       int
		shift   uint
	}{
		{0, 0, 32, 0, 0},
		{0, 4, 32, 0, 2},         // v=4: byte 0, shift 2
		{0, 16, 32, 32, 0},       // c/16=1: tid 8
		{8, 0, 32, 64, 0},        // r/8=1: tid 16
		{15, 31, 32, 127, 6},     // tid 16+8+7=31, v=15
		{16, 0, 64, 256, 0},      // second tile row: 16·64/4
		{0, 32, 64, 128, 0},      // second tile of the row
		{3, 13, 2560, 12 + 1, 6}, // tid 3, v 13: byte 12+1, shift 6
	} {
		b, sh := Int2Address(c.n, c.k, c.K)
		if b != c.b || sh != c.shift {
			t.Errorf("Int2Address(%d, %d, %d) = %d, %d; want %d, %d", c.n, c.k, c.K, b, sh, c.b, c.shift)
		}
	}
}

func TestUnpackInt2Errors(t *testing.T) {
	if err := UnpackInt2(make([]int8, 16*30), make([]byte, 16*30/4), 16, 30); err == nil {
		t.Error("K=30 accepted")
	}
	if err := UnpackInt2(make([]int8, 16*32), make([]byte, 16*32/4), 16, 32); err == nil {
		t.Error("code 0 (all-zero bytes) accepted")
	}
}
