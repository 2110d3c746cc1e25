package verify_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const b158F32 = "../../../../testdata/golden/b158-h512/gguf/tiny-b158-h512-f32.gguf"

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
// same, the error model's limits otherwise), names the first tensor of a file
// whose codes were changed (exit 1), and refuses bad usage (exit 2).
// Across kernels the limits are the error model's (verify/thresholds.go).
func TestRefGGUF(t *testing.T) {
	dir := t.TempDir()
	i2s := requantTo(t, b158F32, filepath.Join(dir, "i2s.gguf"), "--outtype", "i2_s")
	arm := requantTo(t, i2s, filepath.Join(dir, "arm.gguf"), "--outtype", "i2_s", "--i2s-layout", "arm")
	iq2 := requantTo(t, i2s, filepath.Join(dir, "iq2.gguf"), "--outtype", "iq2_bn")
	iq1 := requantTo(t, iq2, filepath.Join(dir, "iq1.gguf"), "--outtype", "iq1_bn")
	q8 := requantTo(t, i2s, filepath.Join(dir, "q8.gguf"), "--outtype", "i2_s", "--token-embedding-type", "q8_0")
	tq2 := requantTo(t, i2s, filepath.Join(dir, "tq2.gguf"), "--outtype", "tq2_0")
	for _, c := range []struct {
		name, ref, file string
		want            []string
	}{
		{"x86 vs arm layout", i2s, arm, []string{"24 checked", "0 differ", "max |Δlogit| 0 (max 0)", "bit-identical"}},
		{"I2_S vs TQ2_0", i2s, tq2, []string{"0 differ", "error model's limits", "float64 reference built from", "--ref-gguf file against the same float reference"}},
		{"IQ2_BN vs ik's IQ2_BN", "../../../../testdata/golden/ecosystems/tiny-b158-h512-iq2_bn.gguf", iq2, []string{"0 differ", "max |Δlogit| 0 (max 0)"}},
		{"IQ1_BN vs IQ2_BN", iq2, iq1, []string{"0 differ", "max |Δlogit| 0 (max 0)"}},
		{"F32 file vs I2_S", b158F32, i2s, []string{"0 differ", "error model's limits"}},
		{"retyped token_embd", i2s, q8, []string{"0 differ", "error model's limits"}},
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
	code, _, stderr = runMain("verify", "--ref-gguf", "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", i2s)
	if code != 1 || !strings.Contains(stderr, "tensor ") {
		t.Errorf("other model: exit %d, stderr %q", code, stderr)
	}

	// The file alone is verify's llama.cpp-style form (the runtime checks).
	if code, o, stderr := runMain("verify", arm); code != 0 || !strings.Contains(o, "runtime sanity only") {
		t.Errorf("verify %s: exit %d (%s%s)", arm, code, o, stderr)
	}
	for _, args := range [][]string{
		{"verify", "--ref-gguf", i2s, "--hf", "x", arm},
		{"verify"},
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
			p := "../../../../testdata/golden/ecosystems/" + c.file
			code, _, stderr := runMain("verify", "--gguf", p, "--hf", "../../../../testdata/golden/tiny-bitnet/hf")
			want := "but the data matches the " + c.layout + " layout"
			if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "requant "+p+" --from-layout "+c.layout+" --outtype i2_s") {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			// The suggested command gives a file that verifies.
			out := filepath.Join(t.TempDir(), "x86.gguf")
			requantTo(t, p, out, "--from-layout", c.layout, "--outtype", "i2_s")
			if code, o, stderr := runMain("verify", "--gguf", out, "--hf", "../../../../testdata/golden/tiny-bitnet/hf"); code != 0 {
				t.Fatalf("after requant: exit %d: %s%s", code, o, stderr)
			}
		})
	}
}

