package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
)

// embedGGUF converts a small-vocabulary embedding fixture of shape s to ot
// and returns the opened file.
func embedGGUF(t testing.TB, s embedfixture.Shape, ot convert.OutType) *reader.File {
	t.Helper()
	s.Vocab = 300
	dir := t.TempDir()
	if err := embedfixture.Write(dir, s, embedfixture.Options{Pooling: "cls_token"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: ot, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// withKVs returns f as a File with some KVs replaced or added (nil value:
// removed).
func withKVs(f *reader.File, kvs map[string]*gguf.Value) File {
	var out []gguf.KV
	for _, kv := range f.KVs {
		if v, ok := kvs[kv.Key]; ok {
			if v != nil {
				out = append(out, gguf.KV{Key: kv.Key, Value: *v})
			}
			delete(kvs, kv.Key)
			continue
		}
		out = append(out, kv)
	}
	for k, v := range kvs {
		if v != nil {
			out = append(out, gguf.KV{Key: k, Value: *v})
		}
	}
	return File{KVs: out, Tensors: f.Tensors, Data: f.TensorData}
}

func val(v gguf.Value) *gguf.Value { return &v }

func loadEmbed(t *testing.T, f File, threads int) *EmbeddingModel {
	t.Helper()
	m, err := LoadEmbedding(f, Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var embedIDs = []int32{2, 17, 250, 99, 5, 5, 123, 42}

func cos32(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// The loader reads the converter's KVs: head_dim ≠ hidden/heads, the pooling
// type, Gemma3's attention scale 1/√query_pre_attn_scalar, and Gemma3's
// sliding window (the fixture declares none, so the converter writes
// transformers' default of 4096; Qwen3 has none).
func TestLoadEmbeddingParams(t *testing.T) {
	for _, c := range []struct {
		s      embedfixture.Shape
		scale  float32
		window int
	}{{embedfixture.Qwen3, float32(1 / math.Sqrt(64)), 0}, {embedfixture.Gemma3, float32(1 / math.Sqrt(64)), 4096}} {
		f := embedGGUF(t, c.s, convert.OutI2S)
		m := loadEmbed(t, File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, 1)
		p := m.Params
		if p.HeadDim != c.s.HeadDim || p.NHead != c.s.Heads || p.NHeadKV != c.s.HeadsKV || p.NFF != c.s.FF || p.NVocab != 300 {
			t.Errorf("%s: params %+v", c.s.Arch, p)
		}
		if p.Pooling != PoolCLS || p.AttnScale != c.scale || !p.Causal || p.NCtx != 32768 || p.SlidingWindow != c.window {
			t.Errorf("%s: pooling %v scale %v causal %v ctx %d window %d", c.s.Arch, p.Pooling, p.AttnScale, p.Causal, p.NCtx, p.SlidingWindow)
		}
	}
}

// Embeddings are unit-length, independent of the thread count, and I2_S
// stays close to F32 (int8 activations move them a little, not a lot).
func TestEmbedI2SvsF32AndThreads(t *testing.T) {
	for _, s := range []embedfixture.Shape{embedfixture.Qwen3, embedfixture.Gemma3} {
		fi := embedGGUF(t, s, convert.OutI2S)
		ff := embedGGUF(t, s, convert.OutF32)
		mi1 := loadEmbed(t, File{KVs: fi.KVs, Tensors: fi.Tensors, Data: fi.TensorData}, 1)
		mi4 := loadEmbed(t, File{KVs: fi.KVs, Tensors: fi.Tensors, Data: fi.TensorData}, 4)
		mf := loadEmbed(t, File{KVs: ff.KVs, Tensors: ff.Tensors, Data: ff.TensorData}, 2)
		for _, mode := range []PoolMode{PoolMean, PoolCLS, PoolLast} {
			a, err := mi1.Embed(embedIDs, mode)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := mi4.Embed(embedIDs, mode)
			c, _ := mf.Embed(embedIDs, mode)
			if !slices.Equal(a, b) {
				t.Errorf("%s mode %d: 1 and 4 threads differ", s.Arch, mode)
			}
			var n float64
			for _, v := range a {
				n += float64(v) * float64(v)
			}
			if math.Abs(n-1) > 1e-5 {
				t.Errorf("%s: |e|² = %v", s.Arch, n)
			}
			if cs := cos32(a, c); cs < 0.999 || cs > 0.9999999 {
				t.Errorf("%s mode %d: cosine I2_S vs F32 %.8f, want in [0.999, 0.9999999]", s.Arch, mode, cs)
			}
		}
	}
}

// Causal attention: the hidden states of a prefix do not depend on the
// tokens after it (bit for bit); with attention.causal false they do.
func TestEmbedCausalMask(t *testing.T) {
	f := embedGGUF(t, embedfixture.Gemma3, convert.OutI2S)
	m := loadEmbed(t, File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, 1)
	full, err := m.Hidden(embedIDs)
	if err != nil {
		t.Fatal(err)
	}
	pre, _ := m.Hidden(embedIDs[:3])
	for i := range pre {
		if !slices.Equal(pre[i], full[i]) {
			t.Fatalf("causal: position %d differs between the prefix and the full sequence", i)
		}
	}
	bi := loadEmbed(t, withKVs(f, map[string]*gguf.Value{"gemma3.attention.causal": val(gguf.Bool(false))}), 1)
	if bi.Params.Causal {
		t.Fatal("attention.causal false not read")
	}
	bf, _ := bi.Hidden(embedIDs)
	bp, _ := bi.Hidden(embedIDs[:3])
	if slices.Equal(bf[0], bp[0]) {
		t.Error("bidirectional: position 0 ignores later tokens")
	}
}

// A sliding window of 1 on every layer: each position attends to itself
// only, so its hidden state equals that of the token alone (rope rotates q
// and k, but one key's softmax weight is 1 whatever its score).
func TestEmbedSlidingWindow(t *testing.T) {
	f := embedGGUF(t, embedfixture.Gemma3, convert.OutF32)
	all := []bool{true, true}
	m := loadEmbed(t, withKVs(f, map[string]*gguf.Value{
		"gemma3.attention.sliding_window":         val(gguf.Uint32(1)),
		"gemma3.attention.sliding_window_pattern": val(gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueBool, V: all}),
	}), 1)
	hs, err := m.Hidden(embedIDs)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range embedIDs {
		one, _ := m.Hidden([]int32{id})
		if !slices.Equal(one[0], hs[i]) {
			t.Fatalf("position %d with window 1 differs from token %d alone", i, id)
		}
	}
	// A window on no layer changes nothing.
	none := loadEmbed(t, withKVs(f, map[string]*gguf.Value{
		"gemma3.attention.sliding_window":         val(gguf.Uint32(1)),
		"gemma3.attention.sliding_window_pattern": val(gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueBool, V: []bool{false, false}}),
	}), 1)
	plain := loadEmbed(t, File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, 1)
	a, _ := none.Embed(embedIDs, PoolMean)
	b, _ := plain.Embed(embedIDs, PoolMean)
	if !slices.Equal(a, b) {
		t.Error("a window on no layer changed the embedding")
	}
}

// Bad files: errors name the key or tensor.
func TestLoadEmbeddingErrors(t *testing.T) {
	f := embedGGUF(t, embedfixture.Qwen3, convert.OutI2S)
	drop := func(name string) File {
		var ts []gguf.TensorInfo
		for _, ti := range f.Tensors {
			if ti.Name != name {
				ts = append(ts, ti)
			}
		}
		return File{KVs: f.KVs, Tensors: ts, Data: f.TensorData}
	}
	for _, c := range []struct {
		name string
		file File
		want string
		is   error
	}{
		{"no norm_in", drop("blk.1.ffn_down_norm_in.weight"), "blk.1.ffn_down_norm_in.weight", ErrMissing},
		{"no q norm", drop("blk.0.attn_q_norm.weight"), "blk.0.attn_q_norm.weight", ErrMissing},
		{"arch", withKVs(f, map[string]*gguf.Value{"general.architecture": val(gguf.String("bitnet"))}), `"bitnet"`, ErrUnsupportedArch},
		{"arch type", withKVs(f, map[string]*gguf.Value{"general.architecture": val(gguf.Uint32(3))}), "key general.architecture: a uint32, want a string", nil},
		// a 1 MB arch is cut to 64 bytes (reader.Quote), not echoed whole
		{"arch 1 MB", withKVs(f, map[string]*gguf.Value{"general.architecture": val(gguf.String(strings.Repeat("b", 1<<20)))}), `general.architecture "` + strings.Repeat("b", 64) + `"… (1048576 bytes): unsupported architecture`, ErrUnsupportedArch},
		{"arch NUL", withKVs(f, map[string]*gguf.Value{"general.architecture": val(gguf.String("qwen3\x00\xff"))}), `general.architecture "qwen3\x00\xff": unsupported architecture`, ErrUnsupportedArch},
		{"pooling", withKVs(f, map[string]*gguf.Value{"qwen3.pooling_type": val(gguf.Uint32(7))}), "qwen3.pooling_type 7", nil},
		{"value_length", withKVs(f, map[string]*gguf.Value{"qwen3.attention.value_length": val(gguf.Uint32(32))}), "value_length 32", nil},
		{"rope", withKVs(f, map[string]*gguf.Value{"qwen3.rope.dimension_count": val(gguf.Uint32(32))}), "rope.dimension_count 32", nil},
		{"eps", withKVs(f, map[string]*gguf.Value{"qwen3.attention.layer_norm_rms_epsilon": nil}), "layer_norm_rms_epsilon", ErrMissing},
		{"window without layers", withKVs(f, map[string]*gguf.Value{"qwen3.attention.sliding_window": val(gguf.Uint32(4))}), "sliding_window_pattern", nil},
		{"activation", withKVs(f, map[string]*gguf.Value{"qwen3.hidden_activation": val(gguf.String("relu2"))}), `key qwen3.hidden_activation: activation "relu2" is not qwen3's (silu)`, nil},
		{"activation type", withKVs(f, map[string]*gguf.Value{"qwen3.hidden_activation": val(gguf.Uint32(1))}), "key qwen3.hidden_activation: a uint32, want the string silu", nil},
		{"head_dim shape", withKVs(f, map[string]*gguf.Value{"qwen3.attention.key_length": val(gguf.Uint32(32)), "qwen3.attention.value_length": val(gguf.Uint32(32)), "qwen3.rope.dimension_count": val(gguf.Uint32(32))}), "blk.0.attn_q.weight: ne [128 256], want [128, 128]", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadEmbedding(c.file, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("err = %v, want %q (%v)", err, c.want, c.is)
			}
		})
	}
	m := loadEmbed(t, File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, 1)
	if _, err := m.Embed(nil, PoolMean); !errors.Is(err, ErrEmptyInput) {
		t.Errorf("empty input: %v", err)
	}
	if _, err := m.Embed([]int32{1, 300}, PoolMean); err == nil || !strings.Contains(err.Error(), "id 300") {
		t.Errorf("id out of range: %v", err)
	}
}

// gemma3.hidden_activation: absent or gemma3's own GELU-tanh (HF's or
// ggml's name) loads; another activation is one error naming the key.
func TestLoadEmbeddingGemma3Activation(t *testing.T) {
	f := embedGGUF(t, embedfixture.Gemma3, convert.OutF32)
	for _, c := range []struct {
		v    *gguf.Value
		want string // "" = loads
	}{
		{nil, ""},
		{val(gguf.String("gelu_pytorch_tanh")), ""},
		{val(gguf.String("gelu")), ""},
		{val(gguf.String("silu")), `key gemma3.hidden_activation: activation "silu" is not gemma3's (gelu_pytorch_tanh or gelu)`},
		{val(gguf.Float32(1)), "key gemma3.hidden_activation: a float32, want the string gelu_pytorch_tanh"},
	} {
		_, err := LoadEmbedding(withKVs(f, map[string]*gguf.Value{"gemma3.hidden_activation": c.v}), Options{})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: err = %v, want %q", c.v, err, c.want)
		}
	}
}

// The activations and Normalize, against values computed by hand.
func TestEmbedActivations(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(float32) float32
		x    float32
		want float64
	}{
		{"silu(1)", embSiLU, 1, 0.7310585786300049},
		{"silu(-2)", embSiLU, -2, -0.2384058440442351},
		{"gelu_tanh(1)", embGELUTanh, 1, 0.8411919906082768},
		{"gelu_tanh(-0.5)", embGELUTanh, -0.5, -0.15428599017299538},
	} {
		if got := c.f(c.x); math.Abs(float64(got)-c.want) > 1e-7 {
			t.Errorf("%s = %.10f, want %.10f", c.name, got, c.want)
		}
	}
	if got := Normalize([]float32{3, 4}); !slices.Equal(got, []float32{0.6, 0.8}) {
		t.Errorf("Normalize(3, 4) = %v", got)
	}
	if got := Normalize([]float32{0, 0}); !slices.Equal(got, []float32{0, 0}) {
		t.Errorf("Normalize(0, 0) = %v", got)
	}
}

func ExampleNormalize() {
	fmt.Println(Normalize([]float32{3, 4}))
	// Output: [0.6 0.8]
}

// ExampleEmbeddingModel_Embed shows the API on a file made by hf2gguf.
func ExampleEmbeddingModel_Embed() {
	m, f, err := OpenEmbedding("model.gguf", Options{Threads: 4})
	if err != nil {
		return // no model file in this example
	}
	defer f.Close()
	vec, _ := m.Embed([]int32{2, 651, 9456}, m.Params.Pooling)
	_ = vec // unit-length, len m.Params.NEmbd
}

// FuzzLoadEmbeddingKVs: arbitrary hyper-parameter KVs on a valid file either
// load (and then embed without panicking) or fail with an error.
func FuzzLoadEmbeddingKVs(f *testing.F) {
	f.Add(uint32(4), uint32(2), uint32(64), uint32(0), uint32(3), uint32(32768), true)
	f.Add(uint32(4), uint32(4), uint32(32), uint32(2), uint32(1), uint32(2), false)
	f.Add(uint32(0), uint32(0), uint32(0), uint32(1), uint32(0), uint32(0), true)
	f.Add(uint32(2), uint32(3), uint32(128), uint32(1<<31), uint32(9), uint32(1), false)
	file := embedGGUF(f, embedfixture.Qwen3, convert.OutF32)
	f.Fuzz(func(t *testing.T, heads, kvHeads, headDim, window, pooling, ctx uint32, slide bool) {
		pattern := []bool{slide, false}
		kvs := map[string]*gguf.Value{
			"qwen3.attention.head_count":             val(gguf.Uint32(heads)),
			"qwen3.attention.head_count_kv":          val(gguf.Uint32(kvHeads)),
			"qwen3.attention.key_length":             val(gguf.Uint32(headDim)),
			"qwen3.attention.value_length":           val(gguf.Uint32(headDim)),
			"qwen3.rope.dimension_count":             val(gguf.Uint32(headDim)),
			"qwen3.attention.sliding_window":         val(gguf.Uint32(window)),
			"qwen3.attention.sliding_window_pattern": val(gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueBool, V: pattern}),
			"qwen3.pooling_type":                     val(gguf.Uint32(pooling)),
			"qwen3.context_length":                   val(gguf.Uint32(ctx)),
		}
		m, err := LoadEmbedding(withKVs(file, kvs), Options{})
		if err != nil {
			return
		}
		if _, err := m.Embed([]int32{1, 2, 3}, m.Params.Pooling); err != nil && ctx >= 3 {
			t.Fatalf("embed: %v", err)
		}
	})
}

// BenchmarkEmbed embeds 64 tokens with the tiny Qwen3-style I2_S model.
func BenchmarkEmbed(b *testing.B) {
	f := embedGGUF(b, embedfixture.Qwen3, convert.OutI2S)
	m, err := LoadEmbedding(File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int32, 64)
	for i := range ids {
		ids[i] = int32(i * 7 % 300)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := m.Embed(ids, PoolMean); err != nil {
			b.Fatal(err)
		}
	}
}
