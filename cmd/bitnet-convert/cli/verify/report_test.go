package verify

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// unset is Options with every threshold flag at its default (nil).
func unset(o Options) *Options { return &o }

// Usability friction 5: verify without --hf printed only "prompt: N
// positions / PASS", which read like a proof. It now says the run is a
// runtime sanity check only and prints what it measured.
func TestRuntimeOnlySaysSo(t *testing.T) {
	var out bytes.Buffer
	if err := Run(unset(Options{GGUF: golden + "/gguf/ggml-model-i2_s.gguf", Tokens: 8, Out: &out})); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"runtime sanity only (no --hf): the file is not compared with its checkpoint or a reference",
		"logits:    35 of 35 positions finite, smallest spread ",
		"PASS (runtime sanity only)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// With --hf the report is a comparison, and says nothing of the kind.
	out.Reset()
	if err := Run(unset(Options{GGUF: golden + "/gguf/ggml-model-i2_s.gguf", HF: golden + "/hf", Tokens: 2, Out: &out})); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "sanity only") || !strings.HasSuffix(s, "\nPASS\n") || !strings.Contains(s, "top-1 agreement") {
		t.Errorf("with --hf:\n%s", s)
	}
}

// Defect D2 at the command: a GGUF checked against another model's
// checkpoint fails with the structure line first and no numeric
// comparison (exit 1 through ErrFailed), where it used to panic.
func TestMismatchedPairFails(t *testing.T) {
	var out bytes.Buffer
	err := Run(unset(Options{GGUF: golden + "/gguf/ggml-model-f32.gguf", HF: "../../../../testdata/golden/b158-h512/hf", Tokens: 2, Out: &out}))
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "tensor token_embd.weight: ne [256 512], source implies [512 512]") {
		t.Fatalf("err %v", err)
	}
	s := out.String()
	if !strings.Contains(s, "  FAIL tensor token_embd.weight: ne [256 512], source implies [512 512]\n") || !strings.Contains(s, "note: numeric comparison skipped") || strings.Contains(s, "top-1") {
		t.Errorf("output:\n%s", s)
	}
}

// Defect D9: verify accepts --allow-tie-fallback, as hf2gguf does.
func TestAllowTieFallbackFlag(t *testing.T) {
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--gguf", "m.gguf", "--hf", "dir", "--allow-tie-fallback"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.AllowTieFallback {
		t.Error("--allow-tie-fallback not set")
	}
}

// TestReportNamesArith: the report says which arithmetic the runtime ran
// the file with (the default resolved to the file's home runtime, or
// --arith), for each file of --ref-gguf, and in the JSON report: the
// runtime's logits and the scored tokens depend on it.
func TestReportNamesArith(t *testing.T) {
	i2s := golden + "/gguf/ggml-model-i2_s.gguf"
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{GGUF: i2s, HF: golden + "/hf"}, "  runtime:   arithmetic bitnet.cpp (--arith: "},
		{Options{GGUF: i2s, HF: golden + "/hf", Arith: "mainline"}, "  runtime:   arithmetic mainline (--arith: "},
		{Options{GGUF: i2s, RefGGUF: golden + "/gguf/ggml-model-f32.gguf", Arith: "ik"}, "  runtime:   arithmetic ik for " + i2s + ", ik for " + golden + "/gguf/ggml-model-f32.gguf (--arith)\n"},
		{Options{GGUF: i2s, RefGGUF: golden + "/gguf/ggml-model-f32.gguf"}, "  runtime:   arithmetic bitnet.cpp for " + i2s + ", bitnet.cpp for "},
	} {
		var out bytes.Buffer
		c.opts.Tokens, c.opts.Out = 2, &out
		err := Run(unset(c.opts))
		if err != nil && !errors.Is(err, ErrFailed) {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("--arith %q: output lacks %q:\n%s", c.opts.Arith, c.want, out.String())
		}
	}
	var out bytes.Buffer
	if err := Run(unset(Options{GGUF: i2s, Tokens: 1, Arith: "mainline", JSON: true, Out: &out})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"arith": "mainline"`) {
		t.Errorf("JSON report lacks the arithmetic:\n%s", out.String())
	}
}
