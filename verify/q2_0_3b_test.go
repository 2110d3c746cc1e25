package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// TestVerifyQ2_0Bitnet3B (BITNET_HEAVY=1): the Q2_0 file of a
// bitnet_b1_58-3B-shaped dummy (2 layers, hidden 3200, FFN 8640 — rows of
// 8640 fit Q2_0's 64-weight blocks, not TQ's 256) passes a default
// `verify --hf` against its checkpoint on the three conversion prompts
// (runtime.TestQ2_0Bitnet3B checks the conversion takes no fallback).
func TestVerifyQ2_0Bitnet3B(t *testing.T) {
	if testing.Short() || os.Getenv("BITNET_HEAVY") == "" {
		t.Skip("set BITNET_HEAVY=1 to convert and verify the bitnet_b1_58-3B-shaped dummy")
	}
	m, err := presets.Get("bitnet_b1_58-3B")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: m.Config, Packed: m.Packed, Layers: 2, VocabSize: 512, Seed: 3, Tokenizer: goldenHF}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "3b-q2_0.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: "q2_0", ModelName: "3b"}); err != nil {
		t.Fatal(err)
	}
	for i, p := range conversionPrompts {
		rep, err := Run(Options{GGUF: out, HF: dir, Prompt: p})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Pass || rep.Numbers == nil {
			t.Fatalf("prompt %d: %q", i, rep.Failures)
		}
		t.Logf("prompt %d: max |Δlogit| %.4g of %.4g, KL %.3g of %.3g", i, rep.Numbers.MaxAbsDelta, rep.Thresholds.MaxDelta, rep.Numbers.MeanKL, rep.Thresholds.MaxKL)
	}
}
