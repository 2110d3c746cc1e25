package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// hfBitnetCase is one HF BitNet architecture of the any-architecture table
// (README "Ternary checkpoints beyond BitNet"), at reduced size: hidden 256
// so every row length fits the 256-blocks of TQ1_0/TQ2_0 (512 for Mistral,
// whose IQ1_BN/IQ2_BN rows need 512), a 512-token vocabulary, 2 layers. The keys and values besides the sizes are those of
// the published model named (Mistral-7B-v0.3, Qwen2.5-0.5B, Qwen3-0.6B
// config.json on the Hugging Face hub).
type hfBitnetCase struct {
	name string
	// hidden, q, kv and ff are the sizes of the tensor table (q = hidden
	// when 0).
	hidden, q, kv, ff int
	cfg               func() map[string]any
	arch              string // GGUF arch written
	// accept are the outtypes hf2gguf writes; every other one is refused.
	accept []OutType
	// refuse is the substring of the refusal of the bitnet.cpp outtypes.
	refuse string
	tied   bool
	// extra are the per-block tensors besides the llama set, with their
	// GGUF ne (type F32).
	extra map[string]string
	// kvs are the architecture KVs, exactly (key → value as %v).
	kvs map[string]string
}

func mistralConfig() map[string]any {
	return map[string]any{
		"architectures": []any{"MistralForCausalLM"}, "model_type": "mistral", "hidden_act": "silu",
		"hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
		"max_position_embeddings": 32768, "sliding_window": nil, "tie_word_embeddings": false,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

func qwen2Config() map[string]any {
	return map[string]any{
		"architectures": []any{"Qwen2ForCausalLM"}, "model_type": "qwen2", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
		"max_position_embeddings": 32768, "sliding_window": 32768, "use_sliding_window": false, "max_window_layers": 24,
		"tie_word_embeddings": true,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// qwen3Config imitates Qwen3-0.6B: head_dim 128 although hidden/heads is
// 64 (q is 2 × hidden wide), tied embeddings.
func qwen3Config() map[string]any {
	return map[string]any{
		"architectures": []any{"Qwen3ForCausalLM"}, "model_type": "qwen3", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "head_dim": 128, "vocab_size": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
		"max_position_embeddings": 40960, "attention_bias": false, "use_sliding_window": false, "sliding_window": nil,
		"tie_word_embeddings": true,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// qwen3UntiedConfig is qwen3Config with an untied head (as Qwen3-8B).
func qwen3UntiedConfig() map[string]any {
	c := qwen3Config()
	c["tie_word_embeddings"] = false
	return c
}

var mainlineOutTypes = []OutType{OutF32, OutF16, OutBF16, OutTQ1_0, OutTQ2_0, OutType("q2_0")}

func hfBitnetCases() []hfBitnetCase {
	llamaKVs := map[string]string{
		"llama.block_count": "2", "llama.context_length": "32768", "llama.embedding_length": "512",
		"llama.feed_forward_length": "1024", "llama.attention.head_count": "8", "llama.attention.head_count_kv": "2",
		"llama.rope.freq_base": "1e+06", "llama.attention.layer_norm_rms_epsilon": "1e-05",
		"llama.vocab_size": "512", "llama.rope.dimension_count": "64",
	}
	return []hfBitnetCase{
		{name: "mistral", hidden: 512, kv: 128, ff: 1024, cfg: mistralConfig, arch: "llama", accept: OutTypes, kvs: llamaKVs},
		{name: "qwen2", hidden: 256, kv: 128, ff: 512, cfg: qwen2Config, arch: "qwen2", accept: mainlineOutTypes, tied: true,
			refuse: "bitnet.cpp has no causal qwen2 graph",
			extra:  map[string]string{"attn_q.bias": "[256]", "attn_k.bias": "[128]", "attn_v.bias": "[128]"},
			kvs: map[string]string{
				"qwen2.block_count": "2", "qwen2.context_length": "32768", "qwen2.embedding_length": "256",
				"qwen2.feed_forward_length": "512", "qwen2.attention.head_count": "4", "qwen2.attention.head_count_kv": "2",
				"qwen2.rope.freq_base": "1e+06", "qwen2.attention.layer_norm_rms_epsilon": "1e-06",
			}},
		qwen3Case("qwen3", qwen3Config, true),
		qwen3Case("qwen3-untied", qwen3UntiedConfig, false),
	}
}

// qwen3Case is the causal Qwen3 row of the table: the q/k norms [head_dim]
// and the key_length / value_length mainline's Qwen3Model writes from
// head_dim.
func qwen3Case(name string, cfg func() map[string]any, tied bool) hfBitnetCase {
	return hfBitnetCase{name: name, hidden: 256, q: 512, kv: 256, ff: 512, cfg: cfg, arch: "qwen3", accept: mainlineOutTypes, tied: tied,
		refuse: "bitnet.cpp has no causal qwen3 graph",
		extra:  map[string]string{"attn_q_norm.weight": "[128]", "attn_k_norm.weight": "[128]"},
		kvs: map[string]string{
			"qwen3.block_count": "2", "qwen3.context_length": "40960", "qwen3.embedding_length": "256",
			"qwen3.feed_forward_length": "512", "qwen3.attention.head_count": "4", "qwen3.attention.head_count_kv": "2",
			"qwen3.rope.freq_base": "1e+06", "qwen3.attention.layer_norm_rms_epsilon": "1e-06",
			"qwen3.attention.key_length": "128", "qwen3.attention.value_length": "128",
		}}
}

// expectedTable is the tensor table (name → TYPE[ne]) of c converted to
// outtype o: projections in o's type, token_embd (and an untied output)
// F16 for a ternary outtype, else o's float type; norms and biases F32.
func (c hfBitnetCase) expectedTable(o OutType) map[string]string {
	proj, emb := "", ""
	switch o {
	case OutF32:
		proj, emb = "F32", "F32"
	case OutF16:
		proj, emb = "F16", "F16"
	case OutBF16:
		proj, emb = "BF16", "BF16"
	default:
		proj, emb = strings.ToUpper(string(o)), "F16"
	}
	h, q, kv, ff := c.hidden, c.q, c.kv, c.ff
	if q == 0 {
		q = h
	}
	m := map[string]string{"token_embd.weight": fmt.Sprintf("%s[%d 512]", emb, h), "output_norm.weight": fmt.Sprintf("F32[%d]", h)}
	if !c.tied {
		m["output.weight"] = m["token_embd.weight"]
	}
	for i := 0; i < 2; i++ {
		b := fmt.Sprintf("blk.%d.", i)
		m[b+"attn_norm.weight"] = fmt.Sprintf("F32[%d]", h)
		m[b+"ffn_norm.weight"] = fmt.Sprintf("F32[%d]", h)
		m[b+"attn_q.weight"] = fmt.Sprintf("%s[%d %d]", proj, h, q)
		m[b+"attn_k.weight"] = fmt.Sprintf("%s[%d %d]", proj, h, kv)
		m[b+"attn_v.weight"] = fmt.Sprintf("%s[%d %d]", proj, h, kv)
		m[b+"attn_output.weight"] = fmt.Sprintf("%s[%d %d]", proj, q, h)
		m[b+"ffn_gate.weight"] = fmt.Sprintf("%s[%d %d]", proj, h, ff)
		m[b+"ffn_up.weight"] = fmt.Sprintf("%s[%d %d]", proj, h, ff)
		m[b+"ffn_down.weight"] = fmt.Sprintf("%s[%d %d]", proj, ff, h)
		for name, ne := range c.extra {
			m[b+name] = "F32" + ne
		}
	}
	return m
}

// TestHFBitnetArchs converts each HF BitNet architecture, packed
// (bitlinear: divide, autobitlinear: multiply) and as bf16 masters
// (online), to every outtype: the accepted ones give the tensor table and
// the architecture KVs mainline's convert_hf_to_gguf.py writes for the
// arch (LlamaModel for Mistral, Qwen2Model), the refused ones one line
// naming the arch.
func TestHFBitnetArchs(t *testing.T) {
	for _, c := range hfBitnetCases() {
		for _, mode := range []struct {
			name   string
			packed bool
			lc     string
		}{{"packed-bitlinear", true, dummy.BitLinear}, {"packed-autobitlinear", true, dummy.AutoBitLinear}, {"online", false, ""}} {
			t.Run(c.name+"/"+mode.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "hf")
				if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: c.cfg(), Packed: mode.packed, LinearClass: mode.lc, Seed: 5}); err != nil {
					t.Fatal(err)
				}
				for _, o := range OutTypes {
					accepted := false
					for _, a := range c.accept {
						accepted = accepted || a == o
					}
					out := filepath.Join(t.TempDir(), string(o)+".gguf")
					_, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: o, NoVocab: true})
					if !accepted {
						if err == nil {
							t.Errorf("%s: written, want a refusal", o)
						} else if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, c.arch) {
							t.Errorf("%s: refusal %q is not one line naming %s", o, msg, c.arch)
						} else if c.refuse != "" && (o == OutI2S || o == OutTL1 || o == OutTL2) && (!strings.Contains(msg, c.refuse) || !strings.Contains(msg, "tq2_0")) {
							t.Errorf("%s: refusal %q, want %q and a suggestion", o, msg, c.refuse)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s: %v", o, err)
						continue
					}
					got, f := ggufTable(t, out)
					diffTables(t, string(o), got, c.expectedTable(o))
					if a := f.Arch(); a != c.arch {
						t.Errorf("%s: general.architecture %q, want %q", o, a, c.arch)
					}
					have := map[string]string{}
					for _, kv := range f.KVs {
						if strings.HasPrefix(kv.Key, c.arch+".") {
							have[kv.Key] = fmt.Sprint(kv.Value.V)
						}
					}
					diffTables(t, string(o)+" KVs", have, c.kvs)
				}
			})
		}
	}
}

