package dummy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// realLayout is what the real Hugging Face checkpoint of a preset holds:
// the number of tensors at full depth, and dtype[shape] (HF order) of every
// tensor that is not in a layer > 0. Written by hand from the published
// checkpoints' safetensors headers and config.json files.
type realLayout struct {
	count  int
	tensor map[string]string
}

// withPrefix puts prefix before every name but lm_head.weight.
func withPrefix(prefix string, m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k == "lm_head.weight" {
			out[k] = v
			continue
		}
		out[prefix+k] = v
	}
	return out
}

var realLayouts = map[string]realLayout{
	"bitnet_b1_58-large": {1 + 24*11 + 1, withPrefix("model.", map[string]string{
		"embed_tokens.weight":                      "BF16[32002 1536]",
		"layers.0.self_attn.q_proj.weight":         "BF16[1536 1536]",
		"layers.0.self_attn.k_proj.weight":         "BF16[1536 1536]",
		"layers.0.self_attn.v_proj.weight":         "BF16[1536 1536]",
		"layers.0.self_attn.o_proj.weight":         "BF16[1536 1536]",
		"layers.0.self_attn.inner_attn_ln.weight":  "BF16[1536]",
		"layers.0.mlp.gate_proj.weight":            "BF16[4096 1536]",
		"layers.0.mlp.up_proj.weight":              "BF16[4096 1536]",
		"layers.0.mlp.down_proj.weight":            "BF16[1536 4096]",
		"layers.0.mlp.ffn_layernorm.weight":        "BF16[4096]",
		"layers.0.input_layernorm.weight":          "BF16[1536]",
		"layers.0.post_attention_layernorm.weight": "BF16[1536]",
		"norm.weight": "BF16[1536]",
	})},
	"bitnet_b1_58-3B": {1 + 26*11 + 1, withPrefix("model.", map[string]string{
		"embed_tokens.weight":                      "BF16[32002 3200]",
		"layers.0.self_attn.q_proj.weight":         "BF16[3200 3200]",
		"layers.0.self_attn.k_proj.weight":         "BF16[3200 3200]",
		"layers.0.self_attn.v_proj.weight":         "BF16[3200 3200]",
		"layers.0.self_attn.o_proj.weight":         "BF16[3200 3200]",
		"layers.0.self_attn.inner_attn_ln.weight":  "BF16[3200]",
		"layers.0.mlp.gate_proj.weight":            "BF16[8640 3200]",
		"layers.0.mlp.up_proj.weight":              "BF16[8640 3200]",
		"layers.0.mlp.down_proj.weight":            "BF16[3200 8640]",
		"layers.0.mlp.ffn_layernorm.weight":        "BF16[8640]",
		"layers.0.input_layernorm.weight":          "BF16[3200]",
		"layers.0.post_attention_layernorm.weight": "BF16[3200]",
		"norm.weight": "BF16[3200]",
	})},
	"BitNet-b1.58-2B-4T": {1 + 30*18 + 1, withPrefix("model.", map[string]string{
		"embed_tokens.weight":                      "BF16[128256 2560]",
		"layers.0.self_attn.q_proj.weight":         "U8[640 2560]",
		"layers.0.self_attn.q_proj.weight_scale":   "BF16[]",
		"layers.0.self_attn.k_proj.weight":         "U8[160 2560]",
		"layers.0.self_attn.k_proj.weight_scale":   "BF16[]",
		"layers.0.self_attn.v_proj.weight":         "U8[160 2560]",
		"layers.0.self_attn.v_proj.weight_scale":   "BF16[]",
		"layers.0.self_attn.o_proj.weight":         "U8[640 2560]",
		"layers.0.self_attn.o_proj.weight_scale":   "BF16[]",
		"layers.0.self_attn.attn_sub_norm.weight":  "BF16[2560]",
		"layers.0.mlp.gate_proj.weight":            "U8[1728 2560]",
		"layers.0.mlp.gate_proj.weight_scale":      "BF16[]",
		"layers.0.mlp.up_proj.weight":              "U8[1728 2560]",
		"layers.0.mlp.up_proj.weight_scale":        "BF16[]",
		"layers.0.mlp.down_proj.weight":            "U8[640 6912]",
		"layers.0.mlp.down_proj.weight_scale":      "BF16[]",
		"layers.0.mlp.ffn_sub_norm.weight":         "BF16[6912]",
		"layers.0.input_layernorm.weight":          "BF16[2560]",
		"layers.0.post_attention_layernorm.weight": "BF16[2560]",
		"norm.weight": "BF16[2560]",
	})},
	"BitNet-b1.58-2B-4T-bf16": {1 + 30*11 + 1, withPrefix("model.", map[string]string{
		"embed_tokens.weight":                      "BF16[128256 2560]",
		"layers.0.self_attn.q_proj.weight":         "BF16[2560 2560]",
		"layers.0.self_attn.k_proj.weight":         "BF16[640 2560]",
		"layers.0.self_attn.v_proj.weight":         "BF16[640 2560]",
		"layers.0.self_attn.o_proj.weight":         "BF16[2560 2560]",
		"layers.0.self_attn.attn_sub_norm.weight":  "BF16[2560]",
		"layers.0.mlp.gate_proj.weight":            "BF16[6912 2560]",
		"layers.0.mlp.up_proj.weight":              "BF16[6912 2560]",
		"layers.0.mlp.down_proj.weight":            "BF16[2560 6912]",
		"layers.0.mlp.ffn_sub_norm.weight":         "BF16[6912]",
		"layers.0.input_layernorm.weight":          "BF16[2560]",
		"layers.0.post_attention_layernorm.weight": "BF16[2560]",
		"norm.weight": "BF16[2560]",
	})},
	"Falcon3-1B-Instruct-1.58bit":  {1 + 18*16 + 2, llamaPacked(131072, 2048, 2048, 1024, 8192)},
	"Falcon3-3B-Instruct-1.58bit":  {1 + 22*16 + 2, llamaPacked(131072, 3072, 3072, 1024, 9216)},
	"Falcon3-7B-Instruct-1.58bit":  {1 + 28*16 + 2, llamaPacked(131072, 3072, 3072, 1024, 23040)},
	"Falcon3-10B-Instruct-1.58bit": {1 + 40*16 + 2, llamaPacked(131072, 3072, 3072, 1024, 23040)},
	"Llama3-8B-1.58-100B-tokens":   {1 + 32*16 + 2, llamaPacked(128256, 4096, 4096, 1024, 14336)},
	"bitnet-embedding-0.6b": {1 + 28*18 + 1, embeddingModel(151936, 1024, 2048, 1024, 3072, 128, []string{
		"layers.0.input_layernorm.weight", "layers.0.post_attention_layernorm.weight"})},
	"bitnet-embedding-270m": {1 + 18*20 + 1, embeddingModel(262144, 640, 1024, 256, 2048, 256, []string{
		"layers.0.input_layernorm.weight", "layers.0.post_attention_layernorm.weight",
		"layers.0.pre_feedforward_layernorm.weight", "layers.0.post_feedforward_layernorm.weight"})},
}

