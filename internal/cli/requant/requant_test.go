package requant

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/cli/usage"
)

const goldenI2S = "../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

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
