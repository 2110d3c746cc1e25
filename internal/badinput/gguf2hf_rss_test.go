//go:build unix

package badinput

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// TestPeakRSSGGUF2HF2B4T exports the I2_S file of the full-size 2B-4T dummy
// (30 layers, packed U8 + weight_scale, Llama 3 tokenizer; GGUF 1.19 GB)
// with gguf2hf: the peak RSS must stay ≤ 256 MB (issue 23 d; the largest
// buffers are one ffn projection's codes, 17.7 M int8, and a 4 MiB row block
// of the F16 embedding), and the export has the 2B-4T layout: every tensor
// of the source checkpoint with its name, dtype and shape. It logs the time
// beside `cp` of the GGUF (docs/performance.md). Heavy (3.6 GB of disk):
// BITNET_HEAVY=1.
func TestPeakRSSGGUF2HF2B4T(t *testing.T) {
	if testing.Short() || os.Getenv("BITNET_HEAVY") == "" {
		t.Skip("set BITNET_HEAVY=1 to export the full-size 2B-4T dummy")
	}
	m, res := generate(t, "BitNet-b1.58-2B-4T", dummy.Options{Packed: true, Seed: 11, Tokenizer: "../../testdata/tokenizers/llama3"})
	dir := t.TempDir()
	gg := filepath.Join(dir, "2b4t-i2_s.gguf")
	if out, err := exec.Command(buildBinary(t), "hf2gguf", m, "--outfile", gg).CombinedOutput(); err != nil {
		t.Fatalf("hf2gguf: %v\n%s", err, out)
	}
	os.RemoveAll(m) // keep the disk use at two copies
	start := time.Now()
	if out, err := exec.Command("cp", gg, filepath.Join(dir, "copy.gguf")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	cpTook := time.Since(start)
	os.Remove(filepath.Join(dir, "copy.gguf"))
	exp := filepath.Join(dir, "export")
	rss, took := peakRSS(t, "gguf2hf", gg, "--out", exp)
	fi, _ := os.Stat(gg)
	t.Logf("gguf2hf of the 2B-4T I2_S file (%.2f GB): peak RSS %.0f MiB (%d KB) in %v; cp of the GGUF %v",
		float64(fi.Size())/1e9, float64(rss)/mib, rss/1024, took.Round(time.Millisecond), cpTook.Round(time.Millisecond))
	if rss > 256*1000*1000 {
		t.Errorf("peak RSS %d MB > 256 MB", rss/1000/1000)
	}
	ck, err := hf.Open(exp)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if len(ck.Tensors) != len(res.Tensors) {
		t.Errorf("%d tensors in the export, 2B-4T has %d", len(ck.Tensors), len(res.Tensors))
	}
	for _, w := range res.Tensors {
		g, ok := ck.Lookup(w.Name)
		if !ok || g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) {
			t.Fatalf("tensor %s: %v %s %v in the export, 2B-4T has %s %v", w.Name, ok, g.DType, g.Shape, w.DType, w.Shape)
		}
	}
}
