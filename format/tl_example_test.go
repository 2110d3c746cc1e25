package format_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
)

// ExampleTransformTL2 packs a 32×128 ternary weight for TL2 (BM 32, BK 96:
// three_k 96, two_k 32) and decodes it back.
func ExampleTransformTL2() {
	const m, k = 32, 128
	t := make([]int8, m*k)
	for i := range t {
		t[i] = int8(i%3) - 1
	}
	data, err := format.TransformTL2(t, m, k, 32, 96, 0.5)
	if err != nil {
		panic(err)
	}
	back := make([]int8, m*k)
	scale, err := format.UntransformTL2(back, data, m, k, 32, 96)
	if err != nil {
		panic(err)
	}
	same := true
	for i := range t {
		same = same && t[i] == back[i]
	}
	// 96·32/6 nibbles + 96·32/24 signs + 32·32/4 pairs = 512+128+256 bytes,
	// zero-padded to pad32(gguf.TL2DataBytes(128, 32)) = pad32(1195) = 1216,
	// then the 32-byte scale slot.
	fmt.Println(len(data), scale, same)
	// Output: 1248 0.5 true
}

// ExampleTransformTL1 packs a 64×64 ternary weight for TL1 (BM 64, BK 64, bm 32).
func ExampleTransformTL1() {
	t := make([]int8, 64*64)
	t[0], t[1] = 1, -1 // row 0, pair 0: index 3·1 + (−1) + 4 = 6
	data, err := format.TransformTL1(t, 64, 64, 64, 64, 32, 2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes, first byte %#02x\n", len(data), data[0])
	// Output: 1056 bytes, first byte 0x64
}

func benchTernary(n int) []int8 {
	r := rand.New(rand.NewPCG(1, 1))
	t := make([]int8, n)
	for i := range t {
		t[i] = int8(r.IntN(3)) - 1
	}
	return t
}

func BenchmarkTransformTL1(b *testing.B) {
	const m, k = 1536, 4096
	t := benchTernary(m * k)
	b.SetBytes(m * k)
	for b.Loop() {
		if _, err := format.TransformTL1(t, m, k, 256, 128, 32, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransformTL2(b *testing.B) {
	const m, k = 1536, 4096
	t := benchTernary(m * k)
	b.SetBytes(m * k)
	for b.Loop() {
		if _, err := format.TransformTL2(t, m, k, 256, 96, 1); err != nil {
			b.Fatal(err)
		}
	}
}