// llamaPacked is a LlamaForCausalLM packed checkpoint (Falcon3 1.58bit,
// Llama3-8B-1.58): plain llama names, U8 [out/4, in] + 0-d scale, untied
// bf16 lm_head.
func llamaPacked(vocab, hidden, q, kv, ff int) map[string]string {
	m := map[string]string{
		"embed_tokens.weight":                      fmt.Sprintf("BF16[%d %d]", vocab, hidden),
		"layers.0.input_layernorm.weight":          fmt.Sprintf("BF16[%d]", hidden),
		"layers.0.post_attention_layernorm.weight": fmt.Sprintf("BF16[%d]", hidden),
		"norm.weight":                              fmt.Sprintf("BF16[%d]", hidden),
	}
	for name, s := range map[string][2]int{
		"self_attn.q_proj": {q, hidden}, "self_attn.k_proj": {kv, hidden}, "self_attn.v_proj": {kv, hidden},
		"self_attn.o_proj": {hidden, q}, "mlp.gate_proj": {ff, hidden}, "mlp.up_proj": {ff, hidden}, "mlp.down_proj": {hidden, ff},
	} {
		m["layers.0."+name+".weight"] = fmt.Sprintf("U8[%d %d]", s[0]/4, s[1])
		m["layers.0."+name+".weight_scale"] = "BF16[]"
	}
	out := withPrefix("model.", m)
	out["lm_head.weight"] = fmt.Sprintf("BF16[%d %d]", vocab, hidden)
	return out
}

