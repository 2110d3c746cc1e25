package quantize_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// The two reference patterns of spec conversion.md §3.1: all-zero weights
// pack to 0x55, and codes c[j] = j mod 3 start 24 49 92.
func ExamplePackI2S() {
	zeros := make([]int8, 128)
	packed := make([]byte, 32)
	quantize.PackI2S(packed, zeros)
	fmt.Printf("% x\n", packed[:4])

	t := make([]int8, 128)
	for j := range t {
		t[j] = int8(j%3) - 1 // code j mod 3 ⇒ ternary (j mod 3) − 1
	}
	quantize.PackI2S(packed, t)
	fmt.Printf("% x\n", packed[:6])
	// Output:
	// 55 55 55 55
	// 24 49 92 24 49 92
}

// The worked example of spec conversion.md §4.4.
func ExampleTernarize() {
	x := []float32{0.05, -0.02, 0, -0.06}
	codes := make([]int8, len(x))
	scale, absMean := quantize.Ternarize(codes, x)
	fmt.Println(codes)
	fmt.Printf("scale %.4f absMean %.4f\n", scale, absMean)
	// Output:
	// [1 -1 0 -1]
	// scale 0.0325 absMean 0.0325
}

func ExampleUnpackPackedU8() {
	// One packed byte column, 1 row: bits 1-0 = 2 (+1), 3-2 = 1 (0),
	// 5-4 = 0 (−1), 7-6 = 3 (clamped to +1).
	packed := []byte{0b11_00_01_10}
	dst := make([]int8, 4)
	quantize.UnpackPackedU8(dst, packed, 1, 1)
	fmt.Println(dst)
	// Output: [1 0 -1 1]
}

func ExampleF16Overflow() {
	maxAbs, bad := quantize.F16Overflow([]float32{1, -70000, 3})
	fmt.Println(maxAbs, bad)
	// Output: 70000 true
}
