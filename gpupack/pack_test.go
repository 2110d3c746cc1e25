package gpupack

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/presets"
	"github.com/bitnet-convert/bitnet-convert/torchpt"
)

// tinyPreset is a preset's config with small widths (same arch and names).
func tinyPreset(t *testing.T, name string, packed bool) string {
	t.Helper()
	m, err := presets.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"] = 256, 512, 4
	cfg["num_key_value_heads"], cfg["vocab_size"], cfg["num_hidden_layers"] = 1, 512, 2
	delete(cfg, "head_dim")
	dir := t.TempDir()
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 3, Packed: packed}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tensorBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := torchpt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPackedHF: a packed checkpoint keeps its codes: the int2 file decodes
// to convert.Source's codes (q and k permuted) with bf16(scale); its GGUF
// (I2_S, same codes) packs to the same int2 file.
func TestPackedHF(t *testing.T) {
	dir := tinyPreset(t, "BitNet-b1.58-2B-4T", true)
	out := t.TempDir()
	if _, err := Pack(context.Background(), dir, out, Options{AllowUnsupportedShape: true, ScaleLayout: LayoutPR316}); err != nil {
		t.Fatal(err)
	}
	src, err := convert.OpenSource(dir, convert.Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var want []int8
	for _, p := range []struct {
		name  string
		heads int
	}{{"blk.1.attn_q.weight", 4}, {"blk.1.attn_k.weight", 1}, {"blk.1.attn_v.weight", 0}} {
		c, _, err := src.Ternary(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.heads > 0 {
			c, _ = permuteRows(c, len(c)/256, 256, p.heads)
		}
		want = append(want, c...)
	}
	raw := tensorBytes(t, filepath.Join(out, Int2File), "layers.1.attention.wqkv.weight")
	got := make([]int8, len(want))
	if err := UnpackInt2(got, raw, len(want)/256, 256); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Error("int2 codes of a packed checkpoint differ from its codes")
	}
	if sc := tensorBytes(t, filepath.Join(out, Int2File), "layers.1.attention.wqkv.weight_scale"); len(sc) != 12 || !bytes.Equal(sc[:2], sc[6:8]) {
		t.Errorf("pr316 wqkv scale % x: want 6 entries, the first four equal", sc)
	}

	gg := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, gg, false, false, convert.Options{NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	if _, err := Pack(context.Background(), gg, out2, Options{AllowUnsupportedShape: true, ScaleLayout: LayoutPR316}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"layers.0.attention.wqkv.weight", "layers.1.feed_forward.w13.weight", "layers.1.feed_forward.w2.weight_scale"} {
		if !bytes.Equal(tensorBytes(t, filepath.Join(out, Int2File), name), tensorBytes(t, filepath.Join(out2, Int2File), name)) {
			t.Errorf("%s differs between the packed checkpoint and its GGUF", name)
		}
	}
}

// TestLlamaArch: a Llama3-8B-1.58-style packed checkpoint (no sub-norms)
// packs with a notice, and its GGUF (arch llama, q/k already interleaved
// for rope) gives the same int2 weights: the GGUF's rows are not permuted
// twice.
func TestLlamaArch(t *testing.T) {
	dir := tinyPreset(t, "Llama3-8B-1.58-100B-tokens", true)
	out := t.TempDir()
	rep, err := Pack(context.Background(), dir, out, Options{AllowUnsupportedShape: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Notices, func(s string) bool { return strings.Contains(s, "sub_norm") }) {
		t.Errorf("no sub-norm notice in %q", rep.Notices)
	}
	gg := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, gg, false, false, convert.Options{NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	if _, err := Pack(context.Background(), gg, out2, Options{AllowUnsupportedShape: true}); err != nil {
		t.Fatal(err)
	}
	name := "layers.0.attention.wqkv.weight"
	if !bytes.Equal(tensorBytes(t, filepath.Join(out, Int2File), name), tensorBytes(t, filepath.Join(out2, Int2File), name)) {
		t.Errorf("%s differs between the llama checkpoint and its GGUF", name)
	}
}

// TestRefusals: an unsupported kernel shape names (N, K) and the list; a
// pr316 layout that cannot express the q:k:v split is refused; an existing
// output needs Force; nothing is left behind.
func TestRefusals(t *testing.T) {
	dir := tinyDummy(t)
	out := t.TempDir()
	_, err := Pack(context.Background(), dir, out, Options{})
	if err == nil || !strings.Contains(err.Error(), "(N, K) = (384, 256)") || !strings.Contains(err.Error(), "(3840, 2560)") || !strings.Contains(err.Error(), "--allow-unsupported-shape") {
		t.Errorf("unsupported shape: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused pack left %d files", len(ents))
	}
	// the golden tiny-bitnet (1bitLLM names, 4 heads, 2 KV heads): q:k:v
	// is 2:1:1, which PR #316's six row groups cannot express
	_, err = Pack(context.Background(), "../testdata/golden/tiny-bitnet/hf", out, Options{AllowUnsupportedShape: true, ScaleLayout: LayoutPR316})
	if err == nil || !strings.Contains(err.Error(), "4:1:1") {
		t.Errorf("pr316 on a 2:1:1 model: %v", err)
	}
	cfgDir := tinyPreset(t, "BitNet-b1.58-2B-4T-bf16", false)
	if _, err := Pack(context.Background(), cfgDir, out, Options{AllowUnsupportedShape: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(context.Background(), cfgDir, out, Options{AllowUnsupportedShape: true}); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing output: %v", err)
	}
	if _, err := Pack(context.Background(), filepath.Join(cfgDir, "config.json"), out, Options{}); err == nil {
		t.Error("config.json accepted as a GGUF")
	}
	if _, err := Pack(context.Background(), tinyDummy(t), out, Options{AllowUnsupportedShape: true, ScaleLayout: LayoutPR316, Force: true}); err != nil {
		t.Errorf("pr316 on the 4:1:1 tiny model: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out3 := t.TempDir()
	if _, err := Pack(ctx, dir, out3, Options{AllowUnsupportedShape: true}); err == nil {
		t.Error("cancelled pack succeeded")
	}
	if ents, _ := os.ReadDir(out3); len(ents) != 0 {
		t.Errorf("cancelled pack left %v", ents)
	}
	// A cancelled pack into folders it creates removes them again (the
	// hostile run left an empty --out); an existing parent is kept.
	parent := t.TempDir()
	if _, err := Pack(ctx, dir, filepath.Join(parent, "a", "b"), Options{AllowUnsupportedShape: true}); err == nil {
		t.Error("cancelled pack succeeded")
	}
	if ents, err := os.ReadDir(parent); err != nil || len(ents) != 0 {
		t.Errorf("cancelled pack into new folders left %v (%v)", ents, err)
	}
}
