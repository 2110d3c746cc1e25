package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// falconEConfig is a Falcon-E-shaped config.json at reduced size, built
// from the facts of formats-2026.md §2 and §1 (no literal
// Falcon-E config.json was found): LlamaForCausalLM / llama, an untied
// lm_head, SiLU, the onebitllms quantization_config
// {"quant_method": "bitnet", "modules_to_not_convert": [...]} with no
// linear_class (so weight_scale divides, formats-2026.md A2). Assumed, not
// from a source: the head counts, widths, rope theta and eps (only the layer
// count of the 1B, 24, and its untied head are documented, by the tensor
// counts of TII's GGUF). The vocabulary is cut from 32768 to 512.
func falconEConfig(layers int) map[string]any {
	return map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": layers, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
		"max_position_embeddings": 2048, "tie_word_embeddings": false, "is_bitnet_config": true, "pretraining_tp": 1,
		"quantization_config": map[string]any{"quant_method": "bitnet", "modules_to_not_convert": []any{"lm_head"}},
	}
}

// falconTokenizerJSON is a byte-level BPE tokenizer.json with the Falcon
// pre_tokenizer layout (Punctuation, ByteLevel with its regex, individual
// Digits; tokenizer/falcon_test.go), which hf2gguf detects as falcon3.
const falconTokenizerJSON = `{"added_tokens": [{"id": 20, "content": "<|im_end|>", "special": true}],
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
  {"type": "Punctuation", "behavior": "contiguous"},
  {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  {"type": "Digits", "individual_digits": true}]},
 "model": {"type": "BPE",
  "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7, "ll": 8, "He": 9, "Hell": 10, "Hello": 11,
   "0": 12, "2": 13, "4": 14, "!": 15, "Ġw": 16, "or": 17, "Ġwor": 18, "Ġworld": 19, "Ġworl": 21},
  "merges": ["l l", "H e", "He ll", "Hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d"]}}`

// falconEDir generates a Falcon-E-shaped packed checkpoint with the Falcon
// tokenizer, then edits its config.json with edit (after generation, so
// dummy adds no norms for it: the tests add their own with addNormIns).
func falconEDir(t *testing.T, layers int, edit func(map[string]any)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "falcon-e")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: falconEConfig(layers), Packed: true, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		testutil.EditConfig(t, dir, edit)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(falconTokenizerJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// normValue is the bf16-exact value of element i of input norm number k
// (1 + j/128, j < 64), so the F32 output can be compared bit for bit.
func normValue(k, i int) float32 { return 1 + float32((i+13*k)%64)/128 }

// addNormIns writes, into norms.safetensors beside the dummy's
// model.safetensors, the per-projection input norms "<proj>.<spelling>" of
// the projections named by stems (GGUF stems, e.g. "attn_q") in each layer,
// bf16, values normValue. It returns the GGUF name → expected values.
func addNormIns(t *testing.T, dir string, layers int, spelling tensormap.NormInSpelling, stems []string) map[string][]float32 {
	t.Helper()
	return addNormInsG(t, dir, layers, hf.Geometry{Hidden: 256, FF: 512, Heads: 4, HeadsKV: 2, HeadDim: 64}, spelling, stems)
}

// addNormInsG is addNormIns for geometry g.
func addNormInsG(t *testing.T, dir string, layers int, g hf.Geometry, spelling tensormap.NormInSpelling, stems []string) map[string][]float32 {
	t.Helper()
	var ws []hf.WriteTensor
	want := map[string][]float32{}
	k := 0
	for l := 0; l < layers; l++ {
		for _, p := range tensormap.NormInProjections {
			if !contains(stems, p.GGUF) {
				continue
			}
			n := int(p.In.Size(g))
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = normValue(k, i)
			}
			k++
			name := "model.layers." + strconv.Itoa(l) + "." + p.HF + "." + string(spelling) + ".weight"
			ws = append(ws, hf.WriteTensor{Name: name, DType: hf.BF16, Shape: []uint64{uint64(n)}, Data: hf.RawData(testutil.BF16Bytes(vals))})
			want["blk."+strconv.Itoa(l)+"."+p.GGUF+"_norm_in.weight"] = vals
		}
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "norms.safetensors"), ws, nil); err != nil {
		t.Fatal(err)
	}
	return want
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

