package gpupack_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gpupack"
)

// Int2Address places weight (n, k) of a [N, K] matrix in the int8 [N, K/4]
// tensor: tiles of 16 rows × 32 columns, 128 bytes each.
func ExampleInt2Address() {
	for _, nk := range [][2]int{{0, 0}, {0, 4}, {0, 16}, {8, 0}, {16, 0}} {
		b, shift := gpupack.Int2Address(nk[0], nk[1], 2560)
		fmt.Printf("(%d, %d) → byte %d, bits %d–%d\n", nk[0], nk[1], b, shift, shift+1)
	}
	// Output:
	// (0, 0) → byte 0, bits 0–1
	// (0, 4) → byte 0, bits 2–3
	// (0, 16) → byte 32, bits 0–1
	// (8, 0) → byte 64, bits 0–1
	// (16, 0) → byte 10240, bits 0–1
}
