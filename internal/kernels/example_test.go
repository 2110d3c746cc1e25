package kernels_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// One I2_S row of 128 weights against an activation: quantize the
// activation, take the integer dot, subtract Σq (the codes are weight+1) and
// scale back, as the runtime's Matrix.Row does.
func ExampleDotI2S() {
	t := make([]int8, 128) // ternary weights
	x := make([]float32, 128)
	for i := range t {
		t[i] = int8(i%3) - 1
		if i%7 == 0 {
			t[i] = 1
		}
		x[i] = float32(i%5) - 2
	}
	row := make([]byte, 32)
	if !kernels.PackI2S(row, t) {
		panic("not ternary")
	}
	q := make([]int8, 128)
	scale, sum := kernels.QuantizeI8S(q, x)
	dot := kernels.DotI2S(row, q)
	var exact float32
	for i := range t {
		exact += float32(t[i]) * x[i]
	}
	fmt.Printf("scale %.2f, Σq %d, Σcode·q %d\n", scale, sum, dot)
	fmt.Printf("dot %.4f, exact %.0f\n", float32(dot-sum)/scale, exact)
	// Output:
	// scale 63.50, Σq -191, Σcode·q -573
	// dot -6.0157, exact -6
}
