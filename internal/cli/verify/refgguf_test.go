package verify_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/cli"
)

const b158F32 = "../../../testdata/golden/b158-h512/gguf/tiny-b158-h512-f32.gguf"

func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// requantTo writes in → out with the given requant flags.
func requantTo(t *testing.T, in, out string, flags ...string) string {
	t.Helper()
	args := append([]string{"requant", in, "--outfile", out, "--force"}, flags...)
	if code, _, stderr := runMain(args...); code != 0 {
		t.Fatalf("requant %v: exit %d: %s", flags, code, stderr)
	}
	return out
}

// TestRefGGUF: verify --ref-gguf accepts each requant of b158-h512 (same
// codes; bit-identical logits where the kernels and stored values are the
// same, the ternary limits otherwise), names the first tensor of a file
// whose codes were changed (exit 1), and refuses bad usage (exit 2).
func TestRefGGUF(t *testing.T) {
	dir := t.TempDir()
	i2s := requantTo(t, b158F32, filepath.Join(dir, "i2s.gguf"), "--outtype", "i2_s")
	arm := requantTo(t, i2s, filepath.Join(dir, "arm.gguf"), "--outtype", "i2_s", "--i2s-layout", "arm")
	iq2 := requantTo(t, i2s, filepath.Join(dir, "iq2.gguf"), "--outtype", "iq2_bn")
	iq1 := requantTo(t, iq2, filepath.Join(dir, "iq1.gguf"), "--outtype", "iq1_bn")
	q8 := requantTo(t, i2s, filepath.Join(dir, "q8.gguf"), "--outtype", "i2_s", "--token-embedding-type", "q8_0")
	for _, c := range []struct {
		name, ref, file string
		want            []string
	}{
		{"x86 vs arm layout", i2s, arm, []string{"24 checked", "0 differ", "max |Δlogit| 0 (max 0)", "bit-identical"}},
		{"I2_S vs IQ2_BN", i2s, iq2, []string{"0 differ", "(max 1.5)", "ternary limits"}},
		{"IQ2_BN vs ik's IQ2_BN", "../../../testdata/golden/ecosystems/tiny-b158-h512-iq2_bn.gguf", iq2, []string{"0 differ", "max |Δlogit| 0 (max 0)"}},
		{"IQ1_BN vs IQ2_BN", iq2, iq1, []string{"0 differ", "max |Δlogit| 0 (max 0)"}},
		{"F32 file vs I2_S", b158F32, i2s, []string{"0 differ", "ternary limits"}},
		{"retyped token_embd", i2s, q8, []string{"0 differ", "ternary limits"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runMain("verify", "--ref-gguf", c.ref, c.file, "--tokens", "4")
			if code != 0 {
				t.Fatalf("exit %d:\n%s%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}

	// One ternary code changed in blk.1.ffn_up: exit 1 naming it.
	bad := filepath.Join(dir, "bad.gguf")
	b, err := os.ReadFile(iq2)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(iq2)
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.Tensor("blk.1.ffn_up.weight")
	off := int(f.DataOffset + ti.Offset)
	f.Close()
	b[off+4] ^= 0x03 // first code of row 0: 2 bits flipped
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runMain("verify", "--ref-gguf", iq2, bad)
	if code != 1 || !strings.Contains(stderr, "tensor blk.1.ffn_up.weight") || !strings.Contains(stderr, "ternary code 0 (row 0, column 0)") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("tampered file: exit %d, stderr %q", code, stderr)
	}
	// Another model: fails in the structure, naming the tensor.
	code, _, stderr = runMain("verify", "--ref-gguf", "../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", i2s)
	if code != 1 || !strings.Contains(stderr, "tensor ") {
		t.Errorf("other model: exit %d, stderr %q", code, stderr)
	}

	for _, args := range [][]string{
		{"verify", "--ref-gguf", i2s, "--hf", "x", arm},
		{"verify", arm},
		{"verify", "--ref-gguf", i2s, "--gguf", arm, iq2},
	} {
		if code, _, stderr := runMain(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// TestWrongLayoutNamed: verify --hf on bitnet.cpp's own I2_S files of the
// golden model in the ARM and the 1×4 layout (which GGUF does not record,
// so they are read as x86) fails naming the layout the data matches and the
// requant command that rewrites it.
func TestWrongLayoutNamed(t *testing.T) {
	for _, c := range []struct{ file, layout string }{
		{"tiny-bitnet-i2_s-arm.gguf", "arm"},
		{"tiny-bitnet-i2_s-x86-1x4-16da220.gguf", "x86-1x4"},
	} {
		t.Run(c.layout, func(t *testing.T) {
			p := "../../../testdata/golden/ecosystems/" + c.file
			code, _, stderr := runMain("verify", "--gguf", p, "--hf", "../../../testdata/golden/tiny-bitnet/hf")
			want := "but the data matches the " + c.layout + " layout"
			if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "requant "+p+" --from-layout "+c.layout+" --outtype i2_s") {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			// The suggested command gives a file that verifies.
			out := filepath.Join(t.TempDir(), "x86.gguf")
			requantTo(t, p, out, "--from-layout", c.layout, "--outtype", "i2_s")
			if code, o, stderr := runMain("verify", "--gguf", out, "--hf", "../../../testdata/golden/tiny-bitnet/hf"); code != 0 {
				t.Fatalf("after requant: exit %d: %s%s", code, o, stderr)
			}
		})
	}
}