// embeddingModel is a BitNet embedding checkpoint: no "model." prefix, bf16,
// seven "<proj>.norm" vectors, q/k head norms, the family's block norms.
func embeddingModel(vocab, hidden, q, kv, ff, headDim int, blockNorms []string) map[string]string {
	m := map[string]string{
		"embed_tokens.weight":              fmt.Sprintf("BF16[%d %d]", vocab, hidden),
		"norm.weight":                      fmt.Sprintf("BF16[%d]", hidden),
		"layers.0.self_attn.q_norm.weight": fmt.Sprintf("BF16[%d]", headDim),
		"layers.0.self_attn.k_norm.weight": fmt.Sprintf("BF16[%d]", headDim),
	}
	for name, s := range map[string][2]int{
		"self_attn.q_proj": {q, hidden}, "self_attn.k_proj": {kv, hidden}, "self_attn.v_proj": {kv, hidden},
		"self_attn.o_proj": {hidden, q}, "mlp.gate_proj": {ff, hidden}, "mlp.up_proj": {ff, hidden}, "mlp.down_proj": {hidden, ff},
	} {
		m["layers.0."+name+".weight"] = fmt.Sprintf("BF16[%d %d]", s[0], s[1])
		m["layers.0."+name+".norm.weight"] = fmt.Sprintf("BF16[%d]", s[1]) // RMSNorm of the projection's input
	}
	for _, n := range blockNorms {
		m[n] = fmt.Sprintf("BF16[%d]", hidden)
	}
	return m
}

func describe(dt hf.DType, shape []uint64) string {
	s := fmt.Sprint(shape)
	if shape == nil {
		s = "[]"
	}
	return string(dt) + s
}

// inScope keeps global tensors and layer 0.
func inScope(name string) bool {
	return !strings.Contains(name, "layers.") || strings.Contains(name, "layers.0.")
}

