package runtime

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// BenchmarkI2SMatVec: one token through a 2560×6912 I2_S matrix (the
// BitNet b1.58 2B-4T ffn_up shape, ne [2560, 6912]); MB/s is packed weight
// bytes (K·M/4) per second.
func BenchmarkI2SMatVec(b *testing.B) {
	const k, m = 2560, 6912
	data, _ := randomI2S(k, m, 0.5, 1)
	w, err := NewMatrix(gguf.TypeI2S, k, m, data)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, m)
	var a Activation
	for _, th := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[th], func(b *testing.B) {
			b.SetBytes(k * m / 4)
			b.ReportAllocs()
			for b.Loop() {
				w.MatVec(dst, x, &a, th)
			}
		})
	}
}

// BenchmarkDecodeTiny: greedy decoding on the tiny golden I2_S model; reports
// tokens/s and the memory allocated per token.
func BenchmarkDecodeTiny(b *testing.B) {
	m := openModel(b, filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"), 1)
	const ctx = 256
	s := m.NewSession(ctx)
	tok := int32(1)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if s.Pos() == ctx {
			s.Reset()
		}
		l, err := s.Eval(tok)
		if err != nil {
			b.Fatal(err)
		}
		tok = Argmax(l)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}
