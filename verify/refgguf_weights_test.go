package verify

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
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
			want, _, err := referenceLogits(src, c.hf, goldenHelloIDs, func(string) (gguf.Type, bool) { return 0, false })
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
// error naming the key; linear rope scaling is read as the runtime reads it.
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
	if g.posScale != 1 {
		t.Errorf("factor 1: position scale %v", g.posScale)
	}
	// Linear scaling by 2 halves the positions (issue 20); yarn and a
	// factor ≤ 0 are refused naming the key.
	set := func(key string, v any) {
		for i, kv := range f.KVs {
			if kv.Key == key {
				f.KVs[i].Value.V = v
			}
		}
	}
	set("bitnet.rope.scaling.factor", float32(2))
	if g, err := refGeometryOfGGUF(f, "x.gguf"); err != nil || g.posScale != 0.5 {
		t.Errorf("rope scaling 2: position scale %v, %v", g.posScale, err)
	}
	set("bitnet.rope.scaling.factor", float32(0))
	if _, err := refGeometryOfGGUF(f, "x.gguf"); err == nil || !strings.Contains(err.Error(), "bitnet.rope.scaling.factor") {
		t.Errorf("rope scaling 0: %v", err)
	}
	set("bitnet.rope.scaling.factor", float32(2))
	set("bitnet.rope.scaling.type", "yarn")
	if _, err := refGeometryOfGGUF(f, "x.gguf"); err == nil || !strings.Contains(err.Error(), "bitnet.rope.scaling.type") {
		t.Errorf("rope scaling yarn: %v", err)
	}
}

// TestGGUFWeightsBlocks: row blocks of any size give the same values as
// one block, for per-block f16 scales (TQ2_0 of b158-h512), per-row f16
// scales (IQ1_BN) and a Q6_K token embedding read in row blocks and by
// rows; the vocabulary-sized matrices of a full model go through these
// paths.
func TestGGUFWeightsBlocks(t *testing.T) {
	for _, c := range []struct {
		out  convert.OutType
		embd string
	}{{convert.OutTQ2_0, "Q6_K"}, {convert.OutIQ1BN, "F16"}} {
		t.Run(string(c.out), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.gguf")
			if _, err := convert.ConvertDir(context.Background(), "../testdata/golden/b158-h512/hf", out, false, false, convert.Options{OutType: c.out, ModelName: "tiny", TokenEmbeddingType: c.embd}); err != nil {
				t.Fatal(err)
			}
			f, err := reader.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			w := &ggufWeights{f: f}
			for _, name := range []string{"blk.0.ffn_down.weight", "blk.1.attn_k.weight", "token_embd.weight"} {
				s, _ := w.shape(name)
				var whole []float64
				if err := w.blocks(name, 1<<30, func(lo, hi int, b []float64) { whole = append(whole, b...) }); err != nil {
					t.Fatal(err)
				}
				if len(whole) != s[0]*s[1] {
					t.Fatalf("%s: %d values for HF shape %v", name, len(whole), s)
				}
				var parts []float64
				next := 0
				if err := w.blocks(name, 3*s[1], func(lo, hi int, b []float64) {
					if lo != next || hi-lo > 3 || len(b) != (hi-lo)*s[1] {
						t.Errorf("%s: block [%d, %d) of %d values after row %d", name, lo, hi, len(b), next)
					}
					next = hi
					parts = append(parts, b...)
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(whole, parts) {
					t.Errorf("%s: 3-row blocks differ from one block", name)
				}
				ids := []int32{int32(s[0] - 1), 0, 7}
				rows, err := w.rows(name, ids)
				if err != nil {
					t.Fatal(err)
				}
				for i, id := range ids {
					if !slices.Equal(rows[i*s[1]:(i+1)*s[1]], whole[int(id)*s[1]:(int(id)+1)*s[1]]) {
						t.Errorf("%s: row %d differs from the block's", name, id)
					}
				}
				nz := 0
				for _, v := range whole {
					if v != 0 {
						nz++
					}
				}
				if nz < len(whole)/4 {
					t.Errorf("%s: only %d of %d values non-zero", name, nz, len(whole))
				}
			}
			if _, err := w.rows("token_embd.weight", []int32{512}); err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("row 512 of 512: %v", err)
			}
		})
	}
}
