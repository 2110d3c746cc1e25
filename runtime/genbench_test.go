package runtime

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// BenchmarkLargeGenStream is the figure of generation against the memory
// (docs/performance.md, "Generation at the kernels' rate"): on the
// full-size bitnet_b1_58-large I2_S file (BITNET_FULLSIZE_DIR, as
// BenchmarkLargeTests) it measures in one run, round after round, at the
// same thread count and on the same worker team (internal/parallel):
//
//   - memread: a 128 MiB buffer read once by kernels.AddAbs4x8 (a few
//     vector operations per 32 bytes, far below the memory's rate), as
//     internal/kernels' BenchmarkMemoryRead;
//   - kernels: the products of one token with nothing between them:
//     kernels.DotI2SRows over every I2_S projection of every layer and
//     kernels.DotF16Rows over the F16 head, the calls and row split
//     Matrix.matVecPrepared makes, on fixed activations; as bytes of
//     weights and head per second;
//   - tg32: llama-bench's tg32 (32 Session.Eval calls after a Reset), as
//     tokens/s and as (weight + head bytes per token) × tokens/s.
//
// The 32 kernels passes and the 32 tokens of a round alternate, pass then
// token, each timed on its own, so both see the same memory. Each metric is
// the median over the rounds (b.N, one round each); the ratio tg32-GB/s ÷
// kernels-GB/s (tg32/kern-%) is the figure of the generation
// target. The log gives the CPU's model and flags and the
// kernels' implementation.
func BenchmarkLargeGenStream(b *testing.B) {
	dir := os.Getenv("BITNET_FULLSIZE_DIR")
	if dir == "" {
		b.Skip("set BITNET_FULLSIZE_DIR to a directory holding large-i2_s.gguf")
	}
	if !kernels.Accelerated() {
		b.Skip("no assembly kernels (purego or no AVX2/F16C): generation takes the table kernels, not DotI2SRows")
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			b.Logf("cpu: %s; kernels: %s", cpuModel(), kernels.Impl())
			m := openModel(b, filepath.Join(dir, "large-i2_s.gguf"), th)
			g := newGenStream(b, m, th)
			s := m.NewSession(64)
			ids := make([]int32, 32)
			for i := range ids {
				ids[i] = int32(1 + (i*7919)%(m.Params.NVocab-1))
			}
			// tg32 runs llama-bench's tg32 (Reset, then 32 tokens), each
			// token right after one kernels-only pass, and returns the
			// time of the 32 tokens and of the 32 passes: token and pass
			// see the same memory (this VM's read rate moves by a quarter
			// within a second, which moved the ratio of a round of 32
			// passes followed by 32 tokens by ±5 points). The pass leaves
			// the caches as a token's own products do (256 MiB streamed
			// through them), so each token starts as it would in tg32.
			tg32 := func() (tok, kern time.Duration) {
				t0 := time.Now()
				s.Reset()
				tok = time.Since(t0)
				for _, id := range ids {
					t0 := time.Now()
					g.kernels()
					t1 := time.Now()
					if _, err := s.Eval(id); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					kern += t1.Sub(t0)
					tok += t2.Sub(t1)
				}
				return tok, kern
			}
			// Warm-up: the file's pages, the team, the buffers.
			g.memRead()
			tg32()
			var mem, kern, gen []float64 // GB/s per round
			var tps []float64
			for b.Loop() {
				t0 := time.Now()
				const memPasses = 4
				for range memPasses {
					g.memRead()
				}
				mem = append(mem, memPasses*float64(len(g.buf))*4/time.Since(t0).Seconds()/1e9)
				tok, kd := tg32()
				kern = append(kern, float64(len(ids))*float64(g.bytes)/kd.Seconds()/1e9)
				tps = append(tps, float64(len(ids))/tok.Seconds())
				gen = append(gen, tps[len(tps)-1]*float64(g.bytes)/1e9)
			}
			b.ReportMetric(median(mem), "memread-GB/s")
			b.ReportMetric(median(kern), "kernels-GB/s")
			b.ReportMetric(median(gen), "tg32-GB/s")
			b.ReportMetric(median(tps), "tg32-t/s")
			ratios := make([]float64, len(gen))
			for i := range gen {
				ratios[i] = gen[i] / kern[i]
			}
			b.ReportMetric(100*median(ratios), "tg32/kern-%")
			b.ReportMetric(100*median(kern)/median(mem), "kern/mem-%")
			b.ReportMetric(float64(g.bytes)/(1<<20), "MiB/token")
		})
	}
}