// TestLayoutMatchesRealCheckpoints compares Layout at full depth with the
// hand-written layouts of the real checkpoints, for every preset.
func TestLayoutMatchesRealCheckpoints(t *testing.T) {
	if len(presets.All()) != len(realLayouts) {
		t.Errorf("%d presets but %d real layouts in the test", len(presets.All()), len(realLayouts))
	}
	for _, m := range presets.All() {
		want, ok := realLayouts[m.Name]
		if !ok {
			t.Errorf("preset %s: no real layout in the test", m.Name)
			continue
		}
		ts, err := Layout(m.Config, m.Packed)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if len(ts) != want.count {
			t.Errorf("%s: %d tensors, the real checkpoint has %d", m.Name, len(ts), want.count)
		}
		got := map[string]string{}
		seen := map[string]bool{}
		for _, x := range ts {
			if seen[x.Name] {
				t.Errorf("%s: %s listed twice", m.Name, x.Name)
			}
			seen[x.Name] = true
			if inScope(x.Name) {
				got[x.Name] = describe(x.DType, x.Shape)
			}
		}
		if !reflect.DeepEqual(got, want.tensor) {
			for k, v := range want.tensor {
				if got[k] != v {
					t.Errorf("%s: %s is %q, want %q", m.Name, k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := want.tensor[k]; !ok {
					t.Errorf("%s: unexpected tensor %s %s", m.Name, k, v)
				}
			}
		}
	}
}

// smallVocab keeps the embedding of the generated test checkpoints small;
// every other shape is the real one.
const smallVocab = 512

// TestGenerateEveryPresetLoadsBack writes every preset with one layer (and a
// 512-token vocabulary, so the test stays quick) and reads it back through
// hf.Open: the tensors, dtypes and shapes are the real checkpoint's (layer 0
// and globals, with the vocab dimension replaced), config.json says 1 layer,
// and the values have the documented distributions.
func TestGenerateEveryPresetLoadsBack(t *testing.T) {
	for _, m := range presets.All() {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Generate(context.Background(), dir, Options{Config: m.Config, Packed: m.Packed, Layers: 1, VocabSize: smallVocab, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			ck, err := hf.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			if n, _, _ := ck.Config.Int("num_hidden_layers"); n != 1 {
				t.Errorf("config.json num_hidden_layers = %d, want 1", n)
			}
			if a, _ := Architecture(m.Config); fmt.Sprint(ck.Config.Raw["architectures"]) != "["+a+"]" {
				t.Errorf("architectures = %v, want [%s]", ck.Config.Raw["architectures"], a)
			}
			want := map[string]string{}
			for k, v := range realLayouts[m.Name].tensor {
				want[k] = strings.Replace(v, fmt.Sprintf("[%d ", vocabOf(t, m.Config)), fmt.Sprintf("[%d ", smallVocab), 1)
			}
			got := map[string]string{}
			for _, ref := range ck.Tensors {
				got[ref.Name] = describe(ref.DType, ref.Shape)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("loaded tensors differ from the real layout:\n got %v\nwant %v", got, want)
			}
			if len(ck.Tensors) != len(res.Tensors) || len(res.Files) != 1 || res.Files[0] != hf.SingleFile {
				t.Errorf("result lists %d tensors in %v; the file holds %d", len(res.Tensors), res.Files, len(ck.Tensors))
			}
			for _, x := range res.Tensors {
				ref, _ := ck.Lookup(x.Name)
				d, err := ck.Read(ref)
				if err != nil {
					t.Fatal(err)
				}
				checkValues(t, x, d)
				d.Release()
			}
		})
	}
}

func vocabOf(t *testing.T, cfg map[string]any) int {
	g, err := ReadGeometry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g.Vocab
}

// checkValues checks the distribution of one tensor's values: mean and
// standard deviation within 5 standard errors (plus bf16 rounding), packed codes in {0, 1, 2}
// with each about a third, scales in their range.
func checkValues(t *testing.T, x Tensor, d *hf.TensorData) {
	t.Helper()
	switch {
	case x.DType == hf.U8:
		var hist [4]int
		for _, b := range d.Raw {
			for i := 0; i < 4; i++ {
				hist[(b>>(2*i))&3]++
			}
		}
		n := float64(4 * len(d.Raw))
		if hist[3] != 0 {
			t.Errorf("%s: %d codes are 3 (unused bit pattern)", x.Name, hist[3])
		}
		for c := 0; c < 3; c++ {
			if f := float64(hist[c]) / n; math.Abs(f-1.0/3) > 0.01 {
				t.Errorf("%s: code %d has frequency %.4f, want 1/3", x.Name, c, f)
			}
		}
	case x.Role == WeightScale:
		v, err := d.Float32s(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 1 || !((v[0] >= 0.0149 && v[0] < 0.0251) || (v[0] > 39.8 && v[0] <= 67.1)) {
			t.Errorf("%s: weight_scale %v, want s in [0.015, 0.025) or 1/s", x.Name, v)
		}
	default:
		if x.DType != hf.BF16 {
			t.Fatalf("%s: dtype %s, want BF16", x.Name, x.DType)
		}
		centre := 0.0
		if x.Role == Norm {
			centre = 1
		}
		var sum, sq float64
		for i := 0; i+1 < len(d.Raw); i += 2 { // decoded in place: no f32 copy of a 100 MB tensor
			f := float64(quantize.BF16ToF32(uint16(d.Raw[i]) | uint16(d.Raw[i+1])<<8))
			sum += f
			sq += (f - centre) * (f - centre)
		}
		n := float64(len(d.Raw) / 2)
		mean, std := sum/n, math.Sqrt(sq/n)
		se := Std / math.Sqrt(n)
		if math.Abs(mean-centre) > 5*se+1e-4 || math.Abs(std-Std) > 5*Std/math.Sqrt(2*n)+2e-4 {
			t.Errorf("%s (%s): mean %.5f std %.5f over %.0f values, want %.0f and %.2f", x.Name, x.Role, mean, std, n, centre, Std)
		}
	}
}

// TestGemmaNormsNearZero: Gemma stores its block norms as offsets from 1
// (the model computes 1 + w), but the BitLinear input norms are plain.
func TestGemmaNormsNearZero(t *testing.T) {
	m, _ := presets.Get("bitnet-embedding-270m")
	ts, err := Layout(m.Config, false)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]Role{}
	for _, x := range ts {
		roles[x.Name] = x.Role
	}
	for name, want := range map[string]Role{
		"norm.weight": OffsetNorm, "layers.0.input_layernorm.weight": OffsetNorm, "layers.0.self_attn.q_norm.weight": OffsetNorm,
		"layers.0.post_feedforward_layernorm.weight": OffsetNorm, "layers.0.mlp.down_proj.norm.weight": Norm,
		"layers.0.self_attn.q_proj.weight": Projection, "embed_tokens.weight": Embedding,
	} {
		if roles[name] != want {
			t.Errorf("%s: role %v, want %v", name, roles[name], want)
		}
	}
	q, _ := presets.Get("bitnet-embedding-0.6b")
	ts, _ = Layout(q.Config, false)
	for _, x := range ts {
		if x.Role == OffsetNorm {
			t.Errorf("qwen3 %s is an offset norm; only Gemma's are", x.Name)
		}
	}
}

// TestFalconProjectionShapesBR14: the Falcon3 1B/7B dummies hold exactly the
// projection shapes of BR-14, which are also what codegen derives from their
// config.json.
func TestFalconProjectionShapesBR14(t *testing.T) {
	for name, want := range map[string][][2]int{
		"Falcon3-1B-Instruct-1.58bit": {{2048, 2048}, {1024, 2048}, {8192, 2048}, {2048, 8192}},
		"Falcon3-7B-Instruct-1.58bit": {{3072, 3072}, {1024, 3072}, {23040, 3072}, {3072, 23040}},
	} {
		m, _ := presets.Get(name)
		dir := t.TempDir()
		if _, err := Generate(context.Background(), dir, Options{Config: m.Config, Packed: m.Packed, Layers: 1, VocabSize: smallVocab}); err != nil {
			t.Fatal(err)
		}
		ck, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		set := map[[2]int]bool{}
		for _, ref := range ck.Tensors {
			if ref.DType == hf.U8 {
				set[[2]int{int(ref.Shape[0]) * 4, int(ref.Shape[1])}] = true
			}
		}
		ck.Close()
		var got [][2]int
		for s := range set {
			got = append(got, s)
		}
		sortShapes(got)
		sortShapes(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: projection shapes %v, BR-14 wants %v", name, got, want)
		}
		cfg, err := format.ReadConfigDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		derived, err := format.ShapesFromConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sortShapes(derived)
		if !reflect.DeepEqual(derived, want) {
			t.Errorf("%s: codegen derives %v from the dummy's config.json, want %v", name, derived, want)
		}
	}
}

func sortShapes(s [][2]int) {
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] || (s[i][0] == s[j][0] && s[i][1] < s[j][1]) })
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDeterministic: the bytes depend on the seed only, not on the thread
// count; another seed gives other weights.
func TestDeterministic(t *testing.T) {
	m, _ := presets.Get("BitNet-b1.58-2B-4T")
	gen := func(seed uint64, threads int) map[string][]byte {
		dir := t.TempDir()
		if _, err := Generate(context.Background(), dir, Options{Config: m.Config, Packed: true, Layers: 1, VocabSize: 300, Seed: seed, Threads: threads}); err != nil {
			t.Fatal(err)
		}
		return readAll(t, dir)
	}
	a, b, c := gen(5, 1), gen(5, 3), gen(6, 2)
	if !reflect.DeepEqual(a, b) {
		t.Error("seed 5 with 1 and 3 threads gave different files")
	}
	if bytes.Equal(a[hf.SingleFile], c[hf.SingleFile]) {
		t.Error("seeds 5 and 6 gave the same weights")
	}
	if !bytes.Equal(a[hf.ConfigFile], c[hf.ConfigFile]) {
		t.Error("config.json depends on the seed")
	}
}

