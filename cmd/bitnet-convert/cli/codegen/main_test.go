package codegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
)

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// TestInvalidArgumentSets: BR-12, BR-13 (a)–(d), BR-25 and bad usage exit
// 2 through cli.Main with one line naming the kernel/flag, and leave the
// output directory exactly as it was — both a fresh one and one holding
// earlier outputs.
func TestInvalidArgumentSets(t *testing.T) {
	cfg5460 := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg5460, "config.json"),
		[]byte(`{"hidden_size": 2048, "intermediate_size": 5460, "num_attention_heads": 16, "num_hidden_layers": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		msgs []string
	}{
		{"BR-12 tl1", []string{"--arch", "tl1", "--model", "bitnet_b1_58-large", "--BM", "256,128,256", "--BK", "128,64,128", "--bm", "16,16,16"},
			[]string{"kernel 0 (M=1536, K=4096): bm=16 not allowed for TL1 (allowed: 32, 64)", "kernel 2 (M=4096, K=1536): bm=16"}},
		{"BR-12 tl2", []string{"--arch", "tl2", "--model", "bitnet_b1_58-large", "--BM", "256,128,256", "--BK", "96,192,96", "--bm", "16,32,32"},
			[]string{"kernel 0 (M=1536, K=4096): bm=16 not allowed for TL2 (allowed: 32)"}},
		{"BR-13a", []string{"--arch", "tl1", "--model", "bitnet_b1_58-3B", "--BM", "160,320,300", "--BK", "64,128,64", "--bm", "32,64,32"},
			[]string{"kernel 2 (M=8640, K=3200): BM=300 does not divide M"}},
		{"BR-13b", []string{"--arch", "tl1", "--model", "bitnet_b1_58-3B", "--BM", "160,320,320", "--BK", "64,128,96", "--bm", "32,64,32"},
			[]string{"kernel 2 (M=8640, K=3200): BK=96 does not divide K"}},
		{"BR-13c", []string{"--arch", "tl1", "--model", "bitnet_b1_58-3B", "--BM", "160,320,320", "--BK", "64,128,64", "--bm", "64,64,32"},
			[]string{"kernel 0 (M=3200, K=8640): BM=160 is not a multiple of bm=64"}},
		{"BR-13d", []string{"--arch", "tl1", "--model", "bitnet_b1_58-large", "--BM", "256,128", "--BK", "128,64,128", "--bm", "32,64,32"},
			[]string{"got 2 BM values for 3 shapes"}},
		{"BR-25 tl2 from-config", []string{"--arch", "tl2", "--from-config", cfg5460},
			[]string{"(M=2048, K=5460): no BK"}},
		{"BR-25 tl2 BK=96", []string{"--arch", "tl2", "--from-config", cfg5460, "--BM", "256,420,256", "--BK", "96,96,96", "--bm", "32,32,32"},
			[]string{"kernel 2 (M=2048, K=5460): BK=96 leaves K % BK = 84, not a multiple of 32", "kernel 1 (M=5460, K=2048): BM=420 is not a multiple of the TL2 row block 32"}},
		{"BR-25 tl1 BK=128", []string{"--arch", "tl1", "--from-config", cfg5460, "--BM", "256,420,256", "--BK", "128,128,128", "--bm", "32,32,32"},
			[]string{"kernel 2 (M=2048, K=5460): BK=128 does not divide K", "kernel 2 (M=2048, K=5460): K % 16 = 4, must be 0"}},
		{"negative BM", []string{"--arch", "tl2", "--model", "bitnet_b1_58-large", "--BM=-256,128,256", "--BK", "96,192,96", "--bm", "32,32,32"},
			[]string{"BM=-256 must be positive"}},
		{"empty item", []string{"--model", "bitnet_b1_58-large", "--BM", "256,,256", "--BK", "96,192,96", "--bm", "32,32,32"},
			[]string{"--BM", "item 2 is empty"}},
		{"not an int", []string{"--model", "bitnet_b1_58-large", "--BM", "256,128,256", "--BK", "96,x,96", "--bm", "32,32,32"},
			[]string{"--BK", `item 2 ("x") is not an integer`}},
		{"partial lists", []string{"--model", "bitnet_b1_58-large", "--BM", "256,128,256"}, []string{"--BM, --BK and --bm"}},
		{"unknown model", []string{"--model", "BitNet-b1.58-2B"}, []string{`unknown model "BitNet-b1.58-2B"`, "bitnet_b1_58-large"}},
		{"no source", []string{"--arch", "tl2"}, []string{"--model NAME or --from-config DIR"}},
		{"both sources", []string{"--model", "bitnet_b1_58-large", "--from-config", cfg5460}, []string{"not both"}},
		{"bad arch", []string{"--arch", "tl3", "--model", "bitnet_b1_58-large"}, []string{"--arch", "tl3"}},
		{"positional arg", []string{"bitnet_b1_58-large"}, []string{"codegen takes no arguments"}},
	}
	for _, c := range cases {
		for _, prefill := range []bool{false, true} {
			name := c.name
			if prefill {
				name += "/existing outputs"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				if prefill {
					if err := os.MkdirAll(filepath.Join(dir, "include"), 0o755); err != nil {
						t.Fatal(err)
					}
					for _, f := range []string{"bitnet-lut-kernels.h", "kernel_config.ini"} {
						if err := os.WriteFile(filepath.Join(dir, "include", f), []byte("old "+f), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				before := snapshot(t, dir)
				var out, errb bytes.Buffer
				args := append([]string{"codegen", "--outdir", dir}, c.args...)
				if code := cli.Main(args, &out, &errb); code != 2 {
					t.Fatalf("exit %d, want 2; stderr %q", code, errb.String())
				}
				msg := errb.String()
				if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "bitnet-convert: ") {
					t.Errorf("want one error line, got %q", msg)
				}
				for _, m := range c.msgs {
					if !strings.Contains(msg, m) {
						t.Errorf("stderr %q lacks %q", msg, m)
					}
				}
				after := snapshot(t, dir)
				if strings.Join(keys(before), ",") != strings.Join(keys(after), ",") {
					t.Fatalf("outdir changed: %v -> %v", keys(before), keys(after))
				}
				for k, v := range before {
					if after[k] != v {
						t.Errorf("%s changed", k)
					}
				}
			})
		}
	}
}

// TestValidRunsThroughMain: BR-13 (e) and (f) succeed with exit 0.
func TestValidRunsThroughMain(t *testing.T) {
	for args, want := range map[*[]string][]string{
		{"--arch", "tl2", "--model", "bitnet_b1_58-3B", "--BM", "160,320,320", "--BK", "96,96,96", "--bm", "32,32,32"}: {
			"kernel 0: M=3200 K=8640 BM=160 BK=96 bm=32 three_k=8640 two_k=0",
			"kernel 1: M=3200 K=3200 BM=320 BK=96 bm=32 three_k=3168 two_k=32"},
		{"--arch", "tl2", "--model", "bitnet_b1_58-large", "--BK", "96,192,96", "--BM", "256,128,256", "--bm", "32,32,32"}: {
			"kernel 1: M=1536 K=1536 BM=128 BK=192 bm=32 three_k=1536 two_k=0"},
	} {
		args := *args
		dir := t.TempDir()
		var out, errb bytes.Buffer
		if code := cli.Main(append([]string{"codegen", "--outdir", dir}, args...), &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("summary lacks %q:\n%s", w, out.String())
			}
		}
		if len(snapshot(t, filepath.Join(dir, "include"))) != 3 { // dir + 2 files
			t.Errorf("include/ holds %v", keys(snapshot(t, filepath.Join(dir, "include"))))
		}
	}
}

// TestOutdirUnderFile: an unusable --outdir fails with exit 1 naming it.
func TestOutdirUnderFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main([]string{"codegen", "--model", "bitnet_b1_58-large", "--outdir", filepath.Join(file, "sub")}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), file) {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if got := snapshot(t, dir); len(got) != 2 { // dir + file
		t.Errorf("dir now holds %v", keys(got))
	}
}
