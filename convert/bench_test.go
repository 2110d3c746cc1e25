package convert

import (
	"context"
	"io"
	"os"
	"path/filepath"
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
	m, err := presets.Get(name)
	if err != nil {
		b.Fatal(err)
	}
	opts.Config = m.Config
	opts.Packed = opts.Packed || m.Packed
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
