package runtime

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// TestGoldenI2SLayouts: bitnet.cpp's own I2_S files of the other layouts
// (testdata/golden/ecosystems: microsoft/BitNet 16da220's quantize_i2_s
// built for ARM NEON, and for x86 without ACT_PARALLEL; the golden model's
// codes and scale, no layout key) run with Options.I2SLayout and give the
// golden x86 I2_S file's logits (bitnet.cpp build A) bit for bit, both
// prompts, one token per call and batched. Read as x86 (no option), the
// 1×4 file computes other logits.
func TestGoldenI2SLayouts(t *testing.T) {
	files := []struct {
		name   string
		layout format.Layout
	}{
		{"tiny-bitnet-i2_s-arm.gguf", format.LayoutARM},
		{"tiny-bitnet-i2_s-x86-1x4-16da220.gguf", format.LayoutX86_1x4},
	}
	for _, c := range files {
		path := filepath.Join(ecoDir, c.name)
		for _, prompt := range []string{"hello", "ids"} {
			for _, run := range seqRunners[:2] {
				t.Run(c.name+"_"+prompt+"_"+run.name, func(t *testing.T) {
					m := openModelOpts(t, path, Options{Threads: run.threads, I2SLayout: c.layout})
					checkGoldenBits(t, m, filepath.Join(tinyDir, "outputs", "i2s_"+prompt+"_seq_t1"), run.f)
				})
			}
		}
	}
	x86 := openModel(t, filepath.Join(ecoDir, "tiny-bitnet-i2_s-x86-1x4-16da220.gguf"), 1)
	ref := openModel(t, filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"), 1)
	a, _, _ := runSeq(t, x86, []int32{1, 100, 200}, 1)
	b, _, _ := runSeq(t, ref, []int32{1, 100, 200}, 1)
	if d, _, _ := maxAbsDiff(a, b); d == 0 {
		t.Error("the 1×4 file read as x86 gives the x86 logits: the layout would not matter")
	}
	f, err := reader.Open(filepath.Join(ecoDir, "tiny-bitnet-i2_s-arm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := LoadFile(f, Options{I2SLayout: "neon"}); err == nil || !strings.Contains(err.Error(), `unknown I2_S layout "neon"`) {
		t.Errorf("unknown layout: error %v", err)
	}
}