// genStream holds the kernels-only pass of BenchmarkLargeGenStream.
type genStream struct {
	th    int
	i2s   []*Matrix // every projection of every layer, in graph order
	head  *Matrix   // F16
	bytes int64     // weight and head bytes read per token
	acts  map[int]*Activation
	xh    []float32 // the head's F16-rounded input
	dst   []float32
	buf   []float32 // memRead's buffer
	acc   [][32]float32
}

func newGenStream(b *testing.B, m *Model, th int) *genStream {
	g := &genStream{th: th, head: m.output, acts: map[int]*Activation{}}
	if g.head.Type != gguf.TypeF16 {
		b.Skipf("LM head is %s, not F16", g.head.Type)
	}
	r := rand.New(rand.NewPCG(7, 7))
	rowsMax := g.head.M
	for li := range m.layers {
		for p := range numProj {
			w := m.layers[li].matrix(p)
			if w.Type != gguf.TypeI2S {
				b.Skipf("layer %d projection %d is %s, not I2_S", li, p, w.Type)
			}
			g.i2s = append(g.i2s, w)
			g.bytes += int64(w.M) * int64(w.rowB)
			rowsMax = max(rowsMax, w.M)
			if g.acts[w.K] == nil {
				x := make([]float32, w.K)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				a := new(Activation)
				w.Prepare(a, x)
				g.acts[w.K] = a
			}
		}
	}
	g.bytes += 2 * int64(g.head.M) * int64(g.head.K)
	g.xh = make([]float32, g.head.K)
	for i := range g.xh {
		g.xh[i] = float32(r.NormFloat64())
	}
	kernels.RoundF16(g.xh, g.xh)
	g.dst = make([]float32, rowsMax)
	g.buf = make([]float32, 128<<20/4)
	for i := range g.buf {
		g.buf[i] = float32(i)
	}
	g.acc = make([][32]float32, th)
	return g
}

// kernels streams the products of one token: DotI2SRows over every
// projection, DotF16Rows over the head, split as matVecPrepared splits
// them.
func (g *genStream) kernels() {
	for _, w := range g.i2s {
		a := g.acts[w.K]
		q, sumf, dst := a.q[:w.kPad], float32(a.sum), g.dst[:w.M]
		parallel.ForHot(w.M, g.th, func(lo, hi int) {
			kernels.DotI2SRows(dst[lo:hi], w.raw[lo*w.rowB:hi*w.rowB], q, sumf, a.s, w.Scale)
		})
	}
	h, dst := g.head, g.dst[:g.head.M]
	parallel.ForHot(h.M, g.th, func(lo, hi int) {
		kernels.DotF16Rows(dst[lo:hi], h.u16[lo*h.K:hi*h.K], g.xh)
	})
}

// memRead reads the 128 MiB buffer once, split over the team.
func (g *genStream) memRead() {
	parallel.RangeHot(len(g.buf)/32, g.th, func(w, lo, hi int) {
		kernels.AddAbs4x8(&g.acc[w], g.buf[lo*32:hi*32])
	})
}

// median returns the median of v (the mean of the middle two for an even
// count); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuModel names the CPU (/proc/cpuinfo's model name where there is one)
// and the x86 flags the kernels choose by.
func cpuModel() string {
	name := "unknown model"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				name = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	var flags []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"f16c", cpu.X86.HasF16C},
		{"avx512f", cpu.X86.HasAVX512F}, {"avx512bw", cpu.X86.HasAVX512BW}, {"avx512vl", cpu.X86.HasAVX512VL},
		{"avx512vnni", cpu.X86.HasAVX512VNNI}, {"avx512vbmi", cpu.X86.HasAVX512VBMI}, {"avx512bf16", cpu.X86.HasAVX512BF16},
		{"avxvnni", cpu.X86.HasAVXVNNI},
	} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	return fmt.Sprintf("%s [%s]", name, strings.Join(flags, " "))
}
