package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// TestVerifyLlama (issue 13 Deliver 3 / acceptance a, master weights): a
// 2-layer Falcon3-1B-shaped dummy (vocab 512) with bf16 master weights, which
// bitnet.cpp's Llama path does not ternarize and so has no bitnet.cpp
// reference, passes verify --hf against the float reference as I2_S and F16;
// so does the packed bitlinear dummy. The GGUF's q/k rows are interleaved
// for llama's rope; the reference ropes the HF rows as transformers does.
func TestVerifyLlama(t *testing.T) {
	m, err := presets.Get("Falcon3-1B-Instruct-1.58bit")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		packed  bool
		outType convert.OutType
	}{{"master-i2s", false, convert.OutI2S}, {"master-f16", false, convert.OutF16}, {"packed-i2s", true, convert.OutI2S}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hf")
			cfg := map[string]any{}
			for k, v := range m.Config {
				cfg[k] = v
			}
			if !tc.packed {
				delete(cfg, "quantization_config")
				cfg["quantization_config"] = map[string]any{"quant_method": "bitnet"}
			}
			if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Layers: 2, VocabSize: 512, Packed: tc.packed,
				Tokenizer: "../testdata/golden/tiny-bitnet/hf", Seed: 4}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "m.gguf")
			if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: tc.outType}); err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{GGUF: out, HF: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Pass || rep.Arch != "llama" || rep.Numbers == nil {
				t.Fatalf("verify: pass %v arch %s failures %v", rep.Pass, rep.Arch, rep.Failures)
			}
			for _, tc := range rep.Tensors {
				if !tc.OK {
					t.Errorf("tensor %s: %s", tc.Name, tc.Detail)
				}
			}
		})
	}
}
