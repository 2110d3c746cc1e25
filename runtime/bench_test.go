package runtime

import (
	"fmt"
	"math/rand/v2"
	"os"
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

// BenchmarkPerplexityLarge: llama-perplexity's -c 128 --chunks 4 on the
// full-size bitnet_b1_58-large I2_S file (testdata/golden/fullsize/README.md
// rebuilds it) over the first 4·128 tokens of ids 1…; it runs only when
// BITNET_FULLSIZE_DIR holds large-i2_s.gguf. Figures: docs/performance.md.
func BenchmarkPerplexityLarge(b *testing.B) {
	dir := os.Getenv("BITNET_FULLSIZE_DIR")
	if dir == "" {
		b.Skip("set BITNET_FULLSIZE_DIR to a directory holding large-i2_s.gguf")
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			m := openModel(b, filepath.Join(dir, "large-i2_s.gguf"), th)
			ids := make([]int32, 4*128)
			for i := range ids {
				ids[i] = int32(1 + (i*7919)%(m.Params.NVocab-1))
			}
			for b.Loop() {
				if _, err := Perplexity(m, ids, 128, 4, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLargeTests: llama-bench's pp128 (one batch, logits of the last
// token) and tg32 (32 one-token calls) on the full-size bitnet_b1_58-large
// I2_S file (as BenchmarkPerplexityLarge), at 1 and 2 threads; reports
// tokens/s. The bench command runs the same tests; docs/performance.md
// sets both beside llama-bench.
func BenchmarkLargeTests(b *testing.B) {
	dir := os.Getenv("BITNET_FULLSIZE_DIR")
	if dir == "" {
		b.Skip("set BITNET_FULLSIZE_DIR to a directory holding large-i2_s.gguf")
	}
	for _, th := range []int{1, 2} {
		m := openModel(b, filepath.Join(dir, "large-i2_s.gguf"), th)
		s := m.NewSession(160)
		ids := make([]int32, 128)
		for i := range ids {
			ids[i] = int32(1 + (i*7919)%(m.Params.NVocab-1))
		}
		b.Run(fmt.Sprintf("pp128/threads=%d", th), func(b *testing.B) {
			for b.Loop() {
				s.Reset()
				if _, err := s.EvalBatch(ids, len(ids)-1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(128*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
		b.Run(fmt.Sprintf("tg32/threads=%d", th), func(b *testing.B) {
			for b.Loop() {
				s.Reset()
				for _, id := range ids[:32] {
					if _, err := s.Eval(id); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(32*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkI2SMatMul: 128 token rows through a 1536×1536 I2_S matrix (the
// bitnet_b1_58-large attention shape), the batched path of prompt and
// perplexity evaluation; MB/s is packed weight bytes × tokens per second,
// comparable with BenchmarkI2SMatVec.
func BenchmarkI2SMatMul(b *testing.B) {
	const k, m, n = 1536, 1536, 128
	data, _ := randomI2S(k, m, 0.5, 1)
	w, err := NewMatrix(gguf.TypeI2S, k, m, data)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	xs, dst := make([][]float32, n), make([][]float32, n)
	for t := range xs {
		xs[t], dst[t] = make([]float32, k), make([]float32, m)
		for i := range xs[t] {
			xs[t][i] = float32(r.NormFloat64())
		}
	}
	var sc batchScratch
	b.SetBytes(k * m / 4 * n)
	for b.Loop() {
		w.matMul(dst, xs, &sc, 1)
	}
}

// BenchmarkQ8KMatVec: one token through a 2560×6912 matrix (the 2B-4T
// ffn_up shape) of each Q8_K-activation type and of Q2_0 (Q8_0
// activations): tq.go and q6k.go, q2_0.go (activation quantization
// included); MB/s is weight bytes per second.
// BenchmarkI2SMatVec is the same shape in I2_S.
func BenchmarkQ8KMatVec(b *testing.B) {
	const k, m = 2560, 6912
	r := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, m)
	for _, typ := range []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ6_K, gguf.TypeQ2_0} {
		n, err := gguf.NBytes(typ, []uint64{k, m})
		if err != nil {
			b.Fatal(err)
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		// Finite block scales, as in a real file (random bytes would make
		// some NaN, and the kernels redo a NaN row in Go).
		geo := map[gguf.Type][2]int{ // block bytes, offset of the f16 scale
			gguf.TypeTQ1_0: {54, 52}, gguf.TypeTQ2_0: {66, 64}, gguf.TypeQ6_K: {210, 208}, gguf.TypeQ2_0: {18, 0},
		}[typ]
		for p := geo[1]; p+1 < len(data); p += geo[0] {
			data[p+1] = byte(0x20 + r.IntN(8)) // f16 in [2⁻⁷, 2⁻⁵)
		}
		w, err := NewMatrix(typ, k, m, data)
		if err != nil {
			b.Fatal(err)
		}
		var a Activation
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				w.MatVec(dst, x, &a, 1)
			}
		})
	}
}

// BenchmarkIQBNMatVec: one token through a 2560×6912 IQ2_BN / IQ1_BN
// matrix (the 2B-4T ffn_up shape) with ik_llama.cpp's Q8_K64 arithmetic
// (iqbn.go, the group sums from internal/kernels); MB/s is the stored
// tensor bytes per second.
func BenchmarkIQBNMatVec(b *testing.B) {
	const k, m = 2560, 6912
	r := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, m)
	for _, typ := range []gguf.Type{gguf.TypeIQ2BN, gguf.TypeIQ1BN} {
		n, err := gguf.NBytes(typ, []uint64{k, m})
		if err != nil {
			b.Fatal(err)
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(243))
		}
		rowB := int(n) / m
		for row := 0; row < m; row++ {
			// Row scale 1 (f32 1.0 for IQ2_BN, f16 0x3C00 for IQ1_BN).
			if typ == gguf.TypeIQ2BN {
				copy(data[row*rowB:], []byte{0, 0, 0x80, 0x3f})
			} else {
				copy(data[row*rowB:], []byte{0, 0x3c})
			}
		}
		w, err := NewMatrix(typ, k, m, data)
		if err != nil {
			b.Fatal(err)
		}
		var a Activation
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", typ, th), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					w.MatVec(dst, x, &a, th)
				}
			})
		}
	}
}

// BenchmarkFileTG: tg32 (32 one-token Eval calls from an empty cache) on
// the GGUF file named by BITNET_BENCH_GGUF (any weight type, the file's
// home arithmetic), at 1 and 2 threads; reports tokens/s. It is the tg32
// of the bench command, for profiling one type (docs/performance.md).
func BenchmarkFileTG(b *testing.B) {
	path := os.Getenv("BITNET_BENCH_GGUF")
	if path == "" {
		b.Skip("set BITNET_BENCH_GGUF to a GGUF model file")
	}
	for _, th := range []int{1, 2} {
		m := openModel(b, path, th)
		s := m.NewSession(160)
		ids := make([]int32, 128)
		for i := range ids {
			ids[i] = int32(1 + (i*7919)%(m.Params.NVocab-1))
		}
		b.Run(fmt.Sprintf("tg32/threads=%d", th), func(b *testing.B) {
			for b.Loop() {
				s.Reset()
				for _, id := range ids[:32] {
					if _, err := s.Eval(id); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(32*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
