package verify

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// TestFalconEAndBitDistillVerify converts Falcon-E-shaped dummies both
// ways (plain packed Llama; quantization_config.use_rms_norm with
// "<proj>.rms_norm") and a Llama-shaped BitNet Distillation checkpoint (bf16
// masters, no quantization_config, "<proj>.norm", hf2gguf --ternarize) to
// I2_S (and a Qwen2 one, biases and norms together), and holds each to the float reference of its checkpoint with
// verify's default thresholds (greedy continuation included). The shapes
// are assumed (hidden 256, 4/2 heads, ff 512, 2 layers, vocab 512); the
// Falcon-E facts are those of formats-2026.md §2. The norms are far from 1
// (0.5…1.5), so a side that skipped them would disagree; that the
// comparison sees a missing *_norm_in is shown by
// TestGraphsAgainstFloatReference's muted reference.
func TestFalconEAndBitDistillVerify(t *testing.T) {
	cfgOf := func(qc map[string]any) map[string]any {
		c := map[string]any{
			"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
			"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
			"max_position_embeddings": 2048, "tie_word_embeddings": false,
		}
		if qc != nil {
			c["quantization_config"] = qc
		}
		return c
	}
	g := hf.Geometry{Hidden: 256, FF: 512, Heads: 4, HeadsKV: 2, HeadDim: 64}
	for _, tc := range []struct {
		name   string
		qc     map[string]any
		packed bool
		spell  tensormap.NormInSpelling
		tern   bool
		qwen2  bool // Qwen2ForCausalLM (q/k/v biases) instead of Llama
	}{
		{"falcon-e plain", map[string]any{"quant_method": "bitnet", "modules_to_not_convert": []any{"lm_head"}}, true, "", false, false},
		{"falcon-e use_rms_norm", map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e-5}, true, tensormap.SpellRMSNorm, false, false},
		{"bitdistill allnorm", nil, false, tensormap.SpellNorm, true, false},
		{"bitdistill qwen2 allnorm", nil, false, tensormap.SpellNorm, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			cfg := cfgOf(nil)
			if tc.qwen2 {
				cfg["architectures"], cfg["model_type"] = []any{"Qwen2ForCausalLM"}, "qwen2"
			}
			if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Packed: tc.packed, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			// The config after generation: the test adds its own norms.
			testutil.EditConfig(t, dir, func(c map[string]any) {
				delete(c, "quantization_config")
				if tc.qc != nil {
					c["quantization_config"] = tc.qc
				}
			})
			if tc.spell != "" {
				var ws []hf.WriteTensor
				k := 0
				for l := 0; l < 2; l++ {
					for _, p := range tensormap.NormInProjections {
						v := make([]float32, p.In.Size(g))
						for i := range v {
							v[i] = 0.5 + float32((i*7+k*13)%64)/64
						}
						k++
						name := "model.layers." + strconv.Itoa(l) + "." + p.HF + "." + string(tc.spell) + ".weight"
						ws = append(ws, hf.WriteTensor{Name: name, DType: hf.BF16, Shape: []uint64{uint64(len(v))}, Data: hf.RawData(testutil.BF16Bytes(v))})
					}
				}
				if err := hf.WriteSafetensors(filepath.Join(dir, "norms.safetensors"), ws, nil); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "o.gguf")
			if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{NoVocab: true, Ternarize: tc.tern}); err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{GGUF: out, HF: dir, IDs: []int32{1, 5, 9, 13, 2, 40, 7}, Tokens: 4, Ternarize: tc.tern})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Pass {
				t.Errorf("verify failed: %v (numbers %+v)", rep.Failures, rep.Numbers)
			}
		})
	}
}
