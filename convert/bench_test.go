package convert

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// benchCheckpoint returns a dummy checkpoint of preset name for a benchmark:
// $BITNET_BENCH_DIR/<name> when that variable is set (generated once and
// reused across runs), else a fresh one in b.TempDir().
func benchCheckpoint(b *testing.B, name string, opts dummy.Options) string {
	b.Helper()
	if opts.Config == nil {
		m, err := presets.Get(name)
		if err != nil {
			b.Fatal(err)
		}
		opts.Config = m.Config
		opts.Packed = opts.Packed || m.Packed
	}
	dir := filepath.Join(b.TempDir(), name)
	if root := os.Getenv("BITNET_BENCH_DIR"); root != "" {
		dir = filepath.Join(root, name)
		if _, err := os.Stat(filepath.Join(dir, hf.ConfigFile)); err == nil {
			return dir
		}
	}
	if _, err := dummy.Generate(context.Background(), dir, opts); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchConvert converts dir to I2_S into io.Discard b.N times and reports
// input MB/s (input bytes = the safetensors data).
func benchConvert(b *testing.B, dir string) {
	ck, err := hf.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ck.Close()
	var in int64
	for _, t := range ck.Tensors {
		in += int64(t.Size)
	}
	opts := Options{NoVocab: true}
	plan, err := NewPlan(ck, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(in)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Convert(context.Background(), ck, plan, io.Discard, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertLarge converts a full-size dummy bitnet_b1_58-large (24
// layers, 1.46 GB of bf16 master weights) to I2_S. Only `go test -bench`
// runs it; set BITNET_BENCH_DIR to keep the generated input between runs.
func BenchmarkConvertLarge(b *testing.B) {
	benchConvert(b, benchCheckpoint(b, "bitnet_b1_58-large", dummy.Options{Seed: 1}))
}

// BenchmarkConvertLarge2B4T converts a full-size dummy BitNet-b1.58-2B-4T
// (30 layers, packed U8 + weight_scale, 1.19 GB) to I2_S.
func BenchmarkConvertLarge2B4T(b *testing.B) {
	benchConvert(b, benchCheckpoint(b, "BitNet-b1.58-2B-4T", dummy.Options{Seed: 1}))
}

// BenchmarkConvertBR23Llama8BShape (BR-23) converts a BitNet-architecture
// dummy with the Llama3-8B-1.58 sizes at reduced depth (4 layers, hidden
// 4096, ffn 14336, 32/8 heads, vocab 128256, untied head, packed U8 with
// bitlinear scales) stored in 2 shards, and reports the process's peak RSS
// (VmHWM) next to MB/s. scripts/bench-fullsize.sh measures the same
// checkpoint through the CLI with /usr/bin/time -v.
func BenchmarkConvertBR23Llama8BShape(b *testing.B) {
	m, err := presets.Get("Llama3-8B-1.58-100B-tokens")
	if err != nil {
		b.Fatal(err)
	}
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["architectures"] = []any{"BitnetForCausalLM"}
	dir := benchCheckpoint(b, "llama8b-shape-4l", dummy.Options{Config: cfg, Packed: true, LinearClass: dummy.BitLinear,
		Layers: 4, MaxShardBytes: 1_300_000_000, Seed: 1})
	ck, err := hf.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if len(ck.Files) != 2 {
		b.Fatalf("%d shards, want 2", len(ck.Files))
	}
	ck.Close()
	benchConvert(b, dir)
	if kb := peakRSSKB(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
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
