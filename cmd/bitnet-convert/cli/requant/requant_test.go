package requant

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const goldenI2S = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

func TestNewCmdRejectsBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{goldenI2S},
		{goldenI2S, "--outtype", "q4_0"},
		{goldenI2S, "--outtype", "tq2_0", "--i2s-layout", "arm"},
		{goldenI2S, "--outtype", "i2_s", "--from-layout", "mips"},
		{goldenI2S, "--outtype", "tq2_0", "--token-embedding-type", "q4_k"},
	} {
		cmd := NewCmd(func(*Options) error { t.Fatalf("%v: run called", args); return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestDefaultOutFile(t *testing.T) {
	for in, want := range map[string]string{
		"/m/tiny-i2_s.gguf":    "./tiny-tq2_0.gguf",
		"ggml-model-i2_s.gguf": "./ggml-model-tq2_0.gguf",
		"x/model-tq1_0.gguf":   "./model-tq2_0.gguf",
		"x/plain":              "./plain-tq2_0.gguf",
	} {
		if got := DefaultOutFile(in, "tq2_0"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// Dry run prints the plan and writes nothing; a run writes the file, prints
// the summary and, with -v, the f16 rounding of the scales.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	var so, se bytes.Buffer
	err := Run(&Options{In: goldenI2S, OutType: "tq2_0", OutFile: out, DryRun: true, Stdout: &so, Stderr: &se, Context: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "blk.0.attn_q.weight") || !strings.Contains(so.String(), "I2_S    → TQ2_0") {
		t.Errorf("dry run output %q", so.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("dry run wrote the output")
	}
	so.Reset()
	if err := Run(&Options{In: goldenI2S, OutType: "tq2_0", OutFile: out, Verbose: true, Stdout: &so, Stderr: &se, Context: context.Background()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "wrote "+out) || !strings.Contains(se.String(), "scales rounded to f16") {
		t.Errorf("stdout %q stderr %q", so.String(), se.String())
	}
	// An existing output is kept without --force.
	if err := Run(&Options{In: goldenI2S, OutType: "tq1_0", OutFile: out, Stdout: &so, Stderr: &se, Context: context.Background()}); err == nil {
		t.Error("existing output overwritten without --force")
	}
}

// --dry-run fails (exit 1, after the plan) where the real run would: an
// existing output without --force, the input as output; with --force it
// passes and writes nothing.
func TestRunDryRunPredictsFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	if err := os.WriteFile(out, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, out string
		force     bool
		want      string // "" passes
	}{
		{"existing", out, false, "the real run would fail: " + out + ": output file exists (use --force to overwrite)"},
		{"existing with force", out, true, ""},
		{"input as output", goldenI2S, true, "is the input file"},
		{"missing directory", filepath.Join(dir, "nope", "o.gguf"), false, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var so, se bytes.Buffer
			err := Run(&Options{In: goldenI2S, OutType: "tq2_0", OutFile: tc.out, DryRun: true, Force: tc.force, Stdout: &so, Stderr: &se, Context: context.Background()})
			if !strings.Contains(so.String(), "tensors: ") {
				t.Errorf("no plan before the verdict: %q", so.String())
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var ue *usage.Error
				if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ue) {
					t.Fatalf("error %v, want a failure (exit 1) containing %q", err, tc.want)
				}
			}
			if b, _ := os.ReadFile(out); string(b) != "keep" {
				t.Errorf("dry run changed %s", out)
			}
		})
	}
}

// patchNe copies the GGUF src to dir with ne[dim] of tensor name set to v
// (the tensor info is found by its length-prefixed name; the last match is
// the tensor info, not a KV string).
func patchNe(t *testing.T, src, dir, name string, dim int, v uint64) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	key := binary.LittleEndian.AppendUint64(nil, uint64(len(name)))
	key = append(key, name...)
	i := bytes.LastIndex(b, key)
	if i < 0 {
		t.Fatalf("tensor %s not in %s", name, src)
	}
	j := i + len(key)
	if nd := int(binary.LittleEndian.Uint32(b[j:])); dim >= nd {
		t.Fatalf("tensor %s has %d dimensions", name, nd)
	}
	binary.LittleEndian.PutUint64(b[j+4+8*dim:], v)
	p := filepath.Join(dir, "in.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A tensor whose ne contradicts the hyper-parameter keys is refused naming the
// tensor and the key, and nothing is written (requant used to copy it with
// exit 0; run then refused the file). The patched sizes still fit the data,
// so only the shape rule can catch them.
func TestRefusesNeAgainstKeys(t *testing.T) {
	for _, c := range []struct {
		tensor   string
		dim      int
		ne       uint64
		want     []string
		outtypes []string
	}{
		{"token_embd.weight", 0, 255, []string{"tensor token_embd.weight", "key bitnet.embedding_length = 256", "ne[0] must be 256"}, []string{"tq2_0", "f32"}},
		{"token_embd.weight", 0, 0, []string{"tensor token_embd.weight", "key bitnet.embedding_length = 256"}, []string{"tq2_0"}},
		{"blk.1.ffn_down.weight", 0, 0, []string{"tensor blk.1.ffn_down.weight", "key bitnet.feed_forward_length"}, []string{"tq2_0"}},
		{"blk.0.attn_norm.weight", 0, 128, []string{"tensor blk.0.attn_norm.weight", "key bitnet.embedding_length = 256"}, []string{"iq2_bn"}},
		{"output_norm.weight", 0, 1, []string{"tensor output_norm.weight", "key bitnet.embedding_length"}, []string{"i2_s"}},
		{"blk.0.ffn_up.weight", 1, 1, []string{"tensor blk.0.ffn_up.weight", "key bitnet.feed_forward_length", "ne[1]"}, []string{"tq1_0"}},
	} {
		for _, ot := range c.outtypes {
			t.Run(c.tensor+"/"+ot, func(t *testing.T) {
				dir := t.TempDir()
				in := patchNe(t, goldenI2S, dir, c.tensor, c.dim, c.ne)
				out := filepath.Join(dir, "o.gguf")
				var so, se bytes.Buffer
				err := Run(&Options{In: in, OutType: ot, OutFile: out, Stdout: &so, Stderr: &se, Context: context.Background()})
				if err == nil {
					t.Fatalf("requant of a file with %s ne[%d] = %d succeeded", c.tensor, c.dim, c.ne)
				}
				msg := err.Error()
				for _, w := range append([]string{in}, c.want...) {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q does not name %q", msg, w)
					}
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("error is not one line: %q", msg)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Errorf("the directory holds %d entries, want only the input", len(ents))
				}
			})
		}
	}
}

// patchTensorU32 copies src to dir with the little-endian uint32 at byte
// off of tensor name's data set to v.
func patchTensorU32(t *testing.T, src, dir, name string, off int, v uint32) string {
	t.Helper()
	f, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor(name)
	at := int(f.DataOffset+ti.Offset) + off
	f.Close()
	if !ok {
		t.Fatalf("no %s in %s", name, src)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[at:], v)
	p := filepath.Join(dir, "in.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A requant that fails prints only its error: the notices of the plan
// (--allow-fallback's F16 tensors, relu² for llama.cpp) describe a file that
// was not written. Once written, they are printed.
func TestFailedRequantPrintsNoNotices(t *testing.T) {
	iq2 := "../../../../testdata/golden/ecosystems/tiny-b158-h512-iq2_bn.gguf"
	for _, c := range []struct {
		name, in, outtype string
		fallback          bool
		notice            string
	}{
		// bitnet-b1.58 to TQ2_0: the relu² notice; row 0's scale 1e5 does
		// not fit TQ2_0's f16
		{"relu2", iq2, "tq2_0", false, "relu²"},
		// K = 256 to IQ2_BN: every projection falls back to F16; a NaN
		// tensor scale fails it
		{"fallback", goldenI2S, "iq2_bn", true, "--allow-fallback: written as F16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var so, se bytes.Buffer
			ok := filepath.Join(dir, "ok.gguf")
			if err := Run(&Options{In: c.in, OutType: c.outtype, AllowFallback: c.fallback, OutFile: ok, Stdout: &so, Stderr: &se, Context: context.Background()}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(se.String(), c.notice) {
				t.Fatalf("written: stderr %q, want the notice %q", se.String(), c.notice)
			}
			bad := patchTensorU32(t, c.in, dir, "blk.0.attn_q.weight", 0, 0x47c35000) // 1e5
			if c.fallback {
				bad = patchTensorU32(t, c.in, dir, "blk.0.attn_q.weight", 256*256/4, 0x7fc00000)
			}
			so.Reset()
			se.Reset()
			err := Run(&Options{In: bad, OutType: c.outtype, AllowFallback: c.fallback, OutFile: filepath.Join(dir, "o.gguf"), Stdout: &so, Stderr: &se, Context: context.Background()})
			if err == nil || !strings.Contains(err.Error(), "blk.0.attn_q.weight") {
				t.Fatalf("err %v, want one naming blk.0.attn_q.weight", err)
			}
			if se.Len() != 0 || so.Len() != 0 {
				t.Errorf("failed requant printed stdout %q, stderr %q", so.String(), se.String())
			}
		})
	}
}
