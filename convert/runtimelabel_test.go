package convert

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// TestRuntimeLabel: hf2gguf's summary names the runtime a file is for — a
// float file of a causal qwen arch is mainline llama.cpp's (bitnet.cpp has
// no such graph), a ternary one its format's, and one with per-projection
// input norms only this project's runtime.
func TestRuntimeLabel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qwen2")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen2Config(), Seed: 2}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ot   OutType
		want string
	}{{OutF16, "llama.cpp"}, {OutTQ2_0, "llama.cpp"}, {OutBF16, "llama.cpp"}} {
		_, p, err := convertDir(t, dir, Options{NoVocab: true, OutType: c.ot})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RuntimeLabel(); got != c.want {
			t.Errorf("qwen2 %s: %q, want %q", c.ot, got, c.want)
		}
	}
	testutil.EditConfig(t, dir, func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "use_rms_norm": true, "rms_norm_eps": 1e-5}
	})
	addNormIns(t, dir, 2, tensormap.SpellRMSNorm, allNormStems)
	_, p, err := convertDir(t, dir, Options{NoVocab: true, OutType: OutI2S})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.RuntimeLabel(); got != "this project's runtime only" {
		t.Errorf("qwen2 with norms, i2_s: %q", got)
	}
}
