package runtime

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// BenchmarkPairTG runs tg32 (as BenchmarkFileTG) on two GGUF files in turn
// in one process, BITNET_BENCH_GGUF_A and BITNET_BENCH_GGUF_B, one tg32 of
// each per round, and reports each file's median tokens/s and the median of
// the per-round ratios B/A: a load that drifts over seconds moves both files
// of a round alike, so the ratio is steadier than whole processes run one
// after the other on a shared machine.
func BenchmarkPairTG(b *testing.B) {
	pa, pb := os.Getenv("BITNET_BENCH_GGUF_A"), os.Getenv("BITNET_BENCH_GGUF_B")
	if pa == "" || pb == "" {
		b.Skip("set BITNET_BENCH_GGUF_A and BITNET_BENCH_GGUF_B to GGUF model files")
	}
	for _, th := range []int{1, 2} {
		var ss [2]*Session
		var ids [2][]int32
		for i, p := range []string{pa, pb} {
			m := openModel(b, p, th)
			ss[i] = m.NewSession(160)
			ids[i] = make([]int32, 32)
			for j := range ids[i] {
				ids[i][j] = int32(1 + (j*7919)%(m.Params.NVocab-1))
			}
		}
		tg := func(i int) float64 {
			ss[i].Reset()
			t0 := time.Now()
			for _, id := range ids[i] {
				if _, err := ss[i].Eval(id); err != nil {
					b.Fatal(err)
				}
			}
			return 32 / time.Since(t0).Seconds()
		}
		b.Run(fmt.Sprintf("tg32/threads=%d", th), func(b *testing.B) {
			tg(0) // warm-up
			tg(1)
			var ta, tb, ratio []float64
			for b.Loop() {
				a := tg(0)
				c := tg(1)
				ta, tb, ratio = append(ta, a), append(tb, c), append(ratio, c/a)
			}
			med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
			b.ReportMetric(med(ta), "A-tokens/s")
			b.ReportMetric(med(tb), "B-tokens/s")
			b.ReportMetric(med(ratio), "B/A")
		})
	}
}