var allNormStems = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}

// typeCounts counts the tensors of f per type name.
func typeCounts(f *reader.File) map[string]int {
	out := map[string]int{}
	for _, ti := range f.Tensors {
		out[ti.Type.String()]++
	}
	return out
}

// TestFalconEPlainReading builds Falcon-E as formats-2026.md §2 reads it
// (plain Llama: packed U8 projections with weight_scale, no sub-norms, no
// use_rms_norm, no linear_class, untied output) at the 1B's 24 layers:
// hf2gguf writes TII's tensor set (49 F32 + 2 F16 + 168 I2_S, arch llama)
// with the divide rule, no *_norm_in and pre falcon3. The file rewritten
// with TII's pre falcon_e is then requantized to TQ2_0: the output equals
// hf2gguf's own TQ2_0 of the checkpoint byte for byte in every tensor, its
// pre becomes falcon3 (mainline does not know falcon_e), and the runtime
// and tokenizer load both the TII-style file and the requantized one, with
// bit-identical logits for the two TQ2_0 files and the same token ids for
// falcon_e and falcon3.
func TestFalconEPlainReading(t *testing.T) {
	if testing.Short() {
		t.Skip("24 layers")
	}
	dir := falconEDir(t, 24, nil)
	ctx := context.Background()
	i2s := filepath.Join(t.TempDir(), "i2s.gguf")
	plan, err := ConvertDir(ctx, dir, i2s, false, false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Arch != "llama" || plan.WeightScaleRule != RuleDivide {
		t.Fatalf("arch %s rule %s, want llama / divide (no linear_class)", plan.Arch, plan.WeightScaleRule)
	}
	got, f := ggufTable(t, i2s)
	if c := typeCounts(f); c["F32"] != 49 || c["F16"] != 2 || c["I2_S"] != 168 || len(f.Tensors) != 219 {
		t.Errorf("tensor types %v, want TII's 49 F32 + 2 F16 + 168 I2_S", c)
	}
	if got["output.weight"] != "F16[256 512]" {
		t.Errorf("output.weight %s, want an untied F16[256 512]", got["output.weight"])
	}
	for name := range got {
		if strings.HasSuffix(name, "_norm_in.weight") || strings.Contains(name, "sub_norm") {
			t.Errorf("%s written for a checkpoint without such norms", name)
		}
	}
	if _, ok := f.Get("llama" + format.NormInEpsilonSuffix); ok {
		t.Error("norm_in eps key written without norms")
	}
	if pre, _ := f.String("tokenizer.ggml.pre"); pre != "falcon3" {
		t.Errorf("tokenizer.ggml.pre %q, want falcon3 (the name every target runtime knows)", pre)
	}

	// TII's file: the same tensors, pre falcon_e.
	tii := filepath.Join(t.TempDir(), "ggml-model-i2_s.gguf")
	if err := os.WriteFile(tii, testutil.RewriteGGUF(t, i2s, testutil.SetKV("tokenizer.ggml.pre", gguf.String("falcon_e")), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	req := filepath.Join(t.TempDir(), "req-tq2_0.gguf")
	rp, err := RequantFile(ctx, tii, req, false, false, RequantOptions{OutType: OutTQ2_0})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rp.Warnings, "\n"), `"falcon_e" is written as "falcon3"`) {
		t.Errorf("requant warnings %q do not say the pre was renamed", rp.Warnings)
	}
	direct := filepath.Join(t.TempDir(), "direct-tq2_0.gguf")
	if _, err := ConvertDir(ctx, dir, direct, false, false, Options{OutType: OutTQ2_0}); err != nil {
		t.Fatal(err)
	}
	_, fr := ggufTable(t, req)
	_, fd := ggufTable(t, direct)
	if c := typeCounts(fr); c["F32"] != 49 || c["F16"] != 2 || c["TQ2_0"] != 168 {
		t.Errorf("requant output types %v, want 49 F32 + 2 F16 + 168 TQ2_0", c)
	}
	for _, ti := range fd.Tensors {
		a, _ := fd.TensorData(ti.Name)
		b, err := fr.TensorData(ti.Name)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: requant of the TII-style file differs from hf2gguf's TQ2_0 (%v)", ti.Name, err)
		}
	}
	for _, g := range []*reader.File{fr, fd} {
		if pre, _ := g.String("tokenizer.ggml.pre"); pre != "falcon3" {
			t.Errorf("TQ2_0 pre %q, want falcon3", pre)
		}
		if a, _ := g.String("general.architecture"); a != "llama" {
			t.Errorf("TQ2_0 arch %q, want llama", a)
		}
	}

	// run: the TII file and both TQ2_0 files load; falcon_e and falcon3
	// tokenize alike; the two TQ2_0 files give the same logits.
	var ids [][]int32
	for _, path := range []string{tii, req} {
		g, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tokenizer.FromGGUF(g.KVs)
		g.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tok, err := tokenizer.New(v)
		if err != nil {
			t.Fatal(err)
		}
		e, err := tok.Encode("Hello world 2024!", false, false)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e)
	}
	want := []int32{11, 19, 4, 13, 12, 13, 14, 15} // Hello Ġworld Ġ 2 0 2 4 !
	for i, e := range ids {
		if !equalIDs(e, want) {
			t.Errorf("file %d: ids %v, want %v", i, e, want)
		}
	}
	var dumps [][]byte
	for _, path := range []string{tii, req, direct} {
		m, g, err := runtime.Open(path, runtime.Options{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_, logits := greedyDump(t, m, want, 4)
		g.Close()
		dumps = append(dumps, logits)
	}
	if !bytes.Equal(dumps[1], dumps[2]) {
		t.Error("the requantized TII-style file and hf2gguf's TQ2_0 give different logits")
	}
	if len(dumps[0]) != len(dumps[1]) {
		t.Errorf("I2_S and TQ2_0 runs gave %d and %d logit bytes", len(dumps[0]), len(dumps[1]))
	}
}

// TestFalconEUseRMSNormReading builds Falcon-E as our earlier README read
// it (quantization_config.use_rms_norm true, rms_norm_eps 1e-5, a
// "<proj>.rms_norm.weight" before each of the seven projections): I2_S and
// the float types keep every norm as blk.N.<proj>_norm_in.weight (F32,
// bit-equal to the bf16 input, input width: hidden, q for o, ff for down)
// with llama.attention.norm_in_rms_epsilon = 1e-5; every outtype whose
// runtime has no such tensor is refused with one line naming the tensor and
// the runtime (acceptance d), and so is requant of the I2_S file to them.
func TestFalconEUseRMSNormReading(t *testing.T) {
	dir := falconEDir(t, 2, func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e-5, "modules_to_not_convert": []any{"lm_head"}}
	})
	want := addNormIns(t, dir, 2, tensormap.SpellRMSNorm, allNormStems)
	ctx := context.Background()
	for _, ot := range []OutType{OutI2S, OutF16, OutF32} {
		out := filepath.Join(t.TempDir(), string(ot)+".gguf")
		p, err := ConvertDir(ctx, dir, out, false, false, Options{OutType: ot})
		if err != nil {
			t.Fatalf("%s: %v", ot, err)
		}
		if p.WeightScaleRule != RuleDivide {
			t.Errorf("%s: rule %s, want divide", ot, p.WeightScaleRule)
		}
		got, f := ggufTable(t, out)
		if len(want) != 14 {
			t.Fatalf("%d norms made, want 14", len(want))
		}
		for name, vals := range want {
			if wantShape := "F32[" + strconv.Itoa(len(vals)) + "]"; got[name] != wantShape {
				t.Errorf("%s: %s is %q, want %s", ot, name, got[name], wantShape)
				continue
			}
			d, _ := f.TensorData(name)
			for i, v := range vals {
				if math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:])) != v {
					t.Errorf("%s: %s[%d] differs from the checkpoint's %v", ot, name, i, v)
					break
				}
			}
		}
		if got["blk.1.attn_output_norm_in.weight"] != "F32[256]" || got["blk.1.ffn_down_norm_in.weight"] != "F32[512]" {
			t.Errorf("%s: o/down input norm shapes %s %s", ot, got["blk.1.attn_output_norm_in.weight"], got["blk.1.ffn_down_norm_in.weight"])
		}
		if eps, ok := f.Float("llama" + format.NormInEpsilonSuffix); !ok || float32(eps) != float32(1e-5) {
			t.Errorf("%s: norm_in eps %v (%v), want 1e-5", ot, eps, ok)
		}
		if ot != OutI2S {
			continue
		}
		for _, to := range []OutType{OutTQ2_0, OutIQ2BN, OutTL1} {
			_, err := RequantFile(ctx, out, filepath.Join(t.TempDir(), "r.gguf"), false, false, RequantOptions{OutType: to})
			if err == nil || !strings.Contains(err.Error(), "_norm_in.weight") || strings.Contains(err.Error(), "\n") {
				t.Errorf("requant → %s: err %v, want one line naming a *_norm_in tensor", to, err)
			}
		}
	}
	for ot, rt := range map[OutType]string{OutTQ1_0: "mainline llama.cpp", OutTQ2_0: "mainline llama.cpp", "q2_0": "mainline llama.cpp", OutIQ1BN: "ik_llama.cpp", OutIQ2BN: "ik_llama.cpp", OutTL1: "bitnet.cpp", OutTL2: "bitnet.cpp"} {
		_, _, err := convertDir(t, dir, Options{OutType: ot})
		if err == nil {
			t.Errorf("%s: converted a checkpoint with per-projection norms", ot)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "blk.0.attn_q_norm_in.weight") || !strings.Contains(msg, "q_proj.rms_norm.weight") || !strings.Contains(msg, rt) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line naming the tensor and %s", ot, msg, rt)
		}
	}
}

