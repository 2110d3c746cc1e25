package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

func loadTL(t *testing.T, file, ini string) (*Model, error) {
	t.Helper()
	f, err := reader.Open(filepath.Join(tinyDir, "gguf", file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var kerns []format.Kernel
	if ini != "" {
		b, err := os.ReadFile(filepath.Join(tinyDir, "gguf", ini))
		if err != nil {
			t.Fatal(err)
		}
		if kerns, err = format.ParseKernelConfig(b); err != nil {
			t.Fatal(err)
		}
	}
	return LoadFile(f, Options{TLKernels: kerns})
}

// TestGoldenTL: the TL2 file with its kernel_config gives bitnet.cpp's TL2
// logits (tl2_hello_seq_t1, themselves bitwise equal to I2_S) bit for bit;
// the TL1 file (ARM-only in the reference, no outputs of its own) decodes to
// the same ternary weights and scales, so it must give the I2_S logits.
func TestGoldenTL(t *testing.T) {
	for _, c := range []struct{ file, ini, golden string }{
		{"ggml-model-tl2.gguf", "kernel_config_tl2.ini", "tl2_hello_seq_t1"},
		{"ggml-model-tl1.gguf", "kernel_config_tl1.ini", "i2s_hello_seq_t1"},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := loadTL(t, c.file, c.ini)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(tinyDir, "outputs", c.golden)
			prompt, wantGen := goldenIDs(t, out+".txt")
			wantP := readRows(t, out+".prompt_logits.f32", m.Params.NVocab)
			wantG := readRows(t, out+".gen_logits.f32", m.Params.NVocab)
			gotP, gotG, gen := runSeq(t, m, prompt, len(wantGen))
			if d, r, col := maxAbsDiff(append(gotP, gotG...), append(wantP, wantG...)); d != 0 {
				t.Errorf("logits differ from %s: |Δ| %.3g at row %d id %d", c.golden, d, r, col)
			}
			for i := range gen {
				if gen[i] != wantGen[i] {
					t.Fatalf("generated ids %v, want %v", gen, wantGen)
				}
			}
		})
	}
	// Without the kernel config the error names the tensor and the fix.
	if _, err := loadTL(t, "ggml-model-tl2.gguf", ""); err == nil || !strings.Contains(err.Error(), "kernel_config.ini") || !strings.Contains(err.Error(), "tensor blk.") {
		t.Fatalf("load without kernels: %v", err)
	}
	// With the other arch's config the tiling does not fit: an error, not a panic.
	if _, err := loadTL(t, "ggml-model-tl2.gguf", "kernel_config_tl1.ini"); err == nil {
		t.Fatal("TL2 file with the TL1 config loaded")
	}
}