// TestQwen2BiasesAndRowOrder: qwen2's q/k/v biases are written F32, each
// value the bf16 of the checkpoint exactly, and its q/k rows keep HF order
// (NEOX rope: no LlamaModel.permute), checked on the F32 output of a packed
// checkpoint, whose projections are code · scale, row by row against the
// HF codes.
func TestQwen2BiasesAndRowOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen2Config(), Packed: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "f32.gguf")
	if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: OutF32, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := OpenSource(dir, Options{NoVocab: true, OutType: OutF32})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, name := range []string{"blk.1.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"} {
		pt, ok := src.Tensor(name)
		if !ok {
			t.Fatalf("%s not planned", name)
		}
		d, err := src.ckpt.Read(pt.Source)
		if err != nil {
			t.Fatal(err)
		}
		raw := append([]byte(nil), d.Raw...)
		d.Release()
		data, err := f.TensorData(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 2*len(raw) {
			t.Fatalf("%s: %d bytes, want %d (F32 of %d bf16)", name, len(data), 2*len(raw), len(raw)/2)
		}
		nonzero := 0
		for i := 0; i < len(raw)/2; i++ {
			want := quantize.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
			got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			if got != want {
				t.Fatalf("%s[%d] = %v, want %v", name, i, got, want)
			}
			if got != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Fatalf("%s: all zero", name)
		}
	}
	for _, name := range []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight"} {
		pt, _ := src.Tensor(name)
		d, err := src.ckpt.Read(pt.Source)
		if err != nil {
			t.Fatal(err)
		}
		codes, _, _, err := src.conv.ternary(context.Background(), &pt, d)
		d.Release()
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.TensorData(name)
		if err != nil {
			t.Fatal(err)
		}
		for e, c := range codes {
			v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*e:]))
			var s int8
			if v > 0 {
				s = 1
			} else if v < 0 {
				s = -1
			}
			if s != c {
				t.Fatalf("%s: element %d (row %d) has sign %d, HF code %d: rows reordered", name, e, e/256, s, c)
			}
		}
	}
	if _, ok := f.Get("qwen2.rope.dimension_count"); ok {
		t.Error("qwen2.rope.dimension_count written; mainline's Qwen2Model writes none")
	}
}

