package verify

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// TestGGUFReferenceEqualsHF: the float reference built from a GGUF's
// weights (ggufWeights, refGeometryOfGGUF) is the --hf reference when the
// file stores the checkpoint's codes and scales and its float tensors in
// F32: hf2gguf's I2_S (x86 and arm layouts), TL1 and F32 files of the
// golden tiny model (1bitLLM arch, SiLU) and of b158-h512 (2B-4T arch,
// relu2, head_dim 128, grouped KV), with token_embd kept F32. The logits
// agree within 1e-9 (only the order of float64 sums may differ).
func TestGGUFReferenceEqualsHF(t *testing.T) {
	for _, c := range []struct {
		hf     string
		out    convert.OutType
		layout format.Layout
	}{
		{goldenHF, convert.OutI2S, ""},
		{goldenHF, convert.OutI2S, format.LayoutARM},
		{goldenHF, convert.OutF32, ""},
		{"../testdata/golden/b158-h512/hf", convert.OutI2S, ""},
		{"../testdata/golden/b158-h512/hf", convert.OutF32, ""},
	} {
		name := filepath.Base(filepath.Dir(c.hf)) + "/" + string(c.out) + string(c.layout)
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.gguf")
			opts := convert.Options{OutType: c.out, ModelName: "tiny", TokenEmbeddingType: "F32"}
			if c.layout != "" {
				opts.I2SLayout = c.layout
			}
			if _, err := convert.ConvertDir(context.Background(), c.hf, out, false, false, opts); err != nil {
				t.Fatal(err)
			}
			src, err := convert.OpenSource(c.hf, convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			want, err := referenceLogits(src, c.hf, goldenHelloIDs)
			if err != nil {
				t.Fatal(err)
			}
			f, err := reader.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			g, err := refGeometryOfGGUF(f, out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := refLogits(&ggufWeights{f: f}, g, goldenHelloIDs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d logits, --hf reference %d", len(got), len(want))
			}
			var worst float64
			for i := range got {
				worst = math.Max(worst, math.Abs(got[i]-want[i]))
			}
			if worst > 1e-9 {
				t.Errorf("max |Δ| %g from the --hf reference, want ≤ 1e-9", worst)
			}
		})
	}
}

// TestRefGeometryOfGGUFRefuses: what the reference cannot compute is an
// error naming the key.
func TestRefGeometryOfGGUFRefuses(t *testing.T) {
	f, err := reader.Open("../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := refGeometryOfGGUF(f, "x.gguf")
	if err != nil {
		t.Fatalf("bitnet.cpp's file (linear rope scaling by 1): %v", err)
	}
	if g.hidden != 256 || g.vocab != 512 || g.relu2 || g.adjacentRope || g.theta != 10000 {
		t.Errorf("geometry %+v", g)
	}
	for i, kv := range f.KVs {
		if kv.Key == "bitnet.rope.scaling.factor" {
			f.KVs[i].Value.V = float32(2)
		}
	}
	if _, err := refGeometryOfGGUF(f, "x.gguf"); err == nil || !strings.Contains(err.Error(), "bitnet.rope.scaling.type") {
		t.Errorf("rope scaling 2: %v", err)
	}
}
