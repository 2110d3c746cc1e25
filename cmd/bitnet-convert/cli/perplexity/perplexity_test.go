package perplexity

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
)

const golden = "../../../../testdata/golden/tiny-bitnet"

func TestNewCmdPerplexity(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    *PerplexityOptions
		wantErr string
	}{
		{"defaults", []string{"-m", "x.gguf", "-f", "t.txt"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 2048, UBatch: 512}, ""},
		{"all", []string{"-m", "x.gguf", "-f", "t.txt", "-c", "64", "--chunks", "4", "--threads", "2"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 64, Chunks: 4, Batch: 2048, UBatch: 512, Threads: 2, CtxSet: true}, ""},
		{"-t", []string{"-m", "x.gguf", "-f", "t.txt", "-t", "3"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 2048, UBatch: 512, Threads: 3}, ""},
		{"model given positionally", []string{"x.gguf", "-f", "t.txt"}, nil, "give it as -m x.gguf"},
		{"kld base", []string{"-m", "x.gguf", "-f", "t.txt", "--kl-divergence-base", "b", "--force"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 2048, UBatch: 512, KLBase: "b", Force: true}, ""},
		{"kld", []string{"-m", "x.gguf", "--kl-divergence", "--kl-divergence-base", "b"}, &PerplexityOptions{Model: "x.gguf", Ctx: 512, Batch: 2048, UBatch: 512, KLBase: "b", KLD: true}, ""},
		{"kld without base", []string{"-m", "x", "--kl-divergence"}, nil, "needs --kl-divergence-base"},
		{"kld with -f", []string{"-m", "x", "-f", "t", "--kl-divergence", "--kl-divergence-base", "b"}, nil, "-f is not read"},
		{"force without base", []string{"-m", "x", "-f", "t", "--force"}, nil, "--force only applies"},
		{"no model", []string{"-f", "t.txt"}, nil, "-m/--model"},
		{"no file", []string{"-m", "x"}, nil, "-f/--file"},
		{"tiny ctx", []string{"-m", "x", "-f", "t", "-c", "2"}, nil, "-c 2"},
		{"arg", []string{"-m", "x", "-f", "t", "extra"}, nil, "no arguments"},
		{"negative chunks", []string{"-m", "x", "-f", "t", "--chunks", "-1"}, nil, "--chunks -1"},
		{"from-layout", []string{"-m", "x.gguf", "-f", "t.txt", "--from-layout", "X86-1x4"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 2048, UBatch: 512, FromLayout: "X86-1x4"}, ""},
		{"bad from-layout", []string{"-m", "x", "-f", "t", "--from-layout", "1x4"}, nil, `--from-layout: unknown I2_S layout "1x4"`},
		{"arith", []string{"-m", "x.gguf", "-f", "t.txt", "--arith", "mainline"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 2048, UBatch: 512, Arith: "mainline"}, ""},
		{"bad arith", []string{"-m", "x", "-f", "t", "--arith", "metal"}, nil, `--arith: arithmetic "metal"`},
		{"batches", []string{"-m", "x.gguf", "-f", "t.txt", "-c", "100", "-b", "1000", "--ubatch-size", "7"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 100, Batch: 1000, UBatch: 7, CtxSet: true}, ""},
		{"one token", []string{"-m", "x.gguf", "-f", "t.txt", "-b", "1", "--ubatch-size", "1"}, &PerplexityOptions{Model: "x.gguf", File: "t.txt", Ctx: 512, Batch: 1, UBatch: 1}, ""},
		{"batch not a multiple", []string{"-m", "x", "-f", "t", "-b", "700"}, nil, "-b 700: a batch of at least one chunk must be a multiple of -c 512"},
		{"batch below one chunk", []string{"-m", "x", "-f", "t", "-b", "100"}, &PerplexityOptions{Model: "x", File: "t", Ctx: 512, Batch: 100, UBatch: 512}, ""},
		{"zero batch", []string{"-m", "x", "-f", "t", "-b", "0"}, nil, "-b 0: the batch size must be ≥ 1"},
		{"zero ubatch", []string{"-m", "x", "-f", "t", "--ubatch-size", "0"}, nil, "-ub 0: the physical batch size must be ≥ 1"},
		{"kld takes any batch", []string{"-m", "x.gguf", "--kl-divergence", "--kl-divergence-base", "b", "-b", "700"}, &PerplexityOptions{Model: "x.gguf", Ctx: 512, Batch: 700, UBatch: 512, KLBase: "b", KLD: true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmdPerplexity, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.Err, got.Stdin = nil, nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Test_perplexityRun_golden: perplexity prints llama-perplexity's own
// output digit for digit: ppl_text.txt with -c 128 --chunks 4 -b 128 on the
// golden F32 and I2_S files (outputs/ppl_f32.txt, ppl_i2_s.txt of
// testdata/golden/tiny-bitnet), and with the defaults (-c 512 -b 2048 -ub
// 512) on the README text of testdata/golden/ppl-batch (text.txt,
// tiny-i2_s.txt).
// stderr is not a terminal here, so no progress is shown.
func Test_perplexityRun_golden(t *testing.T) {
	if testing.Short() {
		t.Skip("512 to 2907 tokens")
	}
	for _, c := range []struct {
		model, text, golden string
		ctx, chunks, batch  int
	}{
		{"ggml-model-f32.gguf", "outputs/ppl_text.txt", "outputs/ppl_f32.txt", 128, 4, 128},
		{"ggml-model-i2_s.gguf", "outputs/ppl_text.txt", "outputs/ppl_i2_s.txt", 128, 4, 128},
		{"ggml-model-i2_s.gguf", "../ppl-batch/text.txt", "../ppl-batch/tiny-i2_s.txt", 512, 0, 2048},
	} {
		t.Run(c.golden, func(t *testing.T) {
			var out, errb bytes.Buffer
			opts := &PerplexityOptions{
				Model: filepath.Join(golden, "gguf", c.model), File: filepath.Join(golden, c.text),
				Ctx: c.ctx, Chunks: c.chunks, Batch: c.batch, UBatch: 512, Threads: 2, Out: &out, Err: &errb,
			}
			if err := perplexityRun(opts); err != nil {
				t.Fatal(err)
			}
			ref, err := os.ReadFile(filepath.Join(golden, c.golden))
			if err != nil {
				t.Fatal(err)
			}
			var wantChunks, wantFinal string
			for _, l := range strings.Split(string(ref), "\n") {
				if strings.HasPrefix(l, "[1]") {
					wantChunks = l
				}
				if i := strings.Index(l, "Final estimate: "); i >= 0 {
					wantFinal = l[i:]
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 3 || wantChunks == "" || wantFinal == "" {
				t.Fatalf("output:\n%s\nwant the chunk line, the token line and the final estimate (golden %q, %q)", out.String(), wantChunks, wantFinal)
			}
			if lines[0] != wantChunks || lines[2] != wantFinal {
				t.Errorf("got\n%s\n%s\nwant (llama-perplexity)\n%s\n%s", lines[0], lines[2], wantChunks, wantFinal)
			}
			if errb.Len() != 0 {
				t.Errorf("progress written although stderr is not a terminal: %q", errb.String())
			}
		})
	}
}

// Test_perplexityRun_fromLayout: bitnet.cpp's 1×4-layout I2_S file of the
// golden model (no layout key) scored with --from-layout x86-1x4 gives the
// golden x86 I2_S file's output exactly.
func Test_perplexityRun_fromLayout(t *testing.T) {
	score := func(model, layout string) string {
		var out bytes.Buffer
		opts := &PerplexityOptions{Model: model, File: filepath.Join(golden, "outputs/ppl_text.txt"), Ctx: 128, Chunks: 1, FromLayout: layout, Out: &out, Err: io.Discard}
		if err := perplexityRun(opts); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := score(filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), "")
	if got := score(filepath.Join(golden, "../ecosystems/tiny-bitnet-i2_s-x86-1x4-16da220.gguf"), "x86-1x4"); got != want {
		t.Errorf("1×4 file with --from-layout:\n%s\nx86 file:\n%s", got, want)
	}
}

// --json prints one object with the same numbers, and -f - reads stdin.
func Test_perplexityRun_jsonStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("512 tokens")
	}
	text, err := os.ReadFile(filepath.Join(golden, "outputs/ppl_text.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := &PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: "-", Stdin: bytes.NewReader(text),
		Ctx: 128, Chunks: 2, Threads: 2, JSON: true, Out: &out, Err: io.Discard}
	if err := perplexityRun(opts); err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if r.Chunks != 2 || r.Scored != 126 || len(r.ChunkPPL) != 2 || math.Abs(r.ChunkPPL[1]-1498.3043)/1498.3043 > 1e-4 || r.PPL != r.ChunkPPL[1] || !(r.PPLErr > 0) || r.File != "-" {
		t.Fatalf("result %+v", r)
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
		{"too short", PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: short, Ctx: 128}, "short.txt: the text tokenizes to only 11 tokens, fewer than one chunk of -c 128: use a longer text or a smaller -c"},
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

// On a terminal stderr gets llama-perplexity's time per pass and a bar; the
// running values stay on stdout.
func Test_perplexityRun_progressOnTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	opts := &PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: filepath.Join(golden, "outputs/ppl_text.txt"),
		Ctx: 32, Chunks: 2, Out: &out, Err: &errb, ErrIsTerminal: true}
	if err := perplexityRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "seconds per pass - ETA") || !strings.Contains(errb.String(), "chunks") || !strings.HasPrefix(out.String(), "[1]") {
		t.Fatalf("stderr %q\nstdout %q", errb.String(), out.String())
	}
}
