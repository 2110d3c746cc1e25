package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

// scaledCheckpoint copies the tiny golden checkpoint with config.json's
// rope_scaling set to rs.
func scaledCheckpoint(t *testing.T, rs map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"model.safetensors", "tokenizer.model", "tokenizer_config.json"} {
		if err := os.Symlink(mustAbs(t, filepath.Join(goldenHF, name)), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := goldenConfig(t)
	cfg["rope_scaling"] = rs
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestVerifyRopeScaling (defects H4, H7; issue 20 c): a checkpoint with
// linear rope scaling converts, runs scaled and verifies against the float
// reference, which scales too: factor 1 (H7: it failed "rope_scaling is
// set") and factor 4 pass verify --hf; the factor-4 file's runtime logits
// stay within the bound of the scaled reference while moving far beyond
// it from the unscaled reference (the factor-1 file's); the same file
// checked against the unscaled checkpoint fails on its metadata.
func TestVerifyRopeScaling(t *testing.T) {
	files := map[float64]string{}
	for _, factor := range []float64{1, 4} {
		hf := scaledCheckpoint(t, map[string]any{"type": "linear", "factor": factor})
		out := filepath.Join(t.TempDir(), "m.gguf")
		if _, err := convert.ConvertDir(context.Background(), hf, out, false, false, convert.Options{ModelName: "tiny", OutType: convert.OutF32}); err != nil {
			t.Fatal(err)
		}
		files[factor] = out
		rep, err := Run(Options{GGUF: out, HF: hf})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Pass {
			t.Fatalf("factor %v: %q", factor, rep.Failures)
		}
		t.Logf("factor %v: max |Δlogit| %.4g (bound %.4g)", factor, rep.Numbers.MaxAbsDelta, rep.Thresholds.MaxDelta)
	}
	// The scaled file against the unscaled checkpoint: the metadata check
	// names the factor; the logits, compared anyway below, are far off.
	rep, err := Run(Options{GGUF: files[4], HF: goldenHF})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || len(rep.Metadata) == 0 {
		t.Fatalf("factor-4 file against the unscaled checkpoint passes: %+v", rep.Metadata)
	}
	one, _, err := fileLogits(files[1])
	if err != nil {
		t.Fatal(err)
	}
	four, _, err := fileLogits(files[4])
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRowDelta(one, four); d < 10*rep.Thresholds.MaxDelta {
		t.Errorf("factor 4 moves the logits by only %.4g from factor 1 (bound %.4g)", d, rep.Thresholds.MaxDelta)
	}
	// A factor the runtime would refuse is refused by the converter too.
	for _, f := range []float64{0, -4} {
		hf := scaledCheckpoint(t, map[string]any{"type": "linear", "factor": f})
		_, err := convert.ConvertDir(context.Background(), hf, filepath.Join(t.TempDir(), "x.gguf"), false, false, convert.Options{ModelName: "tiny"})
		if err == nil || !strings.Contains(err.Error(), "rope_scaling factor") {
			t.Errorf("factor %v: %v", f, err)
		}
	}
}
