package verify

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
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

// BenchmarkCheckStructure is verify's tensor-by-tensor check against the
// checkpoint (checkStructure: every ternary code and scale, every float
// value) on 2 layers of the 2B-4T widths (hidden 2560, ffn 6912, packed U8,
// vocabulary cut to 32000), as I2_S (one f32 scale) and TQ2_0 (an f16 scale
// per 256 weights). MB/s counts the GGUF's tensor bytes. The checkpoint is
// generated into a temporary directory (about 0.4 GB):
//
//	go test -run '^$' -bench CheckStructure -benchtime 3x ./verify
//
// The same function at an earlier commit can be timed by copying this file
// into that tree (docs/performance.md has both).
func BenchmarkCheckStructure(b *testing.B) {
	m, err := presets.Get("BitNet-b1.58-2B-4T")
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: m.Config, Packed: true, Layers: 2, VocabSize: 32000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	for _, ot := range []convert.OutType{convert.OutI2S, convert.OutTQ2_0} {
		out := filepath.Join(b.TempDir(), string(ot)+".gguf")
		if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: ot, NoVocab: true}); err != nil {
			b.Fatal(err)
		}
		b.Run(string(ot), func(b *testing.B) {
			f, err := reader.Open(out)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			opts := Options{GGUF: out, HF: dir, Threads: 2}
			src, err := convert.OpenSource(dir, convert.Options{Threads: opts.Threads})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			var bytes int64
			for _, t := range f.Tensors {
				if d, err := f.TensorData(t.Name); err == nil {
					bytes += int64(len(d))
				}
			}
			b.SetBytes(bytes)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rep := &Report{}
				if !checkStructure(rep, f, src, opts) || len(rep.Failures) > 0 {
					b.Fatalf("structure check failed: %v", rep.Failures)
				}
			}
		})
	}
}
