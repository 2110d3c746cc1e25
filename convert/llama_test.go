package convert

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// nc15Config is the NC-15 input: a LlamaForCausalLM config (hidden 256, 4
// heads, 2 KV heads, Llama-3 vocabulary size) with a bitnet
// quantization_config.
func nc15Config() map[string]any {
	return map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 128256, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
		"max_position_embeddings": 8192, "tie_word_embeddings": false,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// TestNC15LlamaPacked (NC-15, microsoft/BitNet #375): a packed bitlinear
// LlamaForCausalLM converts (i2_s, f16 and --dry-run) to arch llama with an
// untied output head; the U8 codes are unpacked, divided by weight_scale
// (linear_class bitlinear), and the q/k rows are interleaved as bitnet.cpp's
// LlamaModel.permute does (checked here row by row against the HF codes).
func TestNC15LlamaPacked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: nc15Config(), Packed: true, LinearClass: "bitlinear", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	plan, err := ConvertDir(context.Background(), dir, filepath.Join(dir, "dry.gguf"), false, true, Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Arch != "llama" || plan.WeightScaleRule != RuleDivide {
		t.Fatalf("arch %s rule %s, want llama / divide", plan.Arch, plan.WeightScaleRule)
	}
	if _, err := os.Stat(filepath.Join(dir, "dry.gguf")); err == nil {
		t.Error("--dry-run wrote a file")
	}
	for _, ot := range []OutType{OutI2S, OutF16} {
		out := filepath.Join(t.TempDir(), string(ot)+".gguf")
		if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: ot, NoVocab: true}); err != nil {
			t.Fatalf("%s: %v", ot, err)
		}
		got, f := ggufTable(t, out)
		proj := "I2_S"
		if ot == OutF16 {
			proj = "F16"
		}
		for name, want := range map[string]string{
			"output.weight": "F16[256 128256]", "token_embd.weight": "F16[256 128256]",
			"blk.1.attn_q.weight": proj + "[256 256]", "blk.1.attn_k.weight": proj + "[256 128]", "blk.1.ffn_down.weight": proj + "[512 256]",
		} {
			if got[name] != want {
				t.Errorf("%s: %s is %s, want %s", ot, name, got[name], want)
			}
		}
		if _, ok := got["blk.0.attn_sub_norm.weight"]; ok {
			t.Errorf("%s: arch llama got a sub-norm", ot)
		}
		if n, _ := f.Uint("llama.rope.dimension_count"); n != 64 {
			t.Errorf("%s: rope.dimension_count %d, want 64", ot, n)
		}
		if ot != OutI2S {
			continue
		}
		// Interleaving: GGUF row h·d + 2i + j holds HF row h·d + j·d/2 + i.
		src, err := OpenSource(dir, Options{NoVocab: true})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		for name, heads := range map[string]int{"blk.0.attn_q.weight": 4, "blk.0.attn_k.weight": 2, "blk.0.attn_v.weight": 0} {
			pt, _ := src.Tensor(name)
			d, err := src.ckpt.Read(pt.Source)
			if err != nil {
				t.Fatal(err)
			}
			hfCodes, _, _, err := src.conv.ternary(context.Background(), &pt, d)
			d.Release()
			if err != nil {
				t.Fatal(err)
			}
			hfCodes = append([]int8(nil), hfCodes...)
			data, _ := f.TensorData(name)
			rows, cols := int(pt.HFShape[0]), int(pt.HFShape[1])
			gg := make([]int8, rows*cols)
			for e := range gg { // x86 I2_S: 128-element groups of 32 bytes, 2-bit fields high first
				g, j := e/128, e%128
				gg[e] = int8(data[g*32+j%32]>>(6-2*uint(j/32))&3) - 1
			}
			for r := 0; r < rows; r++ {
				from := r
				if heads > 0 {
					dd := rows / heads
					h, rest := r/dd, r%dd
					from = h*dd + (rest%2)*(dd/2) + rest/2
				}
				if !equalInt8(gg[r*cols:(r+1)*cols], hfCodes[from*cols:(from+1)*cols]) {
					t.Fatalf("%s: GGUF row %d is not HF row %d", name, r, from)
				}
			}
		}
	}
}

func equalInt8(a, b []int8) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNC16Falcon3_10B (NC-16, ik_llama.cpp #167): the Falcon3-10B preset
// (1 layer, vocab cut to 512) converts to I2_S; ffn_down K = 23040 = 180·128.
func TestNC16Falcon3_10B(t *testing.T) {
	if testing.Short() {
		t.Skip("ternary projections of 10B width")
	}
	dir := dummyDir(t, "Falcon3-10B-Instruct-1.58bit", dummy.Options{Layers: 1, VocabSize: 512, Seed: 1})
	out := filepath.Join(t.TempDir(), "f10b.gguf")
	if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	got, f := ggufTable(t, out)
	if got["blk.0.ffn_down.weight"] != "I2_S[23040 3072]" || got["blk.0.attn_k.weight"] != "I2_S[3072 1024]" || got["output.weight"] != "F16[3072 512]" {
		t.Errorf("tensors %v", got)
	}
	if th, _ := f.Float("llama.rope.freq_base"); th != 1000042 {
		t.Errorf("rope.freq_base %v, want 1000042", th)
	}
	if n, _ := f.Uint("llama.rope.dimension_count"); n != 256 {
		t.Errorf("rope.dimension_count %d, want 256 (head_dim)", n)
	}
}

// TestLlamaRefusals: a LlamaForCausalLM that is not BitNet (no
// quantization_config, or another quant_method), llama3 rope scaling and a
// non-SiLU activation each give one line naming config.json and the key.
// (use_rms_norm is converted now: TestFalconEUseRMSNormReading.)
func TestLlamaRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit func(c map[string]any)
		want string
	}{
		{"no quantization_config", func(c map[string]any) { delete(c, "quantization_config") }, `quant_method "bitnet" is not a BitNet checkpoint`},
		{"not bitnet", func(c map[string]any) { c["quantization_config"] = map[string]any{"quant_method": "gptq"} }, `quant_method "gptq" is not a BitNet checkpoint`},
		{"llama3 rope", func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": 8.0} }, `rope_scaling type "llama3" is not supported`},
		{"gelu", func(c map[string]any) { c["hidden_act"] = "gelu" }, `hidden_act "gelu" is not supported for LlamaForCausalLM`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := nc15Config()
			c["vocab_size"] = 512
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
