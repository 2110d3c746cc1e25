package codegen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// TestHeaderDeterministic: same input, same bytes; BR-13 (f): two_k = 0
// kernels compile (checked by TestCompiledKernels) and are rendered.
func TestHeaderDeterministic(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	ks := presetKernels(t, m, format.TL2Arch)
	a, err := Header(format.TL2Arch, ks)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Header(format.TL2Arch, ks)
	if !bytes.Equal(a, b) {
		t.Fatal("header differs between runs")
	}
	for _, s := range []string{
		"void ggml_preprocessor(int bs, int m, int three_k, int two_k, void * B, void * LUT_Scales, void * Three_QLUT, void * Two_QLUT)",
		"void ggml_qgemm_lut(int bs, int m, int k, int BK, void * A, void * sign, void * LUT, void * Scales, void * LUT_Scales, void * C)",
		"void ggml_bitnet_transform_tensor(struct ggml_tensor * tensor)",
		"static inline bool is_type_supported(enum ggml_type type)",
		"kernel 1: M=1536 K=1536 BM=128 BK=192 bm=32 three_k=1536 two_k=0",
		"#define BM1536_4096 256",
	} {
		if !bytes.Contains(a, []byte(s)) {
			t.Errorf("TL2 header lacks %q", s)
		}
	}
	h1, err := Header(format.TL1Arch, presetKernels(t, m, format.TL1Arch))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"void ggml_preprocessor(int m, int k, void * B, void * LUT_Scales, void * QLUT)",
		"void ggml_qgemm_lut(int m, int k, void * A, void * LUT, void * Scales, void * LUT_Scales, void * C)",
		"(size_t)k * (size_t)m / 4",
	} {
		if !bytes.Contains(h1, []byte(s)) {
			t.Errorf("TL1 header lacks %q", s)
		}
	}
	if _, err := Header(format.TL1Arch, []format.Kernel{{M: 64, K: 64, BM: 64, BK: 64, Bm: 16}}); err == nil {
		t.Error("invalid set rendered")
	}
}

// TestPresetHeaders renders both files for every preset and arch (setup_env
// table or derived shapes), as `codegen --model` does.
func TestPresetHeaders(t *testing.T) {
	for _, m := range presets.All() {
		for _, arch := range []string{format.TL1Arch, format.TL2Arch} {
			ks := presetKernels(t, m, arch)
			h, err := Header(arch, ks)
			if err != nil {
				t.Fatalf("%s %s: %v", m.Name, arch, err)
			}
			for _, k := range ks {
				if !bytes.Contains(h, []byte(fmt.Sprintf("#define BM%d_%d %d\n", k.M, k.K, k.BM))) {
					t.Errorf("%s %s: header lacks the BM define of %+v", m.Name, arch, k)
				}
			}
		}
	}
}

func TestGenerateWritesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	err := Generate(format.TL1Arch, []format.Kernel{{M: 1536, K: 4096, BM: 256, BK: 128, Bm: 16}}, dir)
	if err == nil {
		t.Fatal("accepted bm=16")
	}
	if _, err := os.Stat(filepath.Join(dir, "include")); !os.IsNotExist(err) {
		t.Errorf("include/ created on error: %v", err)
	}
	ks := []format.Kernel{{M: 1536, K: 4096, BM: 256, BK: 128, Bm: 32}}
	if err := Generate(format.TL1Arch, ks, dir); err != nil {
		t.Fatal(err)
	}
	ini, _ := os.ReadFile(filepath.Join(dir, ConfigPath))
	if !bytes.Equal(ini, format.KernelConfig(ks)) {
		t.Error("ini content")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "include"))
	if len(entries) != 2 {
		t.Errorf("include/ has %d entries, want 2 (no temp files)", len(entries))
	}
}
