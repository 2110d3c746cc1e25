package perplexity

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/cli/usage"
)

const golden = "../../../testdata/golden/tiny-bitnet"

func TestNewCmdPerplexity(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    *PerplexityOptions
		wantErr string
	}{
		{"defaults", []string{"-m", "x.gguf", "-f", "t.txt"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 128, Threads: 1}, ""},
		{"all", []string{"-m", "x.gguf", "-f", "t.txt", "-c", "64", "--chunks", "4", "--threads", "2"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 64, Chunks: 4, Threads: 2}, ""},
		{"no model", []string{"-f", "t.txt"}, nil, "-m/--model"},
		{"no file", []string{"-m", "x"}, nil, "-f/--file"},
		{"tiny ctx", []string{"-m", "x", "-f", "t", "-c", "2"}, nil, "-c 2"},
		{"arg", []string{"-m", "x", "-f", "t", "extra"}, nil, "no arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got *PerplexityOptions
			cmd := NewCmdPerplexity(func(o *PerplexityOptions) error { got = o; return nil })
			cmd.SetArgs(c.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if c.wantErr != "" {
				var ue *usage.Error
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.As(err, &ue) {
					t.Fatalf("error %v, want a usage error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.Err = nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Test_perplexityRun_golden: ppl_text.txt, -c 128 --chunks 4, F32 golden
// file: 1476.3758 within 0.01 % (the README's one-token-per-call value).
func Test_perplexityRun_golden(t *testing.T) {
	if testing.Short() {
		t.Skip("512 tokens")
	}
	var out bytes.Buffer
	opts := &PerplexityOptions{
		Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"),
		File:  filepath.Join(golden, "outputs/ppl_text.txt"),
		Ctx:   128, Chunks: 4, Threads: 2, Out: &out,
	}
	if err := perplexityRun(opts); err != nil {
		t.Fatal(err)
	}
	var ppl float64
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "PPL = "); ok {
			ppl, _ = strconv.ParseFloat(v, 64)
		}
	}
	if math.Abs(ppl-1476.3758)/1476.3758 > 1e-4 || !strings.Contains(out.String(), "scored 252") {
		t.Fatalf("output:\n%s\nwant PPL 1476.3758 ± 0.01 %% over 252 tokens", out.String())
	}
}

func Test_perplexityRun_errors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.txt")
	if err := os.WriteFile(short, []byte("Hello world."), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts PerplexityOptions
		want string
	}{
		{"no text", PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: filepath.Join(dir, "none.txt"), Ctx: 128}, "none.txt"},
		{"no model", PerplexityOptions{Model: filepath.Join(dir, "none.gguf"), File: filepath.Join(golden, "outputs/ppl_text.txt"), Ctx: 128}, "none.gguf"},
		{"too short", PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: short, Ctx: 128}, "chunk"},
		{"-c beyond the context", PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: filepath.Join(golden, "README.md"), Ctx: 100000}, "-c 100000: exceeds the context length 2048"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Out = &bytes.Buffer{}
			if err := perplexityRun(&o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}
