package quantize_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

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
