package convert

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/codegen"
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
		typ  gguf.Type
	}{{OutTL1, "tl1", gguf.TypeTL1}, {OutTL2, "tl2", gguf.TypeTL2}} {
		t.Run(tc.file, func(t *testing.T) {
			ini, err := os.ReadFile(goldenDir + "/gguf/kernel_config_" + tc.file + ".ini")
			if err != nil {
				t.Fatal(err)
			}
			golden := openGGUF(t, goldenDir+"/gguf/ggml-model-"+tc.file+".gguf")
			ours := openGGUF(t, convertGolden(t, tc.out, func(o *Options) { o.KernelConfig = ini }))
			compareKVs(t, golden, ours)
			if v, _ := ours.String(codegen.KernelConfigKey); v != string(ini) {
				t.Errorf("%s = %q, want the kernel_config.ini used", codegen.KernelConfigKey, v)
			}
			if len(ours.Tensors) != len(golden.Tensors) {
				t.Fatalf("%d tensors, golden %d", len(ours.Tensors), len(golden.Tensors))
			}
			for i, g := range golden.Tensors {
				o := ours.Tensors[i]
				if o.Name != g.Name || o.Type != g.Type || !reflect.DeepEqual(o.Ne, g.Ne) {
					t.Errorf("tensor %d: %s %s %v, golden %s %s %v", i, o.Name, o.Type, o.Ne, g.Name, g.Type, g.Ne)
					continue
				}
				gd, _ := golden.TensorData(g.Name)
				od, _ := ours.TensorData(o.Name)
				if g.Type != tc.typ {
					if !bytes.Equal(gd, od) {
						t.Errorf("tensor %s: data differs", g.Name)
					}
					continue
				}
				off, _ := gguf.ScaleOffset(g.Type, g.Ne)
				if !bytes.Equal(gd[:off], od[:off]) {
					t.Errorf("tensor %s: packed bytes differ", g.Name)
				}
				gs, os := math.Float32frombits(le32(gd[off:])), math.Float32frombits(le32(od[off:]))
				if ulpDiff(gs, os) > 0 && !scaleULPAllowance[g.Name] {
					t.Errorf("tensor %s: scale %v, golden %v", g.Name, os, gs)
				}
			}
		})
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// Without --kernel-config the converter derives a valid configuration from
// the shapes, says so, and every projection gets a TL type.
func TestDerivedTLConfig(t *testing.T) {
	for _, out := range []OutType{OutTL1, OutTL2} {
		path, p, err := convertDir(t, goldenHF, Options{OutType: out})
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if len(p.Kernels) != 4 || !containsWarning(p, "[Kernels_0]") {
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

// The configuration the converter derives and prints is the one
// `codegen --from-config` writes, byte for byte.
func TestDerivedTLConfigMatchesCodegen(t *testing.T) {
	cfg, err := codegen.ReadConfigDir(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := codegen.ShapesFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"tl1", "tl2"} {
		ks, err := codegen.ConfigFor(arch, shapes)
		if err != nil {
			t.Fatal(err)
		}
		_, p, err := convertDir(t, goldenHF, Options{OutType: OutType(arch)})
		if err != nil {
			t.Fatal(err)
		}
		if !containsWarning(p, string(codegen.KernelConfig(ks))) {
			t.Errorf("%s: printed configuration differs from codegen --from-config:\n%q", arch, p.Warnings)
		}
	}
}
