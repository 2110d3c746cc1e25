package verify

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// TestBadThresholdFlags: NaN and negative thresholds — -1 included, which
// once was a hidden "use the default" — are usage errors naming the flag;
// a flag left out keeps the default (nil).
func TestBadThresholdFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"--min-top1", "NaN"}, "--min-top1 NaN"},
		{[]string{"--min-top1", "-0.5"}, "--min-top1 -0.5"},
		{[]string{"--max-delta", "nan"}, "--max-delta NaN"},
		{[]string{"--max-delta", "-2"}, "--max-delta -2: want a number ≥ 0"},
		{[]string{"--max-kl", "NaN"}, "--max-kl NaN"},
		{[]string{"--max-ppl-rel", "-Inf"}, "--max-ppl-rel -Inf"},
		{[]string{"--min-cosine", "NaN"}, "--min-cosine NaN"},
		{[]string{"--min-cosine", "1.5"}, ""},
		{[]string{"--min-top1", "-1"}, "--min-top1 -1: want a number ≥ 0"},
		{[]string{"--max-delta", "-1"}, "--max-delta -1: want a number ≥ 0"},
		{[]string{"--max-kl", "-1"}, "--max-kl -1"},
		{[]string{"--max-ppl-rel", "-1"}, "--max-ppl-rel -1"},
		{[]string{"--min-cosine", "-1"}, "--min-cosine -1"},
		{[]string{"--min-top1", "1.5"}, "--min-top1 1.5: want a fraction"},
		{[]string{"--min-top1", "0"}, ""},
		{[]string{"--min-top1", "1"}, ""},
		{[]string{"--max-delta", "+Inf"}, ""},
		{[]string{"--max-kl", "0.5"}, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ran := false
			cmd := NewCmd(func(*Options) error { ran = true; return nil })
			cmd.SetArgs(append([]string{"--gguf", "m.gguf"}, tc.args...))
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tc.want == "" {
				if err != nil || !ran {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			var ue *usage.Error
			if ran || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ran %v, error %v; want a usage error containing %q", ran, err, tc.want)
			}
		})
	}
}

// TestRunBadInputs: a FIFO --gguf or --kernel-config fails at once naming
// the flag; --tokens beyond the model's context_length is a usage error
// naming --tokens and the limit (not an out-of-memory crash).
func TestRunBadInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	f32 := golden + "/gguf/ggml-model-f32.gguf"
	unset := Options{}
	tests := []struct {
		name  string
		edit  func(o *Options)
		want  string
		usage bool
	}{
		{"FIFO gguf", func(o *Options) { o.GGUF = fifo }, "--gguf: " + fifo + " is a named pipe", false},
		{"FIFO kernel config", func(o *Options) { o.GGUF, o.KernelConfig = f32, fifo }, "--kernel-config: " + fifo + " is a named pipe", false},
		{"tokens beyond context", func(o *Options) { o.GGUF, o.Tokens = f32, 100000000 }, "--tokens 100000000: ", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := unset
			o.Out = &bytes.Buffer{}
			tc.edit(&o)
			err := Run(&o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.want)
			}
			var ue *usage.Error
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error: got %v, want %v", !tc.usage, tc.usage)
			}
			if tc.usage && !strings.Contains(err.Error(), "context length") {
				t.Errorf("error %v does not give the limit", err)
			}
		})
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Fatal(err)
	}
}
