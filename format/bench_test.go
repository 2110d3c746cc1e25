package format_test

import (
	"math/rand/v2"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
)

// BenchmarkEncode / BenchmarkDecode: one 2B-4T ffn_up-sized tensor
// ([6912, 2560]) per iteration, in every format; bytes = weights.
func BenchmarkEncode(b *testing.B) {
	const k, m = 2560, 6912
	r := rand.New(rand.NewPCG(1, 2))
	codes := make([]int8, k*m)
	for i := range codes {
		codes[i] = int8(r.IntN(3)) - 1
	}
	for _, f := range []format.Format{format.I2S{}, format.I2S{Layout: format.LayoutARM}, format.I2S{Layout: format.LayoutX86_1x4}, format.TQ1_0{}, format.TQ2_0{}, format.IQ1BN{}, format.IQ2BN{}} {
		sc, _ := format.Regroup(codes, []float32{0.5}, 0, f.ScaleGroup(k))
		nb, _ := f.Bytes(k, m)
		dst := make([]byte, nb)
		b.Run(f.Name(), func(b *testing.B) {
			b.SetBytes(k * m)
			for b.Loop() {
				if err := f.Encode(dst, codes, sc, k, m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(f.Name()+"/decode", func(b *testing.B) {
			b.SetBytes(k * m)
			for b.Loop() {
				if _, err := f.Decode(codes, dst, k, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
