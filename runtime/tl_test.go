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

// TestRepackedTail: a repacked ternary tensor whose K is not a multiple of
// 128 (here I2_S in the ARM layout, K = 320 = 2.5 blocks; TL files take the
// same path) is padded with zero weights, and every row equals the I2_S
// arithmetic over the K real weights: float32(float32(Σ t·q)/s)·scale with
// q the int8 activation of the K inputs — for one token and for a batch.
func TestRepackedTail(t *testing.T) {
	const k, m = 320, 6
	codes := make([]int8, k*m)
	for i := range codes {
		codes[i] = int8((i*7+i/5)%3) - 1
	}
	f := format.I2S{Layout: format.LayoutARM}
	nb, err := f.Bytes(k, m)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, nb)
	if err := f.Encode(data, codes, []float32{0.75}, k, m); err != nil {
		t.Fatal(err)
	}
	w, err := newRepackedMatrix(f, k, m, data)
	if err != nil {
		t.Fatal(err)
	}
	if w.K != k || w.kPad != 384 {
		t.Fatalf("K %d kPad %d, want %d 384", w.K, w.kPad, k)
	}
	xs := make([][]float32, 5)
	dst := make([][]float32, len(xs))
	for i := range xs {
		xs[i] = make([]float32, k)
		for j := range xs[i] {
			xs[i][j] = float32((j*13+i*5)%17) - 8.25
		}
		dst[i] = make([]float32, m)
	}
	w.MatMul(dst, xs, 2)
	for i, x := range xs {
		q := make([]int8, k)
		s, _ := QuantizeI8S(q, x)
		one := make([]float32, m)
		w.MatVec(one, x, nil, 1)
		for r := 0; r < m; r++ {
			var sum int32
			for j := 0; j < k; j++ {
				sum += int32(codes[r*k+j]) * int32(q[j])
			}
			want := float32(sum) / s * 0.75
			if one[r] != want || dst[i][r] != want {
				t.Fatalf("token %d row %d: MatVec %v MatMul %v, want %v", i, r, one[r], dst[i][r], want)
			}
		}
	}
	row := make([]float32, k)
	w.embedRow(row, 1)
	for j, v := range row {
		if v != float32(codes[k+j])*0.75 {
			t.Fatalf("embedRow 1 element %d: %v", j, v)
		}
	}
}
