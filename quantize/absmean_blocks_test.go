package quantize

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// TestAbsMeanFromBlocksBitIdentical: block sums computed from bf16 bytes
// (kernels.AbsSumBF16Blocks) and the decoded tail give AbsMean's bits, for
// sizes around every boundary of the cascade: whole blocks only, each carry
// level (16, 256, 4096 blocks), leftover rows, vectors and scalars, and the
// change of level width at 2^19 rows (2^24 values).
func TestAbsMeanFromBlocksBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	sizes := []int{1024, 1025, 1024 + 31, 1024 + 32, 1024 + 33, 4095, 512 * 16, 512*16 + 512, 512*256 - 1,
		512 * 256, 512*256 + 40, 512*4096 + 7, 1536 * 1536, 1536 * 4096, 4096*1536 + 100, 1<<24 - 32, 1 << 24, 1<<24 + 8, 1<<24 + 1029}
	for _, n := range sizes {
		raw := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			b := math.Float32bits(float32(r.NormFloat64()*0.02)) >> 16
			raw[2*i], raw[2*i+1] = byte(b), byte(b>>8)
		}
		x := make([]float32, n)
		kernels.DecodeBF16(x, raw)
		want := AbsMean(x)
		blockLen, nb, ok := AbsMeanBlocks(n)
		if !ok {
			t.Fatalf("n=%d: AbsMeanBlocks not ok", n)
		}
		sums := make([]float32, 32*nb)
		if kernels.AbsSumBF16Blocks(sums, raw[:2*nb*blockLen], blockLen) {
			t.Fatalf("n=%d: finite input reported non-finite", n)
		}
		got := AbsMeanFromBlocks(n, sums, x[nb*blockLen:])
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("n=%d (block %d, %d blocks): %v, AbsMean %v", n, blockLen, nb, got, want)
		}
	}
	if _, _, ok := AbsMeanBlocks(1023); ok {
		t.Error("AbsMeanBlocks(1023) ok, want the AbsMean fallback")
	}
	if l, nb, _ := AbsMeanBlocks(1536 * 4096); l != 512 || nb != 12288 {
		t.Errorf("AbsMeanBlocks(1536·4096) = %d, %d; want 512, 12288", l, nb)
	}
	if l, _, _ := AbsMeanBlocks(1 << 25); l != 1024 {
		t.Errorf("AbsMeanBlocks(2^25) block %d, want 1024", l)
	}
}
