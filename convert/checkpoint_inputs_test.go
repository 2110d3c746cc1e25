package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// BR-06: packed U8 weights with a 0-d bf16 weight_scale (2B-4T shapes) are
// unpacked along dim 0; the scale becomes the I2_S scale as is for
// autobitlinear and as 1/ws for bitlinear; no weight_scale tensor is written.
func TestBR06PackedZeroDimScale(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 2B-4T-shaped layer")
	}
	const hidden, ff, heads, kv, vocab = 2560, 6912, 20, 5, 256
	headDim := hidden / heads
	ws := float32(0.75) // exact in bf16
	for _, lc := range []string{"autobitlinear", "bitlinear"} {
		t.Run(lc, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteJSON(t, filepath.Join(dir, "config.json"), map[string]any{
				"architectures": []any{"BitNetForCausalLM"}, "hidden_size": hidden, "intermediate_size": ff,
				"num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": vocab,
				"rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "relu2", "tie_word_embeddings": true,
				"quantization_config": map[string]any{"quant_method": "bitnet", "linear_class": lc, "quantization_mode": "offline"},
			})
			p := "model.layers.0."
			packed := func(name string, rows, cols uint64) []hf.WriteTensor {
				b := make([]byte, rows*cols)
				for i := range b {
					b[i] = byte(i*37+int(rows)) & 0b10101010 // codes 0 or 2 in every pair: −1/+1
					if i%5 == 0 {
						b[i] = 0x55 // all zero codes
					}
				}
				return []hf.WriteTensor{
					{Name: name + ".weight", DType: hf.U8, Shape: []uint64{rows, cols}, Data: hf.RawData(b)},
					{Name: name + ".weight_scale", DType: hf.BF16, Shape: []uint64{}, Data: hf.RawData(testutil.BF16Bytes([]float32{ws}))},
				}
			}
			ts := []hf.WriteTensor{randomBF16("model.embed_tokens.weight", 1, vocab, hidden), onesBF16("model.norm.weight", hidden),
				onesBF16(p+"input_layernorm.weight", hidden), onesBF16(p+"post_attention_layernorm.weight", hidden),
				onesBF16(p+"self_attn.attn_sub_norm.weight", hidden), onesBF16(p+"mlp.ffn_sub_norm.weight", ff)}
			ts = append(ts, packed(p+"self_attn.q_proj", hidden/4, hidden)...)
			ts = append(ts, packed(p+"self_attn.k_proj", uint64(kv*headDim)/4, hidden)...)
			ts = append(ts, packed(p+"self_attn.v_proj", uint64(kv*headDim)/4, hidden)...)
			ts = append(ts, packed(p+"self_attn.o_proj", hidden/4, hidden)...)
			ts = append(ts, packed(p+"mlp.gate_proj", ff/4, hidden)...)
			ts = append(ts, packed(p+"mlp.up_proj", ff/4, hidden)...)
			ts = append(ts, packed(p+"mlp.down_proj", hidden/4, ff)...)
			if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
				t.Fatal(err)
			}
			out, plan, err := convertDir(t, dir, Options{NoVocab: true})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Arch != "bitnet-b1.58" {
				t.Errorf("arch %q", plan.Arch)
			}
			f := openGGUF(t, out)
			for name, ne := range map[string][]uint64{"blk.0.ffn_down.weight": {6912, 2560}, "blk.0.attn_k.weight": {2560, 640}} {
				ti, ok := f.Tensor(name)
				if !ok || !reflect.DeepEqual(ti.Ne, ne) || ti.Type != gguf.TypeI2S {
					t.Errorf("%s: %v %v, want I2_S ne %v", name, ti.Type, ti.Ne, ne)
				}
			}
			for _, ti := range f.Tensors {
				if strings.Contains(ti.Name, "scale") {
					t.Errorf("%s written as a tensor", ti.Name)
				}
			}
			// Codes: unpacked along axis 0, value = code − 1.
			d, _ := f.TensorData("blk.0.attn_k.weight")
			codes := make([]int8, 640*2560)
			unpackI2S(codes, d)
			src := make([]byte, 160*2560)
			for i := range src {
				src[i] = byte(i*37+160) & 0b10101010
				if i%5 == 0 {
					src[i] = 0x55
				}
			}
			want := make([]int8, len(codes))
			quantize.UnpackPackedU8(want, src, 160, 2560)
			if !reflect.DeepEqual(codes, want) {
				t.Error("attn_k codes are not the axis-0 unpacking of the U8 tensor")
			}
			wantScale := ws
			if lc == "bitlinear" {
				wantScale = 1 / ws
			}
			if s := i2sScale(d); s != wantScale {
				t.Errorf("scale %v, want %v", s, wantScale)
			}
		})
	}
}

