package runtime_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// The conversion spec's worked example (§4.4), padded to one 128-element
// I2_S block: weights t = [1, −1, 0, −1] × 0.0325, activations
// [1, −0.5, 0.25, 2].
func ExampleMatrix_MatVec() {
	const k = 128
	codes := make([]byte, k)
	for i := range codes {
		codes[i] = 1 // t = 0
	}
	copy(codes, []byte{2, 0, 1, 0}) // t = +1, −1, 0, −1
	data := make([]byte, k/4+32)
	for j := 0; j < 32; j++ {
		data[j] = codes[j]<<6 | codes[j+32]<<4 | codes[j+64]<<2 | codes[j+96]
	}
	binary.LittleEndian.PutUint32(data[k/4:], math.Float32bits(0.0325)) // the per-tensor scale
	w, err := runtime.NewMatrix(gguf.TypeI2S, k, 1, data)
	if err != nil {
		panic(err)
	}
	x := make([]float32, k)
	copy(x, []float32{1, -0.5, 0.25, 2})
	y := make([]float32, 1)
	w.MatVec(y, x, nil, 1)
	fmt.Printf("scale %.4f, y %.7f (float reference -0.01625)\n", w.Scale, y[0])
	// Output: scale 0.0325, y -0.0158661 (float reference -0.01625)
}

func ExampleQuantizeI8S() {
	x := []float32{1.0, -0.5, 0.25, 2.0}
	q := make([]int8, len(x))
	scale, sum := runtime.QuantizeI8S(q, x)
	fmt.Println(scale, q, sum)
	// Output: 63.5 [64 -32 16 127] 175
}

func ExamplePool() {
	hiddens := [][]float32{{1, 2}, {3, 4}, {5, 0}}
	fmt.Println(runtime.Pool(hiddens, runtime.PoolMean), runtime.Pool(hiddens, runtime.PoolLast))
	// Output: [3 2] [5 0]
}

func ExampleArgmax() {
	fmt.Println(runtime.Argmax([]float32{0.5, 2, -1, 2}))
	// Output: 1
}
