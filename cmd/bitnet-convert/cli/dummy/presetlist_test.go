package dummy

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// TestPresetListSizes (H35): dummy --preset lists each preset's parameter
// count and checkpoint size; the figures of two presets are the published
// ones (2B-4T: 2,412,820,480 parameters, testdata/configs/README.md;
// bitnet_b1_58-large: 729M, 1.46 GB of bf16).
func TestPresetListSizes(t *testing.T) {
	var out bytes.Buffer
	if err := printPresets(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if h := strings.Fields(lines[0]); !strings.Contains(lines[0], "PARAMS") || !strings.Contains(lines[0], "SIZE") {
		t.Fatalf("header %q has no PARAMS/SIZE", h)
	}
	for _, c := range []struct{ name, params, size string }{
		{"BitNet-b1.58-2B-4T-bf16", "2.41B", "4.83 GB"},
		{"bitnet_b1_58-large", "728.84M", "1.46 GB"},
	} {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == c.name {
				found = true
				if !strings.Contains(l, "  "+c.params+"  ") || !strings.Contains(l, "  "+c.size+"  ") {
					t.Errorf("%s: %q, want params %s size %s", c.name, l, c.params, c.size)
				}
			}
		}
		if !found {
			t.Errorf("%s not listed", c.name)
		}
	}
	if len(lines) < len(presets.Names())+1 {
		t.Errorf("%d lines for %d presets", len(lines), len(presets.Names()))
	}
}

// TestFalconPresetsContextLength (H35): every Falcon3 preset records a
// context length, and a 1-layer dummy of the 1B one (vocabulary cut to 512)
// converts without the "no max_position_embeddings" notice.
func TestFalconPresetsContextLength(t *testing.T) {
	for _, name := range presets.Names() {
		if !strings.HasPrefix(name, "Falcon3-") {
			continue
		}
		m, _ := presets.Get(name)
		if _, ok := m.Config["max_position_embeddings"]; !ok {
			t.Errorf("preset %s has no max_position_embeddings", name)
			continue
		}
		if name != "Falcon3-1B-Instruct-1.58bit" {
			continue // one conversion is enough; the key is what matters
		}
		dir := filepath.Join(t.TempDir(), "hf")
		if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: m.Config, Layers: 1, VocabSize: 512, Packed: true, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		plan, err := convert.ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "o.gguf"), false, true, convert.Options{NoVocab: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range plan.Warnings {
			if strings.Contains(w, "max_position_embeddings") {
				t.Errorf("%s: %s", name, w)
			}
		}
	}
}
