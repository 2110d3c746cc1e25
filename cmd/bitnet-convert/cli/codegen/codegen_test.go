package codegen

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewCmdCodegen(t *testing.T) {
	cases := []struct {
		argv []string
		want CodegenOptions
	}{
		{[]string{"--model", "bitnet_b1_58-large"}, CodegenOptions{Model: "bitnet_b1_58-large", OutDir: "."}},
		{[]string{"--arch", "tl1", "--from-config", "dir", "--BM", "256, 128", "--BK", "1,2", "--bm=32,64", "--outdir", "out"},
			CodegenOptions{Arch: "tl1", FromConfig: "dir", BM: "256, 128", BK: "1,2", Bm: "32,64", OutDir: "out"}},
		{[]string{"--BM=-256,128,256", "--model", "x"}, CodegenOptions{Model: "x", BM: "-256,128,256", OutDir: "."}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.argv, " "), func(t *testing.T) {
			var got *CodegenOptions
			cmd := NewCmdCodegen(func(o *CodegenOptions) error { got = o; return nil })
			cmd.SetArgs(c.argv)
			cmd.SetOut(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			got.Out = nil
			if *got != c.want {
				t.Errorf("got %+v, want %+v", *got, c.want)
			}
		})
	}
}

func md5File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.Sum(data)
	return hex.EncodeToString(h[:])
}

// Test_codegenRun: the six setup_env argument sets of spec §5 give the
// reference ini bytes; list parsing tolerates spaces.
func Test_codegenRun(t *testing.T) {
	cases := []struct {
		name        string
		arch, model string
		bm, bk, sm  string
		wantMD5     string
	}{
		{"tl1 large", "tl1", "bitnet_b1_58-large", "256,128,256", "128,64,128", "32,64,32", "c63787f65d28e0c236bbbdac7b7a5b05"},
		{"tl1 3B", "tl1", "bitnet_b1_58-3B", "160,320,320", "64,128,64", "32,64,32", "f87876264a46ec16ede68a906fae864b"},
		{"tl1 llama3", "tl1", "Llama3-8B-1.58-100B-tokens", "256,128,256,128", "128,64,128,64", "32,64,32,64", "b8da571a81ac81b05dde05fda21872fb"},
		{"tl2 large", "tl2", "bitnet_b1_58-large", "256, 128, 256", "96,192,96", "32,32,32", "2f9eabbae513c05ad1b2df9ff620fdae"},
		{"tl2 3B", "tl2", "bitnet_b1_58-3B", "160,320,320", "96,96,96", "32,32,32", "2c573a76a2f15b3312db1a534560016d"},
		{"tl2 llama3", "tl2", "Llama3-8B-1.58-100B-tokens", "256,128,256,128", "96,96,96,96", "32,32,32,32", "4e1d0269e53d6f9aadfdc4ff546781ba"},
		{"tl2 3B preset defaults", "tl2", "bitnet_b1_58-3B", "", "", "", "2c573a76a2f15b3312db1a534560016d"},
		{"tl1 large preset defaults", "tl1", "bitnet_b1_58-large", "", "", "", "c63787f65d28e0c236bbbdac7b7a5b05"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			err := codegenRun(&CodegenOptions{Arch: c.arch, Model: c.model, BM: c.bm, BK: c.bk, Bm: c.sm, OutDir: dir, Out: &out})
			if err != nil {
				t.Fatal(err)
			}
			if got := md5File(t, filepath.Join(dir, "include", "kernel_config.ini")); got != c.wantMD5 {
				t.Errorf("ini md5 %s, want %s", got, c.wantMD5)
			}
			h1 := md5File(t, filepath.Join(dir, "include", "bitnet-lut-kernels.h"))
			// Deterministic: a second run gives the same header.
			dir2 := t.TempDir()
			if err := codegenRun(&CodegenOptions{Arch: c.arch, Model: c.model, BM: c.bm, BK: c.bk, Bm: c.sm, OutDir: dir2}); err != nil {
				t.Fatal(err)
			}
			if h2 := md5File(t, filepath.Join(dir2, "include", "bitnet-lut-kernels.h")); h1 != h2 {
				t.Error("header differs between runs")
			}
			if !strings.Contains(out.String(), "wrote "+filepath.Join(dir, "include", "kernel_config.ini")) {
				t.Errorf("summary: %s", out.String())
			}
		})
	}
}

