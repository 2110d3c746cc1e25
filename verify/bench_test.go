package verify

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// BenchmarkReference runs the float reference alone, with synthesized
// weights (synthWeights), at the full size of real models (all layers) over
// 35 positions (the default prompt plus 8 generated tokens), and reports the
// process's peak RSS (Linux VmHWM). It shows the reference's own memory is
// about one matrix's codes plus a block plus the activations, whatever the
// model: run one model per process, e.g.
//
//	go test -run '^$' -bench 'Reference/Llama3-8B' -benchtime 1x ./verify
//
// Llama3-8B and Falcon3 have no sub-norms and an untied head; Falcon3-10B
// has head_dim 256 and ffn 23040. docs/performance.md has the figures.
func BenchmarkReference(b *testing.B) {
	for _, m := range []struct {
		name, config     string
		untied, subNorms bool
	}{
		{"2B-4T", "microsoft_bitnet-b1.58-2B-4T", false, true},
		{"Llama3-8B", "HF1BitLLM_Llama3-8B-1.58-100B-tokens", true, false},
		{"Falcon3-10B", "tiiuae_Falcon3-10B-Instruct-1.58bit", true, false},
	} {
		b.Run(m.name, func(b *testing.B) {
			cfg, err := hf.ReadConfig("../testdata/configs/" + m.config + ".config.json")
			if err != nil {
				b.Fatal(err)
			}
			g, err := refGeometryOf(cfg)
			if err != nil {
				b.Fatal(err)
			}
			w := &synthWeights{g: g, untied: m.untied, subNorms: m.subNorms, seed: 1}
			ids := make([]int32, 35)
			for i := range ids {
				ids[i] = int32(mix(uint64(i)) % uint64(g.vocab))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := refLogits(w, g, ids, nil); err != nil {
					b.Fatal(err)
				}
			}
			if kb := peakRSSKB(); kb > 0 {
				b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
			}
		})
	}
}

// peakRSSKB is the process's resident high-water mark (Linux VmHWM, kB), or
// 0 where /proc is unavailable.
func peakRSSKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
