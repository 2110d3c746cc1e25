package convert

import (
	"os"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// Acceptance (issue 5, d): our TL1 and TL2 conversions of the golden
// checkpoint, with the kernel configurations bitnet.cpp used, have the tensor
// data of ggml-model-tl{1,2}.gguf: packed bytes exactly, scales exactly, and
// every KV of those files.
func TestGoldenTL(t *testing.T) {
	for _, tc := range []struct {
		out  OutType
		file string
	}{{OutTL1, "tl1"}, {OutTL2, "tl2"}} {
		t.Run(tc.file, func(t *testing.T) {
			ini, err := os.ReadFile(goldenDir + "/gguf/kernel_config_" + tc.file + ".ini")
			if err != nil {
				t.Fatal(err)
			}
			golden := openGGUF(t, goldenDir+"/gguf/ggml-model-"+tc.file+".gguf")
			ours := openGGUF(t, convertGolden(t, tc.out, func(o *Options) { o.KernelConfig = ini }))
			if v, _ := ours.String(format.KernelConfigKey); v != string(ini) {
				t.Errorf("%s = %q, want the kernel_config.ini used", format.KernelConfigKey, v)
			}
			compareGolden(t, golden, ours)
		})
	}
}

// Without --kernel-config the converter derives a valid configuration from
// the shapes, says so in one line (not the whole kernel_config.ini, which
// the GGUF stores), and every projection gets a TL type.
func TestDerivedTLConfig(t *testing.T) {
	for _, out := range []OutType{OutTL1, OutTL2} {
		path, p, err := convertDir(t, goldenHF, Options{OutType: out})
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if len(p.Kernels) != 4 || !containsWarning(p, string(out)+" tiling derived from the shapes") || containsWarning(p, "[Kernels_0]") {
			t.Errorf("%s: kernels %v, warnings %q", out, p.Kernels, p.Warnings)
		}
		n := 0
		for _, ti := range openGGUF(t, path).Tensors {
			if ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2 {
				n++
			}
		}
		if n != 14 {
			t.Errorf("%s: %d TL tensors, want 14", out, n)
		}
	}
}

// The configuration the converter derives and stores is the one
// `codegen --from-config` writes, byte for byte.
func TestDerivedTLConfigMatchesCodegen(t *testing.T) {
	cfg, err := format.ReadConfigDir(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := format.ShapesFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"tl1", "tl2"} {
		ks, err := format.ConfigFor(arch, shapes)
		if err != nil {
			t.Fatal(err)
		}
		path, _, err := convertDir(t, goldenHF, Options{OutType: OutType(arch)})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := openGGUF(t, path).String(format.KernelConfigKey); v != string(format.KernelConfig(ks)) {
			t.Errorf("%s: stored configuration differs from codegen --from-config:\n%s", arch, v)
		}
	}
}