// TestRefGGUFChains: each requant of a chain verifies against its input.
// Across kernels both files are held to the ternary limits against the
// float64 reference built from the input's weights; within one kernel the
// logits are bit-identical. b158-h512: I2_S → TQ2_0 → IQ2_BN → TQ1_0 →
// IQ1_BN and the TQ2_0-vs-IQ2_BN pair; the golden tiny model: I2_S →
// TQ2_0 → IQ2_BN (--allow-fallback: its 256-wide rows) → TQ1_0 → I2_S
// arm → x86-1x4 → x86 under the default limits.
func TestRefGGUFChains(t *testing.T) {
	dir := t.TempDir()
	type step struct {
		out   string
		flags []string
		want  string // "bit-identical" or "float64 reference"
	}
	for _, c := range []struct {
		name, start string
		steps       []step
	}{
		{"b158-h512", b158F32, []step{
			{"i2_s", []string{"--outtype", "i2_s"}, "float64 reference"},
			{"tq2_0", []string{"--outtype", "tq2_0"}, "float64 reference"},
			{"iq2_bn", []string{"--outtype", "iq2_bn"}, "float64 reference"},
			{"tq1_0", []string{"--outtype", "tq1_0"}, "float64 reference"},
			{"iq1_bn", []string{"--outtype", "iq1_bn"}, "float64 reference"},
		}},
		{"tiny-bitnet", "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", []step{
			{"tq2_0", []string{"--outtype", "tq2_0"}, "float64 reference"},
			{"iq2_bn", []string{"--outtype", "iq2_bn", "--allow-fallback"}, "float64 reference"},
			{"tq1_0", []string{"--outtype", "tq1_0"}, "float64 reference"},
			{"arm", []string{"--outtype", "i2_s", "--i2s-layout", "arm"}, "float64 reference"},
			{"x86-1x4", []string{"--outtype", "i2_s", "--i2s-layout", "x86-1x4"}, "bit-identical"},
			{"x86", []string{"--outtype", "i2_s"}, "bit-identical"},
		}},
	} {
		in := c.start
		for _, s := range c.steps {
			out := requantTo(t, in, filepath.Join(dir, c.name+"-"+s.out+".gguf"), s.flags...)
			t.Run(c.name+"/"+s.out, func(t *testing.T) {
				args := []string{"verify", "--ref-gguf", in, out}
				code, o, stderr := runMain(args...)
				if code != 0 || !strings.Contains(o, "0 differ") || !strings.Contains(o, s.want) || !strings.HasSuffix(o, "PASS\n") {
					t.Fatalf("%v: exit %d:\n%s%s", args, code, o, stderr)
				}
				if s.want == "float64 reference" && !strings.Contains(o, "--ref-gguf file against the same float reference: top-1") {
					t.Errorf("the reference file's metrics are not reported:\n%s", o)
				}
			})
			in = out
		}
	}

	// The newcomer's pair: TQ2_0 against IQ2_BN, both made from the I2_S,
	// passes under the limits the error model derives (it needed
	// --max-delta 2.5 under the old constant 1.5), and -v says why.
	tq2, iq2 := filepath.Join(dir, "b158-h512-tq2_0.gguf"), filepath.Join(dir, "b158-h512-iq2_bn.gguf")
	code, o, stderr := runMain("verify", "-v", "--ref-gguf", tq2, iq2)
	if code != 0 || !strings.Contains(o, "bound (error model, families ") || !strings.Contains(o, "max |Δlogit| ≤ z·K·r·σ") {
		t.Errorf("TQ2_0 vs IQ2_BN: exit %d:\n%s%s", code, o, stderr)
	}
}

// setFloatKV overwrites the float32 value of the KV whose key ends in
// suffix (GGUF: key string, u32 type 6, 4 value bytes) in a copy of in.
func setFloatKV(t *testing.T, in, out, suffix string, v float32) {
	t.Helper()
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(suffix))
	if i < 0 || binary.LittleEndian.Uint32(b[i+len(suffix):]) != 6 {
		t.Fatalf("%s: no float32 key *%s", in, suffix)
	}
	binary.LittleEndian.PutUint32(b[i+len(suffix)+4:], math.Float32bits(v))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRefGGUFWrongLogits: a B whose tensors equal A's but whose KVs make
// it compute other logits (rope theta or rms eps altered) fails on the
// logit limits against the float reference of A, naming B; A passes.
func TestRefGGUFWrongLogits(t *testing.T) {
	dir := t.TempDir()
	i2s := requantTo(t, b158F32, filepath.Join(dir, "i2s.gguf"), "--outtype", "i2_s")
	tq2 := requantTo(t, i2s, filepath.Join(dir, "tq2.gguf"), "--outtype", "tq2_0")
	for _, c := range []struct {
		suffix string
		v      float32
	}{{".rope.freq_base", 10}, {".attention.layer_norm_rms_epsilon", 30}} {
		t.Run(c.suffix, func(t *testing.T) {
			bad := filepath.Join(dir, "bad.gguf")
			setFloatKV(t, tq2, bad, c.suffix, c.v)
			code, o, stderr := runMain("verify", "--ref-gguf", i2s, bad)
			if code != 1 || !strings.Contains(o, "0 differ") || !strings.Contains(stderr, "logits of "+bad+" against the float reference") || strings.Contains(o, "FAIL logits of the reference file") {
				t.Errorf("exit %d:\n%s%s", code, o, stderr)
			}
		})
	}
}

// TestREADMERequantChain runs the README's requant-chain block as written
// (from a scratch directory, the bundled testdata/ paths made absolute):
// every command exits 0 and every verify prints PASS.
func TestREADMERequantChain(t *testing.T) {
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- requant-chain")
	if i < 0 {
		t.Fatal("README.md has no requant-chain block")
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	end := strings.Index(s[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("README.md: the requant-chain marker is not followed by a ```sh block")
	}
	testdata, err := filepath.Abs("../../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	n := 0
	for _, line := range strings.Split(s[start+6:start+6+end], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		args := strings.Fields(line)
		if args[0] != "bitnet-convert" {
			t.Fatalf("README block line %q is not a bitnet-convert command", line)
		}
		for j, a := range args {
			if strings.HasPrefix(a, "testdata/") {
				args[j] = filepath.Join(testdata, strings.TrimPrefix(a, "testdata/"))
			}
		}
		code, o, stderr := runMain(args[1:]...)
		if code != 0 || (args[1] == "verify" && !strings.HasSuffix(o, "PASS\n")) {
			t.Fatalf("%s: exit %d:\n%s%s", line, code, o, stderr)
		}
		n++
	}
	if n < 16 {
		t.Errorf("%d commands in the block, want the whole chain (16)", n)
	}
}
