package requant

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
