package verify

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// Acceptance b (issue 6): on the tiny Qwen3-style and Gemma3-style
// checkpoints, the I2_S file's runtime embeddings reach cosine ≥ 0.999 with
// the float reference on the 5 default prompts and the F32 file ≥ 0.99999;
// structure and metadata checks pass.
func TestVerifyEmbeddingModels(t *testing.T) {
	if testing.Short() {
		t.Skip("converts real-vocabulary checkpoints")
	}
	for _, tc := range []struct {
		shape   embedfixture.Shape
		pooling string
	}{{embedfixture.Qwen3, "lasttoken"}, {embedfixture.Gemma3, "mean_tokens"}} {
		t.Run(tc.shape.Arch, func(t *testing.T) {
			dir := t.TempDir()
			if err := embedfixture.Write(dir, tc.shape, embedfixture.Options{Tokenizer: true, TokenizersDir: "../testdata/tokenizers", Pooling: tc.pooling}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				ot  convert.OutType
				min float64
			}{{convert.OutI2S, 0.999}, {convert.OutF32, 0.99999}} {
				out := filepath.Join(t.TempDir(), "m.gguf")
				if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: c.ot}); err != nil {
					t.Fatal(err)
				}
				rep, err := Run(Options{GGUF: out, HF: dir})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.Pass {
					t.Fatalf("%s: failures %q", c.ot, rep.Failures)
				}
				if rep.Thresholds.MinCosine != c.min || len(rep.Embeddings) != len(DefaultEmbedPrompts) {
					t.Fatalf("%s: min cosine %v, %d prompts", c.ot, rep.Thresholds.MinCosine, len(rep.Embeddings))
				}
				worst := 1.0
				for i, e := range rep.Embeddings {
					if e.Cosine < c.min || e.Tokens < 3 || e.Prompt != DefaultEmbedPrompts[i] {
						t.Errorf("%s prompt %d: %+v", c.ot, i, e)
					}
					worst = min(worst, e.Cosine)
				}
				t.Logf("%s %s: worst cosine %.7f", tc.shape.Arch, c.ot, worst)
				if c.ot == convert.OutI2S && worst > 0.9999999 {
					t.Errorf("I2_S cosine %.9f: int8 activations should move the embedding measurably", worst)
				}
			}
		})
	}
}

// The float reference differs from a runtime that skips the Gemma (1 + w)
// fix: verifying a file whose Gemma norms hold w against the checkpoint fails
// structurally and numerically.
func TestVerifyEmbeddingDetectsMissingGemmaFix(t *testing.T) {
	s := embedfixture.Gemma3
	s.Vocab = 512
	dir := t.TempDir()
	if err := embedfixture.Write(dir, s, embedfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: convert.OutF32, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{GGUF: out, HF: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || len(rep.Embeddings) != 2 {
		t.Fatalf("unmodified file: %q, %d inputs", rep.Failures, len(rep.Embeddings))
	}
	// Without the checkpoint only the runtime checks run.
	rep, err = Run(Options{GGUF: out})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || len(rep.Embeddings) != 2 || rep.Embeddings[0].Cosine != 0 || math.Abs(rep.Embeddings[0].Norm-1) > 1e-6 {
		t.Errorf("runtime-only: pass %v, %+v", rep.Pass, rep.Embeddings)
	}
	// A threshold above 1 fails, naming the first prompt.
	th := DefaultThresholds(false)
	th.MinCosine = 1.5
	rep, err = Run(Options{GGUF: out, HF: dir, Thresholds: &th})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || !strings.Contains(rep.Failures[0], "prompt 1 \"\": cosine similarity") {
		t.Errorf("failures %q, want the first input named", rep.Failures)
	}
	// Undo the fix on blk.1.post_ffw_norm: w + 1 → w.
	bad := corruptF32(t, out, "blk.1.post_ffw_norm.weight", func(v float32) float32 { return v - 1 })
	rep, err = Run(Options{GGUF: bad, HF: dir})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Failures, "\n")
	if rep.Pass || !strings.Contains(rep.Failures[0], "blk.1.post_ffw_norm.weight") || !strings.Contains(all, "cosine similarity") {
		t.Errorf("failures %q, want the tensor first and a cosine failure", rep.Failures)
	}
}

// corruptF32 copies path and maps every value of the F32 tensor name
// through f.
func corruptF32(t *testing.T, path, name string, f func(float32) float32) string {
	t.Helper()
	r, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := r.Tensor(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	start := r.DataOffset + ti.Offset
	n := int(ti.Ne[0])
	r.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := b[int(start)+4*i:]
		binary.LittleEndian.PutUint32(p, math.Float32bits(f(math.Float32frombits(binary.LittleEndian.Uint32(p)))))
	}
	out := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Sliding-window layers (Gemma3: sliding_window + sliding_window_pattern,
// rope_local_base_freq on those layers) and bidirectional attention
// (use_bidirectional_attention) go from config.json through the converter's
// KVs into the runtime, and agree with the float reference, which reads them
// from config.json itself; the option changes the embedding.
func TestVerifyEmbeddingAttentionVariants(t *testing.T) {
	s := embedfixture.Gemma3
	s.Vocab = 512
	ids := []int32{2, 9, 31, 77, 4, 4, 300, 12, 5}
	embed := func(cfg map[string]any) (*Report, []float32) {
		dir := t.TempDir()
		if err := embedfixture.Write(dir, s, embedfixture.Options{Config: cfg}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "m.gguf")
		if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: convert.OutF32, NoVocab: true}); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(Options{GGUF: out, HF: dir, IDs: ids, Pooling: "mean"})
		if err != nil {
			t.Fatal(err)
		}
		m, f, err := runtime.OpenEmbedding(out, runtime.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		e, err := m.Embed(ids, runtime.PoolMean)
		if err != nil {
			t.Fatal(err)
		}
		return rep, e
	}
	plain, pe := embed(map[string]any{"rope_theta": 1e6})
	if !plain.Pass {
		t.Fatalf("plain: %q", plain.Failures)
	}
	for name, cfg := range map[string]map[string]any{
		"sliding":       {"rope_theta": 1e6, "sliding_window": 3, "sliding_window_pattern": 2, "rope_local_base_freq": 10000.0},
		"bidirectional": {"rope_theta": 1e6, "use_bidirectional_attention": true},
		"both":          {"rope_theta": 1e6, "use_bidirectional_attention": true, "sliding_window": 2, "layer_types": []string{"sliding_attention", "sliding_attention"}},
	} {
		rep, e := embed(cfg)
		if !rep.Pass || rep.Embeddings[0].Cosine < 0.99999 {
			t.Errorf("%s: %q %+v", name, rep.Failures, rep.Embeddings)
		}
		var c float64
		for i := range e {
			c += float64(e[i]) * float64(pe[i])
		}
		t.Logf("%s: cosine %.6f with the plain model, %.9f with the reference", name, c, rep.Embeddings[0].Cosine)
		if c > 0.9999 {
			t.Errorf("%s: cosine %.6f with the plain model; the option changed nothing", name, c)
		}
	}
}