// BR-19: tied embeddings with and without lm_head.
func TestBR19TiedHead(t *testing.T) {
	_, refs, raw := goldenTensors(t)
	emb := raw["model.embed_tokens.weight"]
	withHead := func(t *testing.T, tie bool, head []byte) string {
		dir := copyGolden(t)
		testutil.EditConfig(t, dir, func(c map[string]any) { c["tie_word_embeddings"] = tie })
		if head != nil {
			var ts []hf.WriteTensor
			for _, r := range refs {
				ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(raw[r.Name])})
			}
			ts = append(ts, hf.WriteTensor{Name: "lm_head.weight", DType: hf.BF16, Shape: []uint64{512, 256}, Data: hf.RawData(head)})
			if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	hasOutput := func(t *testing.T, path string) bool {
		_, ok := openGGUF(t, path).Tensor("output.weight")
		return ok
	}
	t.Run("a tied, no lm_head", func(t *testing.T) {
		out, _, err := convertDir(t, withHead(t, true, nil), Options{})
		if err != nil || hasOutput(t, out) {
			t.Fatalf("err %v, output written %v", err, err == nil && hasOutput(t, out))
		}
	})
	t.Run("b untied, no lm_head", func(t *testing.T) {
		dir := withHead(t, false, nil)
		_, _, err := convertDir(t, dir, Options{})
		if err == nil || !strings.Contains(err.Error(), "lm_head.weight") {
			t.Fatalf("err = %v, want one naming lm_head.weight", err)
		}
		out, p, err := convertDir(t, dir, Options{AllowTieFallback: true})
		if err != nil || hasOutput(t, out) || !containsWarning(p, "lm_head.weight is missing") {
			t.Fatalf("--allow-tie-fallback: err %v", err)
		}
	})
	t.Run("c tied, identical lm_head", func(t *testing.T) {
		out, p, err := convertDir(t, withHead(t, true, emb), Options{})
		if err != nil || hasOutput(t, out) || !containsWarning(p, "output.weight not written") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("d tied, different lm_head", func(t *testing.T) {
		other := append([]byte(nil), emb...)
		other[10] ^= 0x40
		out, p, err := convertDir(t, withHead(t, true, other), Options{})
		if err != nil || !hasOutput(t, out) || !containsWarning(p, "differs") {
			t.Fatalf("err %v", err)
		}
		ti, _ := openGGUF(t, out).Tensor("output.weight")
		if ti.Type != gguf.TypeF16 {
			t.Errorf("output.weight type %v, want F16", ti.Type)
		}
	})
}

func containsWarning(p *Plan, s string) bool {
	if p == nil {
		return false
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// BR-20 at the converter level: the golden checkpoint split over two shards
// with an index converts to the same file as the single file; a stray
// model.safetensors beside the index is ignored with a notice.
func TestBR20Sharded(t *testing.T) {
	wantPath := convertGolden(t, OutI2S)
	_, refs, raw := goldenTensors(t)
	dir := copyGolden(t)
	os.Rename(filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "stray.bin"))
	shards := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	var parts [2][]hf.WriteTensor
	wm := map[string]string{}
	for i, r := range refs {
		s := i % 2
		parts[s] = append(parts[s], hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(raw[r.Name])})
		wm[r.Name] = shards[s]
	}
	for s := range shards {
		if err := hf.WriteSafetensors(filepath.Join(dir, shards[s]), parts[s], nil); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WriteJSON(t, filepath.Join(dir, "model.safetensors.index.json"), map[string]any{"metadata": map[string]any{}, "weight_map": wm})
	// a stray single file with other content
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), []hf.WriteTensor{{Name: "model.norm.weight", DType: hf.F32, Shape: []uint64{1}, Data: hf.RawData(f32Bytes([]float32{9}))}}, nil); err != nil {
		t.Fatal(err)
	}
	out, p, err := convertDir(t, dir, Options{ModelName: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	// Tensor order follows the shards (spec §5.4), so compare by name.
	g, w := openGGUF(t, out), openGGUF(t, wantPath)
	if len(g.Tensors) != len(w.Tensors) {
		t.Fatalf("%d tensors, want %d", len(g.Tensors), len(w.Tensors))
	}
	for _, ti := range w.Tensors {
		a, err1 := g.TensorData(ti.Name)
		b, err2 := w.TensorData(ti.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("tensor %s differs (%v, %v)", ti.Name, err1, err2)
		}
	}
	if !containsWarning(p, "model.safetensors") {
		t.Errorf("no notice about the stray file: %q", p.Warnings)
	}
}

// BR-22: bf16 values beyond the f16 range fail an f16 conversion naming the
// tensor and max|value|; f32 output is exact; non-finite weights are refused.
func TestBR22Bf16Range(t *testing.T) {
	_, refs, raw := goldenTensors(t)
	build := func(t *testing.T, special []float32) string {
		dir := copyGolden(t)
		var ts []hf.WriteTensor
		for _, r := range refs {
			b := raw[r.Name]
			if r.Name == "model.layers.0.input_layernorm.weight" {
				v := make([]float32, 256)
				for i := range v {
					v[i] = 1
				}
				copy(v, special)
				b = testutil.BF16Bytes(v)
			}
			ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(b)})
		}
		if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	sub := math.Float32frombits(0x00010000) // a bf16 subnormal
	finite := []float32{70000, -1e-8, 3.0e38, sub}
	dir := build(t, finite)
	// Norms are F32 in every outtype, so out-of-f16-range norm values are
	// fine even with --outtype f16.
	if _, _, err := convertDir(t, dir, Options{OutType: OutF16}); err != nil {
		t.Fatalf("f16 with large norm values: %v", err)
	}
	out, _, err := convertDir(t, dir, Options{OutType: OutF32})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := openGGUF(t, out).TensorData("blk.0.attn_norm.weight")
	for i, v := range finite {
		want := quantize.BF16ToF32(quantize.F32ToBF16(v))
		if got := math.Float32frombits(uint32(d[4*i]) | uint32(d[4*i+1])<<8 | uint32(d[4*i+2])<<16 | uint32(d[4*i+3])<<24); got != want {
			t.Errorf("value %d: %v, want %v", i, got, want)
		}
	}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		_, _, err := convertDir(t, build(t, []float32{bad}), Options{OutType: OutF32})
		if err == nil || !strings.Contains(err.Error(), "model.layers.0.input_layernorm.weight") || !strings.Contains(err.Error(), "non-finite") {
			t.Errorf("%v: err = %v, want a non-finite error naming the tensor", bad, err)
		}
	}
	// The f16 range check on an F16 tensor (the embedding).
	dir = copyGolden(t)
	var ts []hf.WriteTensor
	for _, r := range refs {
		b := raw[r.Name]
		if r.Name == "model.embed_tokens.weight" {
			b = append([]byte(nil), b...)
			copy(b, testutil.BF16Bytes([]float32{70000}))
		}
		ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(b)})
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		t.Fatal(err)
	}
	for _, ot := range []OutType{OutF16, OutI2S} {
		_, _, err = convertDir(t, dir, Options{OutType: ot})
		if err == nil || !strings.Contains(err.Error(), "model.embed_tokens.weight") || !strings.Contains(err.Error(), "70144") {
			// 70000 is 70144 once rounded to bf16
			t.Errorf("%s: err = %v, want an F16 range error naming the tensor and 70144", ot, err)
		}
	}
	if _, _, err := convertDir(t, dir, Options{OutType: OutBF16}); err != nil {
		t.Errorf("bf16: %v", err)
	}
}