// TestBitDistillTernarize: a BitNet Distillation checkpoint (bf16 masters,
// no quantization_config, "<proj>.norm.weight"; formats-2026.md §3) in
// Llama shape — all seven norms ("allnorm") or o_proj/down_proj only
// (SubLN) — is refused without --ternarize (one line naming the flag) and
// with it converts to I2_S with the norms as *_norm_in and eps 1e-8.
func TestBitDistillTernarize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stems []string
	}{{"allnorm", allNormStems}, {"subln", []string{"attn_output", "ffn_down"}}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := falconEConfig(2)
			delete(cfg, "quantization_config")
			dir := filepath.Join(t.TempDir(), "bitdistill")
			if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 5}); err != nil {
				t.Fatal(err)
			}
			want := addNormIns(t, dir, 2, tensormap.SpellNorm, tc.stems)
			_, _, err := convertDir(t, dir, Options{NoVocab: true})
			if err == nil || !strings.Contains(err.Error(), "pass --ternarize") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("without --ternarize: err %v, want one line saying to pass --ternarize", err)
			}
			out, p, err := convertDir(t, dir, Options{NoVocab: true, Ternarize: true})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(p.Warnings, "\n"), "--ternarize") {
				t.Errorf("warnings %q do not mention --ternarize", p.Warnings)
			}
			got, f := ggufTable(t, out)
			n := 0
			for name := range got {
				if strings.HasSuffix(name, "_norm_in.weight") {
					n++
					if _, ok := want[name]; !ok {
						t.Errorf("%s written, not in the checkpoint", name)
					}
				}
			}
			if n != len(want) {
				t.Errorf("%d *_norm_in tensors, want %d", n, len(want))
			}
			if got["blk.0.attn_q.weight"] != "I2_S[256 256]" {
				t.Errorf("attn_q %s, want I2_S", got["blk.0.attn_q.weight"])
			}
			if eps, _ := f.Float("llama" + format.NormInEpsilonSuffix); float32(eps) != float32(1e-8) {
				t.Errorf("norm_in eps %v, want 1e-8 (BitDistill's Qwen2RMSNorm)", eps)
			}
		})
	}
	// --ternarize on a checkpoint that needs none is said to do nothing.
	dir := falconEDir(t, 1, nil)
	_, p, err := convertDir(t, dir, Options{NoVocab: true, Ternarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "--ternarize has no effect") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// TestNormInRefusals: inconsistent per-projection norms are refused with
// one line naming the tensor or config.json's key.
func TestNormInRefusals(t *testing.T) {
	useRMS := func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true}
	}
	cases := []struct {
		name  string
		edit  func(map[string]any)
		spell tensormap.NormInSpelling
		stems []string
		extra func(t *testing.T, dir string)
		want  string
	}{
		{"rms_norm without use_rms_norm", nil, tensormap.SpellRMSNorm, allNormStems, nil, "has no quantization_config.use_rms_norm true"},
		{"use_rms_norm without tensors", useRMS, "", nil, nil, "use_rms_norm is true but the checkpoint has no <proj>.rms_norm.weight"},
		{"use_rms_norm with six of seven", useRMS, tensormap.SpellRMSNorm, allNormStems[:6], nil, "model.layers.0.mlp.down_proj.rms_norm.weight (blk.0.ffn_down_norm_in.weight) is missing"},
		{"norm under use_rms_norm", useRMS, tensormap.SpellNorm, allNormStems, nil, "BitNet Distillation input norm (.norm) but"},
		{"bad rms_norm_eps", func(c map[string]any) {
			c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": -1}
		}, tensormap.SpellRMSNorm, allNormStems, nil, "quantization_config.rms_norm_eps -1 must be a positive number"},
		{"two spellings", nil, tensormap.SpellNorm, []string{"attn_output", "ffn_down"}, func(t *testing.T, dir string) {
			w := []hf.WriteTensor{{Name: "model.layers.1.self_attn.q_proj.rms_norm.weight", DType: hf.BF16, Shape: []uint64{256}, Data: hf.RawData(make([]byte, 512))}}
			if err := hf.WriteSafetensors(filepath.Join(dir, "zz.safetensors"), w, nil); err != nil {
				t.Fatal(err)
			}
		}, "spell the per-projection input norm two ways"},
		{"layers differ", nil, tensormap.SpellNorm, []string{"attn_output", "ffn_down"}, func(t *testing.T, dir string) {
			w := []hf.WriteTensor{{Name: "model.layers.1.self_attn.q_proj.norm.weight", DType: hf.BF16, Shape: []uint64{256}, Data: hf.RawData(make([]byte, 512))}}
			if err := hf.WriteSafetensors(filepath.Join(dir, "zz.safetensors"), w, nil); err != nil {
				t.Fatal(err)
			}
		}, "model.layers.1.self_attn.q_proj.norm.weight (blk.1.attn_q_norm_in.weight) is present but layer 0 has no input norm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := falconEDir(t, 2, tc.edit)
			if tc.spell != "" {
				addNormIns(t, dir, 2, tc.spell, tc.stems)
			}
			if tc.extra != nil {
				tc.extra(t, dir)
			}
			_, _, err := convertDir(t, dir, Options{NoVocab: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// TestPreForOutType: --pre falcon_e is refused for the mainline outtypes
// (one line saying to use falcon3) and accepted for bitnet.cpp, ik_llama.cpp
// and float outtypes; requant renames falcon_e to falcon3 for mainline only.
func TestPreForOutType(t *testing.T) {
	for _, o := range OutTypes {
		err := CheckPre("falcon_e", o)
		s, _ := format.Lookup(string(o))
		mainline := s.Runtime == format.RuntimeLlamaCpp
		if mainline != (err != nil) {
			t.Errorf("%s: CheckPre(falcon_e) = %v", o, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "--pre falcon3") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s: %v", o, err)
		}
		if err := CheckPre("falcon3", o); err != nil {
			t.Errorf("%s: CheckPre(falcon3) = %v", o, err)
		}
	}
	for rt, want := range map[string]string{format.RuntimeLlamaCpp: "falcon3", format.RuntimeIKLlama: "falcon_e", format.RuntimeBitnetCpp: "falcon_e"} {
		kvs, note := retargetPre([]gguf.KV{{Key: "tokenizer.ggml.pre", Value: gguf.String("falcon_e")}}, rt)
		if got, _ := kvs[0].Value.V.(string); got != want || (note != "") != (want != "falcon_e") {
			t.Errorf("%s: pre %q note %q, want %q", rt, got, note, want)
		}
	}
}

// TestFalconEUseRMSNormDummy: `dummy` makes the use_rms_norm reading
// itself (no rms_norm_eps: transformers' default 1e-6), and hf2gguf writes
// its 7 norms per layer as *_norm_in with that eps.
func TestFalconEUseRMSNormDummy(t *testing.T) {
	cfg := falconEConfig(2)
	cfg["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true}
	dir := filepath.Join(t.TempDir(), "falcon-e-rms")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Packed: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	out, _, err := convertDir(t, dir, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	got, f := ggufTable(t, out)
	n := 0
	for name := range got {
		if strings.HasSuffix(name, "_norm_in.weight") {
			n++
		}
	}
	if n != 14 || got["blk.0.ffn_down_norm_in.weight"] != "F32[512]" {
		t.Errorf("%d *_norm_in tensors (ffn_down's %s), want 14 (F32[512])", n, got["blk.0.ffn_down_norm_in.weight"])
	}
	if eps, _ := f.Float("llama" + format.NormInEpsilonSuffix); float32(eps) != float32(1e-6) {
		t.Errorf("norm_in eps %v, want transformers' default 1e-6", eps)
	}
}

// TestQwen2NormIn: the generic HF BitNet converter (the Qwen2 row, which
// bitnet.cpp has no causal graph for) keeps per-projection input norms too:
// with use_rms_norm's seven norms I2_S is written (our runtime reads the
// graph with *_norm_in) and TQ2_0 is refused naming the tensor and mainline;
// without norms I2_S stays refused. A BitNet Distillation-style Qwen2 (no
// quantization_config, o/down norms) needs --ternarize.
func TestQwen2NormIn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qwen2")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen2Config(), Packed: true, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := convertDir(t, dir, Options{NoVocab: true}); err == nil || !strings.Contains(err.Error(), "no causal qwen2 graph") {
		t.Errorf("qwen2 without norms → i2_s: %v", err)
	}
	testutil.EditConfig(t, dir, func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e-5}
	})
	want := addNormIns(t, dir, 2, tensormap.SpellRMSNorm, allNormStems)
	out, _, err := convertDir(t, dir, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	got, f := ggufTable(t, out)
	for name := range want {
		if !strings.HasPrefix(got[name], "F32[") {
			t.Errorf("%s: %q, want F32", name, got[name])
		}
	}
	if got["blk.0.attn_q.bias"] != "F32[256]" || got["blk.0.attn_q.weight"] != "I2_S[256 256]" {
		t.Errorf("q bias %s weight %s", got["blk.0.attn_q.bias"], got["blk.0.attn_q.weight"])
	}
	if eps, _ := f.Float("qwen2" + format.NormInEpsilonSuffix); float32(eps) != float32(1e-5) {
		t.Errorf("qwen2 norm_in eps %v, want 1e-5", eps)
	}
	_, _, err = convertDir(t, dir, Options{NoVocab: true, OutType: OutTQ2_0})
	if err == nil || !strings.Contains(err.Error(), "blk.0.attn_q_norm_in.weight") || !strings.Contains(err.Error(), "mainline llama.cpp") {
		t.Errorf("qwen2 with norms → tq2_0: %v", err)
	}

	bd := filepath.Join(t.TempDir(), "qwen2-bitdistill")
	if _, err := dummy.Generate(context.Background(), bd, dummy.Options{Config: qwen2Config(), Seed: 4}); err != nil {
		t.Fatal(err)
	}
	testutil.EditConfig(t, bd, func(c map[string]any) { delete(c, "quantization_config") })
	addNormIns(t, bd, 2, tensormap.SpellNorm, []string{"attn_output", "ffn_down"})
	if _, _, err := convertDir(t, bd, Options{NoVocab: true}); err == nil || !strings.Contains(err.Error(), "pass --ternarize") {
		t.Errorf("without --ternarize: %v", err)
	}
	out, _, err = convertDir(t, bd, Options{NoVocab: true, Ternarize: true})
	if err != nil {
		t.Fatal(err)
	}
	got, f = ggufTable(t, out)
	if got["blk.1.ffn_down_norm_in.weight"] != "F32[512]" || got["blk.1.attn_q_norm_in.weight"] != "" {
		t.Errorf("SubLN norms: down %q q %q", got["blk.1.ffn_down_norm_in.weight"], got["blk.1.attn_q_norm_in.weight"])
	}
	if eps, _ := f.Float("qwen2" + format.NormInEpsilonSuffix); float32(eps) != float32(1e-8) {
		t.Errorf("BitDistill eps %v, want 1e-8", eps)
	}
}

// TestQwen3BitDistill is BitNet Distillation's own case (formats-2026.md
// §3: a Qwen3 base, bf16 masters, no quantization_config, "<proj>.norm" on
// all seven projections, eps 1e-8) at reduced size with Qwen3's head_dim
// 128 ≠ hidden/heads: refused without --ternarize; with it I2_S keeps the
// q/k head norms and writes the seven *_norm_in (o's of width heads·128),
// eps 1e-8; TQ2_0 is refused naming the norm and mainline.
func TestQwen3BitDistill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qwen3-bitdistill")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen3Config(), Seed: 6}); err != nil {
		t.Fatal(err)
	}
	testutil.EditConfig(t, dir, func(c map[string]any) { delete(c, "quantization_config") })
	want := addNormInsG(t, dir, 2, hf.Geometry{Hidden: 256, FF: 512, Heads: 4, HeadsKV: 2, HeadDim: 128}, tensormap.SpellNorm, allNormStems)
	if _, _, err := convertDir(t, dir, Options{NoVocab: true}); err == nil || !strings.Contains(err.Error(), "pass --ternarize") {
		t.Fatalf("without --ternarize: %v", err)
	}
	out, _, err := convertDir(t, dir, Options{NoVocab: true, Ternarize: true})
	if err != nil {
		t.Fatal(err)
	}
	got, f := ggufTable(t, out)
	for name, vals := range want {
		if got[name] != "F32["+strconv.Itoa(len(vals))+"]" {
			t.Errorf("%s: %q", name, got[name])
		}
	}
	if got["blk.0.attn_output_norm_in.weight"] != "F32[512]" || got["blk.0.attn_q_norm.weight"] != "F32[128]" || got["blk.1.ffn_up.weight"] != "I2_S[256 512]" {
		t.Errorf("o norm_in %q, q head norm %q, ffn_up %q", got["blk.0.attn_output_norm_in.weight"], got["blk.0.attn_q_norm.weight"], got["blk.1.ffn_up.weight"])
	}
	if eps, _ := f.Float("qwen3" + format.NormInEpsilonSuffix); float32(eps) != float32(1e-8) {
		t.Errorf("eps %v, want 1e-8", eps)
	}
	if _, _, err := convertDir(t, dir, Options{NoVocab: true, Ternarize: true, OutType: OutTQ2_0}); err == nil || !strings.Contains(err.Error(), "blk.0.attn_q_norm_in.weight") || !strings.Contains(err.Error(), "mainline llama.cpp") {
		t.Errorf("→ tq2_0: %v", err)
	}
	// requant of the I2_S file: the refusal suggests only what requant
	// writes for qwen3 (no i2_s), and f16 keeps the norms.
	_, err = RequantFile(t.Context(), out, filepath.Join(t.TempDir(), "r.gguf"), false, false, RequantOptions{OutType: OutTQ2_0})
	if err == nil || !strings.Contains(err.Error(), "use --outtype f32, f16, bf16 (") {
		t.Errorf("requant → tq2_0: %v", err)
	}
	if _, err := RequantFile(t.Context(), out, filepath.Join(t.TempDir(), "f.gguf"), false, false, RequantOptions{OutType: OutF16}); err != nil {
		t.Errorf("requant → f16: %v", err)
	}
}
