package quantize

import (
	"math"
	"math/rand/v2"
	"testing"
)

// AbsMeanParallel has AbsMean's bits for sizes around the cascade boundaries
// and any thread count.
func TestAbsMeanParallelBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{1 << 18, 1<<18 + 7, 1<<20 + 33, 2560 * 640, 3 << 18, 1536 * 4096, 4096*1536 + 100} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 0.02)
		}
		want := AbsMean(x)
		for _, th := range []int{2, 3, 8} {
			if got := AbsMeanParallel(x, th); math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("n=%d threads=%d: %v, want %v", n, th, got, want)
			}
		}
	}
}

func BenchmarkAbsMeanParallel(b *testing.B) {
	x := make([]float32, 1536*4096)
	for i := range x {
		x[i] = float32(i%97) * 0.001
	}
	b.SetBytes(int64(4 * len(x)))
	for i := 0; i < b.N; i++ {
		AbsMeanParallel(x, 2)
	}
}