// BR-25: a projection whose row length is not a multiple of 128 is refused
// as I2_S naming it and K, unless --allow-fallback writes it as F16 and lists
// it.
func TestBR25RowLength(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 2048×5460 layer")
	}
	dir := t.TempDir()
	bitnetFixture(t, dir, llamaLayout{hidden: 2048, ff: 5460, heads: 16, kv: 16, vocab: 256, layers: 1}, nil)
	_, _, err := convertDir(t, dir, Options{NoVocab: true})
	if err == nil || !strings.Contains(err.Error(), "ffn_down") || !strings.Contains(err.Error(), "K=5460") {
		t.Fatalf("err = %v, want one naming ffn_down and K=5460", err)
	}
	out, p, err := convertDir(t, dir, Options{NoVocab: true, AllowFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := openGGUF(t, out).Tensor("blk.0.ffn_down.weight")
	if ti.Type != gguf.TypeF16 || !containsWarning(p, "blk.0.ffn_down.weight") {
		t.Errorf("ffn_down %v, warnings %q", ti.Type, p.Warnings)
	}
	ti, _ = openGGUF(t, out).Tensor("blk.0.ffn_up.weight")
	if ti.Type != gguf.TypeI2S {
		t.Errorf("ffn_up %v, want I2_S (K=2048)", ti.Type)
	}
}

// BR-02 (SentencePiece half): a directory with only tokenizer.model uses the
// SentencePiece path; with no tokenizer at all the error names the files
// looked for, unless --no-vocab.
func TestBR02Tokenizer(t *testing.T) {
	out := convertGolden(t, OutI2S)
	if m, _ := openGGUF(t, out).String("tokenizer.ggml.model"); m != "llama" {
		t.Errorf("tokenizer.ggml.model %q, want llama", m)
	}
	dir := copyGolden(t)
	os.Remove(filepath.Join(dir, "tokenizer.model"))
	_, _, err := convertDir(t, dir, Options{})
	if !errors.Is(err, ErrNoTokenizer) || !strings.Contains(err.Error(), "tokenizer.model") || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("err = %v", err)
	}
	out, _, err = convertDir(t, dir, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := openGGUF(t, out).Get("tokenizer.ggml.tokens"); ok {
		t.Error("--no-vocab wrote tokens")
	}
}

// BR-15: head_dim ≠ hidden/heads is written to rope.dimension_count,
// key_length and value_length, and shapes are checked against heads×head_dim.
func TestBR15HeadDim(t *testing.T) {
	dir := t.TempDir()
	bitnetFixture(t, dir, llamaLayout{hidden: 640, ff: 256, heads: 4, kv: 2, headDim: 128, vocab: 64, layers: 1}, nil)
	out, _, err := convertDir(t, dir, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	f := openGGUF(t, out)
	for _, k := range []string{"rope.dimension_count", "attention.key_length", "attention.value_length"} {
		if v, ok := f.Uint("bitnet." + k); !ok || v != 128 {
			t.Errorf("bitnet.%s = %d, %v; want 128", k, v, ok)
		}
	}
	// q_proj rows that disagree with heads × head_dim: both numbers named.
	dir2 := t.TempDir()
	bitnetFixture(t, dir2, llamaLayout{hidden: 640, ff: 256, heads: 4, kv: 2, headDim: 128, vocab: 64, layers: 1}, func(c map[string]any) { c["head_dim"] = 96 })
	_, _, err = convertDir(t, dir2, Options{NoVocab: true})
	if err == nil || !strings.Contains(err.Error(), "512") || !strings.Contains(err.Error(), "384") {
		t.Fatalf("err = %v, want one naming 512 rows and 4×96=384", err)
	}
	// head_dim absent: hidden/heads, and no key_length.
	dir3 := t.TempDir()
	bitnetFixture(t, dir3, llamaLayout{hidden: 512, ff: 256, heads: 4, kv: 2, vocab: 64, layers: 1}, func(c map[string]any) { c["head_dim"] = nil })
	out, _, err = convertDir(t, dir3, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	f = openGGUF(t, out)
	if v, _ := f.Uint("bitnet.rope.dimension_count"); v != 128 {
		t.Errorf("rope.dimension_count %d, want 128", v)
	}
	if _, ok := f.Get("bitnet.attention.key_length"); ok {
		t.Error("key_length written although head_dim = hidden/heads")
	}
}

// A tensor that maps to no GGUF name stops the run naming it.
func TestUnmappedTensor(t *testing.T) {
	_, refs, raw := goldenTensors(t)
	dir := copyGolden(t)
	var ts []hf.WriteTensor
	for _, r := range refs {
		ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(raw[r.Name])})
	}
	ts = append(ts, hf.WriteTensor{Name: "model.layers.0.mlp.extra_proj.weight", DType: hf.F32, Shape: []uint64{2}, Data: hf.RawData(make([]byte, 8))})
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := convertDir(t, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "model.layers.0.mlp.extra_proj.weight") {
		t.Fatalf("err = %v", err)
	}
}

// The 2B-4T sub-norm names convert like the 1bitLLM ones.
func TestSubNormSpellings(t *testing.T) {
	var plans []*Plan
	for _, names := range [][2]string{{"self_attn.inner_attn_ln", "mlp.ffn_layernorm"}, {"self_attn.attn_sub_norm", "mlp.ffn_sub_norm"}} {
		dir := t.TempDir()
		bitnetFixture(t, dir, llamaLayout{hidden: 256, ff: 512, heads: 4, kv: 2, vocab: 64, layers: 2, subNorms: names}, nil)
		out, p, err := convertDir(t, dir, Options{NoVocab: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := openGGUF(t, out).Tensor("blk.1.ffn_sub_norm.weight"); !ok {
			t.Errorf("%v: no blk.1.ffn_sub_norm.weight", names)
		}
		plans = append(plans, p)
	}
	if len(plans[0].Tensors) != len(plans[1].Tensors) {
		t.Error("tensor counts differ")
	}
	b, _ := json.Marshal(plans[0].Summary())
	c, _ := json.Marshal(plans[1].Summary())
	if !bytes.Equal(b, c) {
		t.Errorf("summaries differ: %s vs %s", b, c)
	}
}

// A checkpoint missing a tensor the architecture needs (or with fewer layers
// than num_hidden_layers says) is refused, naming what is missing, instead of
// giving a GGUF no runtime can load.
func TestMissingTensors(t *testing.T) {
	_, refs, raw := goldenTensors(t)
	for _, drop := range []string{"model.layers.0.self_attn.q_proj.weight", "model.norm.weight", "model.layers.1.self_attn.inner_attn_ln.weight"} {
		dir := copyGolden(t)
		var ts []hf.WriteTensor
		for _, r := range refs {
			if r.Name != drop {
				ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(raw[r.Name])})
			}
		}
		if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
		_, _, err := convertDir(t, dir, Options{})
		want := map[string]string{"model.layers.0.self_attn.q_proj.weight": "blk.0.attn_q.weight", "model.norm.weight": "output_norm.weight", "model.layers.1.self_attn.inner_attn_ln.weight": "blk.1.attn_sub_norm.weight"}[drop]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without %s: err = %v, want one naming %s", drop, err, want)
		}
	}
	dir := copyGolden(t)
	testutil.EditConfig(t, dir, func(c map[string]any) { c["num_hidden_layers"] = 3 })
	_, _, err := convertDir(t, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "blk.2.attn_q.weight") || !strings.Contains(err.Error(), "num_hidden_layers") {
		t.Errorf("3 layers in config, 2 in the checkpoint: err = %v", err)
	}
}

// Physically meaningless hyper-parameters are refused naming the key that
// holds them (not the first alias of the lookup list).
func TestBadHyperParameters(t *testing.T) {
	for _, tc := range []struct {
		key  string
		val  any
		want string
	}{
		{"rms_norm_eps", -1.0, `"rms_norm_eps" = -1`},
		{"rms_norm_eps", 0.0, `"rms_norm_eps" = 0`},
		{"rope_theta", 0.0, `"rope_theta" = 0`},
		{"max_position_embeddings", 0, `"max_position_embeddings" = 0`},
		{"num_hidden_layers", int64(1 << 40), "num_hidden_layers is 1099511627776 but the checkpoint has only 24 tensors"},
		{"rope_scaling", "weird", `"rope_scaling" must be an object`},
	} {
		dir := copyGolden(t)
		testutil.EditConfig(t, dir, func(c map[string]any) { c[tc.key] = tc.val })
		_, _, err := convertDir(t, dir, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %v: err = %v, want %q", tc.key, tc.val, err, tc.want)
		}
	}
}
