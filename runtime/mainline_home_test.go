package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
)

// mainlineHomeDir holds what mainline llama.cpp computed on our files
// (testdata/golden/mainline-home/README.md).
const mainlineHomeDir = "../testdata/golden/mainline-home"

// llamaSmallConfig is the Llama-class dummy of mainline-home: the layout of
// Llama3-8B-1.58-100B-tokens (presets/Llama3-8B-1.58-100B-tokens.toml:
// untied head, GQA, head_dim 128, rope θ 500000, SiLU, packed U8 +
// weight_scale with BitLinear's divide) at reduced size.
func llamaSmallConfig() map[string]any {
	return map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "attention_bias": false, "attention_dropout": 0.0,
		"bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 512, "initializer_range": 0.02,
		"intermediate_size": 1792, "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 4,
		"num_hidden_layers": 2, "num_key_value_heads": 1, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
		"rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
		"vocab_size": 512, "quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// bitnet384Config is the golden tiny model's config.json with projection
// rows of 384 (hidden 384, FFN 768, 6 heads / 2 KV heads): a length Q2_0's
// 64-blocks hold and TQ's 256-blocks do not.
func bitnet384Config() map[string]any {
	return map[string]any{
		"architectures": []any{"BitnetForCausalLM"}, "model_type": "bitnet", "hidden_size": 384, "intermediate_size": 768,
		"num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2, "vocab_size": 512,
		"max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "hidden_act": "silu",
		"attention_bias": false, "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 2, "input_bits": 8,
		"weight_bits": 1, "torch_dtype": "bfloat16",
	}
}

// writeMainlineHomeFiles writes the files mainline-home's runs used into
// dir: our hf2gguf TQ1_0/TQ2_0 (and the F32 mainline's llama-quantize made
// its Q2_0 files from) of the golden tiny model ("tiny-*") and of the
// Llama-class dummy ("llama-small-*", its checkpoint in dir/llama-small),
// and the F32 of the 384-row dummy ("bitnet384-f32", dir/bitnet384).
// It returns the paths by name (file name without .gguf).
func writeMainlineHomeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ctx := context.Background()
	llamaHF := filepath.Join(dir, "llama-small")
	if _, err := dummy.Generate(ctx, llamaHF, dummy.Options{Config: llamaSmallConfig(), Packed: true, LinearClass: "bitlinear",
		Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	b384HF := filepath.Join(dir, "bitnet384")
	if _, err := dummy.Generate(ctx, b384HF, dummy.Options{Config: bitnet384Config(), Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	b384 := filepath.Join(dir, "bitnet384-f32.gguf")
	if _, err := convert.ConvertDir(ctx, b384HF, b384, true, false, convert.Options{OutType: convert.OutF32}); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{"bitnet384-f32": b384}
	for model, src := range map[string]string{"tiny": filepath.Join(tinyDir, "hf"), "llama-small": llamaHF} {
		for _, typ := range []convert.OutType{convert.OutF32, convert.OutTQ1_0, convert.OutTQ2_0} {
			name := model + "-" + string(typ)
			out := filepath.Join(dir, name+".gguf")
			if _, err := convert.ConvertDir(ctx, src, out, true, false, convert.Options{OutType: typ}); err != nil {
				t.Fatal(err)
			}
			paths[name] = out
		}
	}
	return paths
}

// TestWriteMainlineHomeFiles writes the mainline-home inputs into
// $BITNET_MAINLINE_HOME_OUT (a tool for regenerating the golden files, not
// a check; skipped without the variable).
func TestWriteMainlineHomeFiles(t *testing.T) {
	dir := os.Getenv("BITNET_MAINLINE_HOME_OUT")
	if dir == "" {
		t.Skip("BITNET_MAINLINE_HOME_OUT not set")
	}
	for name, p := range writeMainlineHomeFiles(t, dir) {
		t.Log(name, p)
	}
}