// TestHFBitnetRefusals: configs the generic HF BitNet converter cannot
// convert exactly give one line naming config.json and the key.
func TestHFBitnetRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit func(c map[string]any)
		want string
	}{
		{"no quantization_config", func(c map[string]any) { delete(c, "quantization_config") }, `Qwen2ForCausalLM without quantization_config.quant_method "bitnet" is not a BitNet checkpoint`},
		{"bad rms_norm_eps", func(c map[string]any) {
			c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 0}
		}, "quantization_config.rms_norm_eps 0 must be a positive number"},
		{"rms_norm_eps beyond f32", func(c map[string]any) {
			c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e300}
		}, "quantization_config.rms_norm_eps 1e+300 must be a positive number within f32's range"},
		{"rms_norm_eps below f32", func(c map[string]any) {
			c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e-50}
		}, "quantization_config.rms_norm_eps 1e-50 must be a positive number within f32's range"},
		{"yarn", func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
		}, "rope_scaling is set; GGUF arch qwen2"},
		{"sliding window", func(c map[string]any) { c["use_sliding_window"] = true }, "use_sliding_window is true"},
		{"gelu", func(c map[string]any) { c["hidden_act"] = "gelu" }, `hidden_act "gelu" is not supported for Qwen2ForCausalLM`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := qwen2Config()
			tc.edit(c)
			dir := t.TempDir()
			b, _ := json.Marshal(c)
			if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := hf.ReadConfig(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			conv, err := converterFor(cfg)
			if err == nil {
				_, err = conv.HParams(cfg)
			}
			if dc, ok := conv.(DenseCandidate); ok && err == nil {
				// without quantization_config the refusal waits for the
				// values (groupscaled.go; TestGroupScaledNearMisses)
				err = dc.DenseRefusal()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "config.json") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// TestMistralSlidingWindow: Mistral-7B-v0.1's sliding_window (4096) is not
// written (mainline's LlamaModel writes no window key) and the conversion
// says so; the q/k rows are interleaved as for Llama (RopePermuter).
func TestMistralSlidingWindow(t *testing.T) {
	cfg := mistralConfig()
	cfg["sliding_window"] = 4096
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Packed: true, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	plan, err := ConvertDir(context.Background(), dir, filepath.Join(dir, "dry.gguf"), false, true, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range plan.Warnings {
		found = found || strings.Contains(w, "sliding_window 4096 is not written")
	}
	if !found {
		t.Errorf("warnings %q lack the sliding_window notice", plan.Warnings)
	}
	for _, kv := range plan.KVs {
		if strings.Contains(kv.Key, "sliding_window") {
			t.Errorf("key %s written", kv.Key)
		}
	}
	if rp, ok := plan.Converter.(RopePermuter); !ok || rp.RopeHeads("blk.0.attn_q.weight") != 8 || rp.RopeHeads("blk.0.attn_k.weight") != 2 {
		t.Errorf("Mistral q/k rows are not interleaved for llama's rope (%T)", plan.Converter)
	}
}

// TestQwen3RequantLimits: requant applies the causal Qwen3 row's outtypes
// to a causal qwen3 file (no qwen3.pooling_type): i2_s is refused naming
// the arch, tq1_0 is planned; the embedding qwen3 files keep theirs
// (TestDummyEmbeddingPresetsConvert and the requant tests).
func TestQwen3RequantLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen3Config(), Seed: 4}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "tq2_0.gguf")
	if _, err := ConvertDir(context.Background(), dir, in, false, false, Options{OutType: OutTQ2_0, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := NewRequantPlan(f, in, RequantOptions{OutType: OutI2S}); err == nil || !strings.Contains(err.Error(), "qwen3") || strings.Contains(err.Error(), "\n") {
		t.Errorf("requant to i2_s: %v, want one line naming qwen3", err)
	}
	if _, err := NewRequantPlan(f, in, RequantOptions{OutType: OutTQ1_0}); err != nil {
		t.Errorf("requant to tq1_0: %v", err)
	}
}

// TestModulesNotConverted: a projection quantization_config.
// modules_to_not_convert lists stays float (transformers keeps it an
// nn.Linear): in a TQ2_0 file it is F16 holding the checkpoint's bf16
// values, q rows interleaved for llama's rope like a ternary q, the other
// projections ternary; listed but stored packed is refused naming it.
func TestModulesNotConverted(t *testing.T) {
	cfg := mistralConfig()
	cfg["quantization_config"] = map[string]any{"quant_method": "bitnet", "modules_to_not_convert": []any{"lm_head", "q_proj"}}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 6}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tq2_0.gguf")
	plan, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: OutTQ2_0, NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), "kept in full precision (float, not ternary): model.layers.0.self_attn.q_proj, model.layers.1.self_attn.q_proj") {
		t.Errorf("warnings %q lack the kept modules", plan.Warnings)
	}
	got, f := ggufTable(t, out)
	for name, want := range map[string]string{"blk.0.attn_q.weight": "F16[512 512]", "blk.1.attn_q.weight": "F16[512 512]", "blk.0.attn_k.weight": "TQ2_0[512 128]"} {
		if got[name] != want {
			t.Errorf("%s is %s, want %s", name, got[name], want)
		}
	}
	src, err := OpenSource(dir, Options{NoVocab: true, OutType: OutTQ2_0})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pt, _ := src.Tensor("blk.0.attn_q.weight")
	d, err := src.ckpt.Read(pt.Source)
	if err != nil {
		t.Fatal(err)
	}
	raw := append([]byte(nil), d.Raw...)
	d.Release()
	data, err := f.TensorData("blk.0.attn_q.weight")
	if err != nil {
		t.Fatal(err)
	}
	const cols, dd = 512, 64 // 8 heads of head_dim 64
	for r := 0; r < 512; r++ {
		h, rest := r/dd, r%dd
		from := h*dd + (rest%2)*(dd/2) + rest/2
		for k := 0; k < cols; k += 97 {
			want := quantize.BF16ToF32(binary.LittleEndian.Uint16(raw[2*(from*cols+k):]))
			g := quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*(r*cols+k):]))
			if g != quantize.F16ToF32(quantize.F32ToF16(want)) {
				t.Fatalf("row %d col %d = %v, want the f16 of HF row %d: %v", r, k, g, from, want)
			}
		}
	}
	// Listed but packed: contradictory, refused in one line.
	pdir := filepath.Join(t.TempDir(), "packed")
	if _, err := dummy.Generate(context.Background(), pdir, dummy.Options{Config: cfg, Packed: true, Seed: 6}); err != nil {
		t.Fatal(err)
	}
	_, err = ConvertDir(context.Background(), pdir, filepath.Join(t.TempDir(), "x.gguf"), false, false, Options{OutType: OutTQ2_0, NoVocab: true})
	if err == nil || !strings.Contains(err.Error(), "model.layers.0.self_attn.q_proj") || !strings.Contains(err.Error(), "packed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("packed listed module: %v, want one line naming it", err)
	}
}