func writeConfig(t *testing.T, json string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBR14: shapes come from the config (k/v rows = kv heads × head_dim),
// never from another model's table; Falcon presets do the same.
func TestBR14(t *testing.T) {
	f1 := writeConfig(t, `{"hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 8192}`)
	f7 := writeConfig(t, `{"hidden_size": 3072, "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 23040}`)
	for _, c := range []struct {
		name string
		opts CodegenOptions
		want string
	}{
		{"falcon 1B tl2", CodegenOptions{Arch: "tl2", FromConfig: f1},
			"[Kernels_0]\nm = 2048\nk = 2048\nbm = 256\nbk = 96\nbmm = 32\n\n[Kernels_1]\nm = 1024\nk = 2048\nbm = 256\nbk = 96\nbmm = 32\n\n" +
				"[Kernels_2]\nm = 8192\nk = 2048\nbm = 256\nbk = 96\nbmm = 32\n\n[Kernels_3]\nm = 2048\nk = 8192\nbm = 256\nbk = 96\nbmm = 32\n\n"},
		{"falcon 7B tl2", CodegenOptions{Arch: "tl2", FromConfig: f7},
			"[Kernels_0]\nm = 3072\nk = 3072\nbm = 256\nbk = 96\nbmm = 32\n\n[Kernels_1]\nm = 1024\nk = 3072\nbm = 256\nbk = 96\nbmm = 32\n\n" +
				"[Kernels_2]\nm = 23040\nk = 3072\nbm = 256\nbk = 96\nbmm = 32\n\n[Kernels_3]\nm = 3072\nk = 23040\nbm = 256\nbk = 96\nbmm = 32\n\n"},
		{"falcon 7B preset tl1", CodegenOptions{Arch: "tl1", Model: "Falcon3-7B-Instruct-1.58bit"},
			"[Kernels_0]\nm = 3072\nk = 3072\nbm = 256\nbk = 128\nbmm = 32\n\n[Kernels_1]\nm = 1024\nk = 3072\nbm = 256\nbk = 128\nbmm = 32\n\n" +
				"[Kernels_2]\nm = 23040\nk = 3072\nbm = 256\nbk = 128\nbmm = 32\n\n[Kernels_3]\nm = 3072\nk = 23040\nbm = 256\nbk = 128\nbmm = 32\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.OutDir = t.TempDir()
			if err := codegenRun(&c.opts); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(c.opts.OutDir, "include", "kernel_config.ini"))
			if string(got) != c.want {
				t.Errorf("got\n%s", got)
			}
		})
	}
}

func TestDefaultArch(t *testing.T) {
	for goarch, want := range map[string]string{"arm64": "tl1", "amd64": "tl2", "386": "tl2"} {
		if got := DefaultArch(goarch); got != want {
			t.Errorf("%s: %s", goarch, got)
		}
		dir := t.TempDir()
		if err := codegenRun(&CodegenOptions{GOARCH: goarch, Model: "bitnet_b1_58-large", OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		hdr, _ := os.ReadFile(filepath.Join(dir, "include", "bitnet-lut-kernels.h"))
		if !bytes.Contains(hdr, []byte("#if defined(GGML_BITNET_"+map[string]string{"tl1": "ARM_TL1", "tl2": "X86_TL2"}[want]+")")) {
			t.Errorf("%s: header is not %s", goarch, want)
		}
	}
}