// TestShards: past MaxShardBytes the checkpoint is split as save_pretrained
// does (model-0000i-of-0000N + index with total_size); hf.Open reads it back
// through the index with the same tensors as the single-file form.
func TestShards(t *testing.T) {
	m, _ := presets.Get("Llama3-8B-1.58-100B-tokens")
	opts := Options{Config: m.Config, Packed: true, Layers: 2, VocabSize: 1000, Seed: 3}
	single := t.TempDir()
	if _, err := Generate(context.Background(), single, opts); err != nil {
		t.Fatal(err)
	}
	opts.MaxShardBytes = 40_000_000 // a packed layer is ~54.5 MB: layers split across shards
	sharded := t.TempDir()
	res, err := Generate(context.Background(), sharded, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) < 3 {
		t.Fatalf("files %v, want at least 3 shards", res.Files)
	}
	// Shards are filled in module order, each within the limit, and named
	// model-0000i-of-0000N.
	shardOf := map[string]int{}
	for i, f := range res.Files {
		if want := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(res.Files)); f != want {
			t.Errorf("shard %d is %s, want %s", i, f, want)
		}
		h, err := hf.ReadHeader(filepath.Join(sharded, f))
		if err != nil {
			t.Fatal(err)
		}
		var size uint64
		for _, ref := range h.Tensors {
			shardOf[ref.Name] = i
			size += ref.Size
		}
		if size > opts.MaxShardBytes {
			t.Errorf("%s holds %d bytes, over the %d limit", f, size, opts.MaxShardBytes)
		}
	}
	prev := 0
	for _, x := range res.Tensors {
		if shardOf[x.Name] < prev {
			t.Errorf("%s is in shard %d after a tensor of shard %d: not module order", x.Name, shardOf[x.Name], prev)
		}
		prev = shardOf[x.Name]
	}
	wantFiles := res.Files
	var idx struct {
		Metadata struct {
			TotalSize uint64 `json:"total_size"`
		} `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	b, err := os.ReadFile(filepath.Join(sharded, hf.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Metadata.TotalSize != res.Bytes || len(idx.WeightMap) != len(res.Tensors) {
		t.Errorf("index total_size %d (want %d), %d entries (want %d)", idx.Metadata.TotalSize, res.Bytes, len(idx.WeightMap), len(res.Tensors))
	}
	for name, i := range shardOf {
		if idx.WeightMap[name] != wantFiles[i] {
			t.Errorf("weight_map puts %s in %s, it is in %s", name, idx.WeightMap[name], wantFiles[i])
		}
	}
	if idx.WeightMap["model.embed_tokens.weight"] != wantFiles[0] || idx.WeightMap["lm_head.weight"] != wantFiles[len(wantFiles)-1] {
		t.Errorf("embedding not first or lm_head not last: %v", idx.WeightMap)
	}
	a, err := hf.Open(single)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := hf.Open(sharded)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Notices) != 0 || len(s.Tensors) != len(a.Tensors) {
		t.Fatalf("sharded: %d tensors, notices %v; single: %d", len(s.Tensors), s.Notices, len(a.Tensors))
	}
	for _, ra := range a.Tensors {
		rs, ok := s.Lookup(ra.Name)
		if !ok {
			t.Fatalf("%s missing from the shards", ra.Name)
		}
		da, _ := a.Read(ra)
		ds, _ := s.Read(rs)
		if !bytes.Equal(da.Raw, ds.Raw) {
			t.Errorf("%s differs between single-file and sharded output", ra.Name)
		}
		da.Release()
		ds.Release()
	}
}

// TestTokenizerCopied: the tokenizer files are copied, .gz decompressed;
// without --tokenizer none are written.
func TestTokenizerCopied(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	src := "../testdata/tokenizers/llama2"
	dir := t.TempDir()
	res, err := Generate(context.Background(), dir, Options{Config: m.Config, Layers: 1, VocabSize: 64, Tokenizer: src})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tokenizer.json", "tokenizer.model"}; !reflect.DeepEqual(res.TokenizerFiles, want) {
		t.Errorf("copied %v, want %v", res.TokenizerFiles, want)
	}
	f, err := os.Open(filepath.Join(src, "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(zr)
	got, _ := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("tokenizer.json: %d bytes, want the %d decompressed bytes", len(got), len(want))
	}
	model, _ := os.ReadFile(filepath.Join(src, "tokenizer.model"))
	got, _ = os.ReadFile(filepath.Join(dir, "tokenizer.model"))
	if !bytes.Equal(got, model) {
		t.Error("tokenizer.model not copied byte for byte")
	}
	if _, err := os.Stat(filepath.Join(dir, "PACKAGE-LICENSE")); err == nil {
		t.Error("non-tokenizer file copied")
	}

	bare := t.TempDir()
	if _, err := Generate(context.Background(), bare, Options{Config: m.Config, Layers: 1, VocabSize: 64}); err != nil {
		t.Fatal(err)
	}
	names := readAll(t, bare)
	if len(names) != 2 || names[hf.ConfigFile] == nil || names[hf.SingleFile] == nil {
		t.Errorf("without a tokenizer the dir holds %d files, want config.json and model.safetensors", len(names))
	}
}

// TestConfigEdits: --layers, --packed and --linear-class edit config.json.
func TestConfigEdits(t *testing.T) {
	m, _ := presets.Get("BitNet-b1.58-2B-4T-bf16")
	cfg, ts, err := Plan(Options{Config: m.Config, Layers: 3, Packed: true, LinearClass: BitLinear})
	if err != nil {
		t.Fatal(err)
	}
	qc := cfg["quantization_config"].(map[string]any)
	if cfg["num_hidden_layers"] != 3 || qc["linear_class"] != BitLinear || qc["quantization_mode"] != "offline" || qc["quant_method"] != "bitnet" {
		t.Errorf("config %v", cfg)
	}
	if m.Config["num_hidden_layers"] == 3 || m.Config["quantization_config"].(map[string]any)["linear_class"] != AutoBitLinear {
		t.Error("Plan modified the preset's config")
	}
	if len(ts) != 1+3*18+1 {
		t.Errorf("%d tensors, want %d", len(ts), 1+3*18+1)
	}
	cfg, _, err = Plan(Options{Config: m.Config})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["quantization_config"].(map[string]any)["quantization_mode"] != "online" {
		t.Error("bf16 output should keep quantization_mode online")
	}
	f, _ := presets.Get("Falcon3-1B-Instruct-1.58bit")
	cfg, _, _ = Plan(Options{Config: f.Config, Packed: true})
	if _, set := cfg["quantization_config"].(map[string]any)["linear_class"]; set {
		t.Error("linear_class added although not asked for (Falcon3 has none: bitlinear by default)")
	}
}

// TestErrors: bad configurations and options fail naming the problem and
// leave nothing behind.
func TestErrors(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	odd := map[string]any{}
	for k, v := range m.Config {
		odd[k] = v
	}
	odd["num_key_value_heads"] = 1
	odd["num_attention_heads"] = 16
	odd["head_dim"] = 2 // k rows 2: not a multiple of 4
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"unknown arch", Options{Config: map[string]any{"architectures": []any{"GPT2LMHeadModel"}}}, `architecture "GPT2LMHeadModel" has no dummy layout`},
		{"no arch", Options{Config: map[string]any{}}, "no architectures entry"},
		{"missing size", Options{Config: map[string]any{"architectures": []any{"LlamaForCausalLM"}, "hidden_size": 8}}, `missing "intermediate_size"`},
		{"bad size", Options{Config: map[string]any{"architectures": []any{"LlamaForCausalLM"}, "hidden_size": 8.5}}, `"hidden_size" = 8.5, want an integer`},
		{"pack odd rows", Options{Config: odd, Packed: true, Layers: 1}, "k_proj.weight: 2 output rows are not a multiple of 4"},
		{"linear class unpacked", Options{Config: m.Config, LinearClass: BitLinear}, "needs packed weights"},
		{"linear class unknown", Options{Config: m.Config, Packed: true, LinearClass: "x"}, `linear class "x" is unknown`},
		{"tokenizer missing", Options{Config: m.Config, Tokenizer: "no/such/dir"}, "tokenizer:"},
		{"tokenizer empty", Options{Config: m.Config, Tokenizer: "."}, "holds none of tokenizer.json"},
	}
	for _, tc := range cases {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := Generate(context.Background(), dir, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: output directory created", tc.name)
		}
	}
}

// TestExistingAndCancel: an existing checkpoint needs Force (which clears
// stale shards); a cancelled run leaves no file behind.
func TestExistingAndCancel(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	dir := t.TempDir()
	opts := Options{Config: m.Config, Layers: 1, VocabSize: 64, MaxShardBytes: 10_000_000}
	if _, err := Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), dir, opts); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second run: %v, want ErrExists suggesting --force", err)
	}
	opts.Force, opts.MaxShardBytes = true, 0
	if _, err := Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	if names := readAll(t, dir); len(names) != 2 {
		t.Errorf("after --force the dir holds %d files (stale shards?), want 2", len(names))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	empty := t.TempDir()
	if _, err := Generate(ctx, empty, Options{Config: m.Config, Layers: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if names := readAll(t, empty); len(names) != 0 {
		t.Errorf("cancelled run left %d files", len(names))
	}
}

// TestPackedCodesUnpackToTernary decodes one packed tensor as spec §2.4
// describes (row block i from bits 2i..2i+1, code − 1) and checks every
// value is −1, 0 or +1.
func TestPackedCodesUnpackToTernary(t *testing.T) {
	var buf [4096]byte
	for i := range buf {
		buf[i] = packedBytes[i%81]
	}
	seen := map[int]bool{}
	for _, b := range buf {
		for i := 0; i < 4; i++ {
			v := int(b>>(2*i)&3) - 1
			if v < -1 || v > 1 {
				t.Fatalf("byte %#x gives %d", b, v)
			}
			seen[v] = true
		}
	}
	if len(seen) != 3 {
		t.Errorf("values %v, want all of -1, 0, 1", seen)
	}
}

// FuzzLayout: any config.json map (decoded from JSON) gives a layout or an
// error, never a panic, and a layout's shapes follow the config.
func FuzzLayout(f *testing.F) {
	for _, m := range presets.All() {
		b, _ := json.Marshal(m.Config)
		f.Add(string(b), m.Packed)
	}
	f.Add(`{"architectures":["LlamaForCausalLM"],"hidden_size":6,"num_attention_heads":4,"intermediate_size":1,"vocab_size":1,"num_hidden_layers":1}`, true)
	f.Add(`{"architectures":["Qwen3Model"],"hidden_size":1e300}`, false)
	f.Fuzz(func(t *testing.T, js string, packed bool) {
		var cfg map[string]any
		if json.Unmarshal([]byte(js), &cfg) != nil {
			return
		}
		if n, ok, _ := (&hf.Config{Raw: cfg}).Int("num_hidden_layers", "n_layers", "n_layer"); ok && n > 64 {
			return // keep each case small
		}
		ts, err := Layout(cfg, packed)
		if err != nil {
			return
		}
		g, err := ReadGeometry(cfg)
		if err != nil {
			t.Fatalf("Layout succeeded but ReadGeometry failed: %v", err)
		}
		for _, x := range ts {
			if x.Role == Embedding && (x.Shape[0] != uint64(g.Vocab) || x.Shape[1] != uint64(g.Hidden)) {
				t.Fatalf("%s shape %v for vocab %d hidden %d", x.Name, x.Shape, g.Vocab, g.Hidden)
			}
			if x.DType == hf.U8 && !packed {
				t.Fatalf("%s is U8 without packing", x.Name)
			}
		}
	})
}

// groupConfig is a small LlamaForCausalLM config with a BitNet
// quantization_config, which GroupScaled removes.
func groupConfig() map[string]any {
	return map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 384, "num_hidden_layers": 1, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 300, "rms_norm_eps": 1e-5, "max_position_embeddings": 512,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// TestGroupScaled: --group-scaled projections are F16 with, in every 128
// inputs of a row, one magnitude d (an f16 in [0.01, 0.03]) and all three
// codes across the tensor; config.json has no quantization_config; other
// tensors stay bf16. Packed and a row length that is not a multiple of 128
// are refused.
func TestGroupScaled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g")
	res, err := Generate(context.Background(), dir, Options{Config: groupConfig(), GroupScaled: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Config["quantization_config"]; ok {
		t.Error("quantization_config kept")
	}
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	projections := 0
	for _, ref := range ck.Tensors {
		isProj := strings.Contains(ref.Name, "_proj.")
		if !isProj {
			if ref.DType != hf.BF16 {
				t.Errorf("%s is %s, want BF16", ref.Name, ref.DType)
			}
			continue
		}
		projections++
		if ref.DType != hf.F16 {
			t.Fatalf("%s is %s, want F16", ref.Name, ref.DType)
		}
		d, err := ck.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Float32s(nil)
		d.Release()
		if err != nil {
			t.Fatal(err)
		}
		codes := map[int]int{}
		for g := 0; g < len(v); g += GroupSize {
			var s float32
			for _, w := range v[g : g+GroupSize] {
				a := float32(math.Abs(float64(w)))
				switch {
				case a == 0:
					codes[0]++
					continue
				case s == 0:
					s = a
				case a != s:
					t.Fatalf("%s: group %d holds %v and %v", ref.Name, g/GroupSize, s, a)
				}
				codes[int(math.Copysign(1, float64(w)))]++
			}
			if s < 0.01 || s > 0.03 || quantize.F16ToF32(quantize.F32ToF16(s)) != s {
				t.Fatalf("%s: group %d scale %v outside [0.01, 0.03] or not an f16", ref.Name, g/GroupSize, s)
			}
		}
		if len(codes) != 3 {
			t.Errorf("%s: codes %v, want all three", ref.Name, codes)
		}
	}
	if projections != 7 {
		t.Errorf("%d projections, want 7", projections)
	}
	if _, err := Generate(context.Background(), filepath.Join(t.TempDir(), "p"), Options{Config: groupConfig(), GroupScaled: true, Packed: true}); err == nil || !strings.Contains(err.Error(), "packed") {
		t.Errorf("packed: %v", err)
	}
	cfg := groupConfig()
	cfg["intermediate_size"] = 320
	if _, err := Generate(context.Background(), filepath.Join(t.TempDir(), "r"), Options{Config: cfg, GroupScaled: true}); err == nil || !strings.Contains(err.Error(), "down_proj.weight has shape [256 320]") {
		t.Errorf("rows of 320: %v", err)
	}
}