// TestModulesNotConvertedMalformed: a modules_to_not_convert that is not a
// list of non-empty names is refused in one line naming config.json, not
// ignored (which would ternarize what the model keeps float).
func TestModulesNotConvertedMalformed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: mistralConfig(), Seed: 6}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"q_proj", 7.0, map[string]any{}, []any{nil}, []any{5.0}, []any{""}} {
		testutil.EditConfig(t, dir, func(c map[string]any) {
			c["quantization_config"] = map[string]any{"quant_method": "bitnet", "modules_to_not_convert": v}
		})
		_, _, err := convertDir(t, dir, Options{NoVocab: true, OutType: OutTQ2_0})
		if err == nil || !strings.Contains(err.Error(), "quantization_config.modules_to_not_convert") || !strings.Contains(err.Error(), "config.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line naming the key", v, err)
		}
	}
	testutil.EditConfig(t, dir, func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "modules_to_not_convert": nil}
	})
	if _, _, err := convertDir(t, dir, Options{NoVocab: true, OutType: OutTQ2_0}); err != nil {
		t.Errorf("null list: %v", err)
	}
}

// TestU8NonProjection: a bias stored as U8 (a dtype only packed ternary
// projections use) is refused naming the tensor and the dtype, not as a
// projection missing its weight_scale.
func TestU8NonProjection(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen2Config(), Packed: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.safetensors")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	const name = "model.layers.0.self_attn.q_proj.bias"
	var info map[string]any
	if err := json.Unmarshal(hdr[name], &info); err != nil {
		t.Fatal(err)
	}
	if info["dtype"] != "BF16" {
		t.Fatalf("%s dtype %v, want BF16", name, info["dtype"])
	}
	info["dtype"] = "U8"
	info["shape"] = []uint64{2 * uint64(info["shape"].([]any)[0].(float64))}
	hdr[name], _ = json.Marshal(info)
	js, _ := json.Marshal(hdr)
	if uint64(len(js)) > n {
		t.Fatalf("header grew from %d to %d bytes", n, len(js))
	}
	js = append(js, bytes.Repeat([]byte(" "), int(n)-len(js))...)
	copy(raw[8:], js)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = convertDir(t, dir, Options{NoVocab: true, OutType: OutTQ2_0})
	if err == nil || !strings.Contains(err.Error(), `tensor "`+name+`" (blk.0.attn_q.bias) has dtype U8`) || strings.Contains(err.Error(), "weight_scale") {
		t.Errorf("U8 bias: %v", err)
	}
}
