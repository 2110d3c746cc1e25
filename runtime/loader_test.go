package runtime

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
)

// TestOneLoader: Load and LoadEmbedding are one loader, so a causal LM and
// an embedding model with the same defect fail with the same line (a
// separate scale tensor; a block_count the tensors do not back), and the
// embedding model reads every I2_S layout the causal one does (an ARM-layout
// file embeds exactly like the x86 one).
func TestOneLoader(t *testing.T) {
	causal := fuzzFile(1, 16, 2, 1, 32, 20, 13, 13)
	emb := embedGGUF(t, embedfixture.Qwen3, convert.OutF32)
	embFile := File{KVs: emb.KVs, Tensors: emb.Tensors, Data: emb.TensorData}
	withScale := func(f File) File {
		f.Tensors = append(slices.Clone(f.Tensors), gguf.TensorInfo{Name: "blk.0.attn_q.weight_scale", Type: gguf.TypeF32, Ne: []uint64{1}})
		return f
	}
	const scaleMsg = "tensor blk.0.attn_q.weight_scale: separate scale tensors are not supported (the scale must live in the I2_S data or the values)"
	if _, err := Load(withScale(causal), Options{}); err == nil || err.Error() != scaleMsg {
		t.Errorf("Load: %v, want %q", err, scaleMsg)
	}
	if _, err := LoadEmbedding(withScale(embFile), Options{}); err == nil || err.Error() != scaleMsg {
		t.Errorf("LoadEmbedding: %v, want %q", err, scaleMsg)
	}
	setKV := func(f File, key string, v gguf.Value) File {
		f.KVs = slices.Clone(f.KVs)
		for i := range f.KVs {
			if f.KVs[i].Key == key {
				f.KVs[i].Value = v
			}
		}
		return f
	}
	for _, tc := range []struct {
		arch string
		load func(File) error
		f    File
	}{
		{"bitnet", func(f File) error { _, err := Load(f, Options{}); return err }, causal},
		{"qwen3", func(f File) error { _, err := LoadEmbedding(f, Options{}); return err }, embFile},
	} {
		err := tc.load(setKV(tc.f, tc.arch+".block_count", gguf.Uint32(1000)))
		if want := "key " + tc.arch + ".block_count 1000: the file has tensors for"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q…", tc.arch, err, want)
		}
	}

	xf := embedGGUF(t, embedfixture.Qwen3, convert.OutI2S)
	x86 := loadEmbed(t, File{KVs: xf.KVs, Tensors: xf.Tensors, Data: xf.TensorData}, 1)
	dir := t.TempDir()
	s := embedfixture.Qwen3
	s.Vocab = 300
	if err := embedfixture.Write(dir, s, embedfixture.Options{Pooling: "cls_token"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "arm.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: convert.OutI2S, I2SLayout: format.LayoutARM, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	af, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	arm := loadEmbed(t, File{KVs: af.KVs, Tensors: af.Tensors, Data: af.TensorData}, 1)
	a, err := x86.Embed(embedIDs, PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	b, err := arm.Embed(embedIDs, PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Errorf("ARM-layout I2_S embeds differently from x86: %v vs %v", b[:4], a[:4])
	}
}
