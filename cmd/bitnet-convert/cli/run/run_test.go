package run

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

const golden = "../../../../testdata/golden/tiny-bitnet"

func TestNewCmdRun(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    *RunOptions
		wantErr string // substring; usage errors are checked with errors.As
	}{
		{"ids", []string{"-m", "x.gguf", "--ids", "1, 100,200", "-n", "4"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1, 100, 200}, N: 4}, ""},
		{"ignore-eos and force", []string{"-m", "x.gguf", "--ids", "1", "--ignore-eos", "--dump-logits", "d.f32", "--force"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, IgnoreEOS: true, DumpLogits: "d.f32", Force: true}, ""},
		{"prompt", []string{"-m", "x.gguf", "-p", "Hello", "--temp", "0.7", "--seed", "3", "--threads", "4", "--dump-logits", "o.f32"},
			&RunOptions{Model: "x.gguf", Prompt: "Hello", HasPrompt: true, N: 16, Temp: 0.7, Seed: 3, Threads: 4, DumpLogits: "o.f32"}, ""},
		{"tl", []string{"-m", "x.gguf", "--ids", "1", "--kernel-config", "k.ini"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, KernelConfig: "k.ini"}, ""},
		{"from-layout", []string{"-m", "x.gguf", "--ids", "1", "--from-layout", "arm"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, FromLayout: "arm"}, ""},
		{"bad from-layout", []string{"-m", "x", "--ids", "1", "--from-layout", "neon"}, nil, `--from-layout: unknown I2_S layout "neon"`},
		{"arith", []string{"-m", "x.gguf", "--ids", "1", "--arith", "mainline"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Arith: "mainline"}, ""},
		{"bad arith", []string{"-m", "x", "--ids", "1", "--arith", "cuda"}, nil, `--arith: arithmetic "cuda"`},
		{"no model", []string{"--ids", "1"}, nil, "-m/--model"},
		{"both prompts", []string{"-m", "x", "-p", "a", "--ids", "1"}, nil, "exactly one"},
		{"no prompt", []string{"-m", "x"}, nil, "exactly one"},
		{"bad ids", []string{"-m", "x", "--ids", "1,a"}, nil, "--ids"},
		{"negative id", []string{"-m", "x", "--ids", "-1"}, nil, "--ids"},
		{"negative n", []string{"-m", "x", "--ids", "1", "-n", "-2"}, nil, "-n"},
		{"negative temp", []string{"-m", "x", "--ids", "1", "--temp", "-1"}, nil, "--temp"},
		{"extra arg", []string{"-m", "x", "--ids", "1", "extra"}, nil, "no arguments"},
		// llama-cli's spellings (Deliver 2 of issue 24).
		{"-t", []string{"-m", "x.gguf", "--ids", "1", "-t", "3"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Threads: 3}, ""},
		{"-s", []string{"-m", "x.gguf", "--ids", "1", "--temp", "0.8", "-s", "42"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Temp: 0.8, Seed: 42}, ""},
		{"-s 0", []string{"-m", "x.gguf", "--ids", "1", "--temp", "0.8", "-s", "0"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Temp: 0.8}, ""},
		// llama-cli's -s -1: a random seed, the same as no -s.
		{"-s -1", []string{"-m", "x.gguf", "--ids", "1", "--temp", "0.8", "-s", "-1"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Temp: 0.8, RandomSeed: true}, ""},
		{"-c", []string{"-m", "x.gguf", "--ids", "1", "-c", "256"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Ctx: 256}, ""},
		{"--ctx-size", []string{"-m", "x.gguf", "--ids", "1", "--ctx-size", "64"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, Ctx: 64}, ""},
		{"--top-k", []string{"-m", "x.gguf", "--ids", "1", "--top-k", "40"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, TopK: 40}, ""},
		{"--top-p", []string{"-m", "x.gguf", "--ids", "1", "--top-p", "0.95"}, &RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, TopP: 0.95}, ""},
		{"--repeat-penalty", []string{"-m", "x.gguf", "--ids", "1", "--repeat-penalty", "1.1", "--repeat-last-n", "-1"},
			&RunOptions{Model: "x.gguf", IDs: []int32{1}, N: 16, RepeatPenalty: 1.1, RepeatLastN: -1}, ""},
		{"negative -c", []string{"-m", "x", "--ids", "1", "-c", "-1"}, nil, "-c/--ctx-size"},
		{"top-p 0", []string{"-m", "x", "--ids", "1", "--top-p", "0"}, nil, "--top-p"},
		{"top-p above 1", []string{"-m", "x", "--ids", "1", "--top-p", "1.5"}, nil, "--top-p"},
		{"repeat-penalty 0", []string{"-m", "x", "--ids", "1", "--repeat-penalty", "0"}, nil, "--repeat-penalty"},
		{"repeat-last-n -2", []string{"-m", "x", "--ids", "1", "--repeat-last-n", "-2"}, nil, "--repeat-last-n"},
		{"model given positionally", []string{"tiny.gguf", "-p", "Hello"}, nil, "give it as -m tiny.gguf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmdRun, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.Err = nil, nil
			// The sampler defaults (off), unless the case sets them.
			if c.want.TopP == 0 {
				c.want.TopP = 1
			}
			if c.want.RepeatPenalty == 0 {
				c.want.RepeatPenalty = 1
			}
			if c.want.RepeatLastN == 0 {
				c.want.RepeatLastN = 64
			}
			if !slices.Contains(c.args, "-s") && !slices.Contains(c.args, "--seed") {
				c.want.RandomSeed = true // no -s: a seed drawn at run time
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Test_runRun_goldenDump: --ids 1,100,200,300,400,500,7,8 -n 16 on the I2_S
// golden file prints the golden generated ids, and --dump-logits equals
// prompt file + gen file concatenated within 1e-4.
func Test_runRun_goldenDump(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "logits.f32")
	var out bytes.Buffer
	opts := &RunOptions{
		Model: filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"),
		IDs:   []int32{1, 100, 200, 300, 400, 500, 7, 8}, N: 16, Threads: 2,
		DumpLogits: dump, Out: &out,
	}
	if err := runRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "generated ids: 440 17 11 1 175 59 215 140 266 461 17 299 486 131 305 158\n") {
		t.Fatalf("output:\n%s", out.String())
	}
	got := readF32(t, dump)
	want := append(readF32(t, filepath.Join(golden, "outputs/i2s_ids_seq_t1.prompt_logits.f32")),
		readF32(t, filepath.Join(golden, "outputs/i2s_ids_seq_t1.gen_logits.f32"))...)
	if len(got) != len(want) {
		t.Fatalf("dump has %d floats, golden %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4 {
			t.Fatalf("row %d id %d: %v, golden %v", i/512, i%512, got[i], want[i])
		}
	}
}

// Test_runRun_fromLayout: bitnet.cpp's ARM-layout I2_S file of the golden
// model (no layout key) run with --from-layout arm gives the golden x86
// file's ids; read as x86 it does not.
func Test_runRun_fromLayout(t *testing.T) {
	const want = "generated ids: 440 17 11 1 175 59 215 140 266 461 17 299 486 131 305 158\n"
	for _, layout := range []string{"arm", ""} {
		var out bytes.Buffer
		opts := &RunOptions{
			Model: filepath.Join(golden, "../ecosystems/tiny-bitnet-i2_s-arm.gguf"), FromLayout: layout,
			IDs: []int32{1, 100, 200, 300, 400, 500, 7, 8}, N: 16, IgnoreEOS: true, Out: &out,
		}
		if err := runRun(opts); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), want); got != (layout == "arm") {
			t.Errorf("--from-layout %q: golden ids %v, output:\n%s", layout, got, out.String())
		}
	}
}

// Test_runRun_TL2: a TL2 file with --kernel-config gives the golden TL2
// greedy ids; without it the error names the tensor and the flag.
func Test_runRun_TL2(t *testing.T) {
	var out bytes.Buffer
	opts := &RunOptions{
		Model:        filepath.Join(golden, "gguf/ggml-model-tl2.gguf"),
		KernelConfig: filepath.Join(golden, "gguf/kernel_config_tl2.ini"),
		Prompt:       "Hello world, this is a tiny BitNet test.", HasPrompt: true, N: 16, Out: &out,
	}
	if err := runRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "generated ids: 141 11 374 403 133 360 452 225 35 114 248 496 476 19 359 137\n") {
		t.Fatalf("output:\n%s", out.String())
	}
	opts.KernelConfig = ""
	if err := runRun(opts); err == nil || !strings.Contains(err.Error(), "--kernel-config") || !strings.Contains(err.Error(), "blk.0.") {
		t.Fatalf("without --kernel-config: %v", err)
	}
}

// Test_runRun_prompt tokenizes -p with the GGUF vocabulary (BOS added) and
// reproduces the golden greedy ids of the hello prompt.
func Test_runRun_prompt(t *testing.T) {
	var out bytes.Buffer
	opts := &RunOptions{
		Model:  filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"),
		Prompt: "Hello world, this is a tiny BitNet test.", HasPrompt: true, N: 16, Out: &out,
	}
	if err := runRun(opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"prompt ids: 1 413 480 414 271 417 313 269 421 427 457 360 314 411 280 262 261 437 413 461 268 469 316 262 414 284 432\n",
		"generated ids: 141 11 374 403 133 360 452 225 35 114 248 496 476 19 359 137\n",
		"generated text: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Test_runRun_sampling: --temp with a seed is reproducible, and a different
// seed changes the draw on this model.
func Test_runRun_sampling(t *testing.T) {
	run := func(seed uint64) string {
		var out bytes.Buffer
		opts := &RunOptions{Model: filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), IDs: []int32{1, 100}, N: 12, Temp: 1.5, Seed: seed, Out: &out}
		if err := runRun(opts); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Fatalf("same seed, different output:\n%s\n%s", a, b)
	}
	if a == c {
		t.Fatalf("seeds 7 and 8 gave the same 12 sampled tokens:\n%s", a)
	}
}

// Test_runRun_randomSeed: without -s (RandomSeed) --temp > 0 draws a seed,
// prints it on stderr, and -s with the printed seed repeats the run; two
// runs without -s draw different seeds (a fixed default seed once gave
// every run the same "random" text). Greedy runs print no seed.
func Test_runRun_randomSeed(t *testing.T) {
	model := filepath.Join(golden, "gguf/ggml-model-i2_s.gguf")
	run := func(o RunOptions) (string, uint64, bool) {
		var out, errb bytes.Buffer
		o.Model, o.IDs, o.N, o.Out, o.Err = model, []int32{1, 100}, 12, &out, &errb
		if err := runRun(&o); err != nil {
			t.Fatal(err)
		}
		var seed uint64
		i := strings.Index(errb.String(), "run: sampler seed = ")
		if i < 0 {
			return out.String(), 0, false
		}
		if _, err := fmt.Sscanf(errb.String()[i:], "run: sampler seed = %d ", &seed); err != nil {
			t.Fatalf("seed line: %v in %q", err, errb.String())
		}
		return out.String(), seed, true
	}
	a, seedA, ok := run(RunOptions{Temp: 1.5, RandomSeed: true})
	if !ok {
		t.Fatal("--temp 1.5 without -s printed no seed")
	}
	_, seedB, _ := run(RunOptions{Temp: 1.5, RandomSeed: true})
	if seedA == seedB {
		t.Fatalf("two runs without -s drew the same seed %d", seedA)
	}
	again, _, printed := run(RunOptions{Temp: 1.5, Seed: seedA})
	if again != a || printed {
		t.Fatalf("-s %d (printed: %v) did not repeat the run:\n%s\n%s", seedA, printed, a, again)
	}
	if _, _, printed := run(RunOptions{RandomSeed: true}); printed {
		t.Fatal("a greedy run printed a sampler seed")
	}
}

func Test_runRun_errors(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "never.f32")
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("not a gguf"), 0o644)
	i2s := filepath.Join(golden, "gguf/ggml-model-i2_s.gguf")
	// model is a copy of the I2_S model the dump rows point back at.
	model := filepath.Join(dir, "m.gguf")
	modelBytes, err := os.ReadFile(i2s)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(model, modelBytes, 0o644)
	link := filepath.Join(dir, "link.gguf")
	if err := os.Symlink(model, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	nan := nanModel(t, dir, false)
	oneNaN := nanModel(t, dir, true)
	badBOS := patchedBOS(t, dir, modelBytes, 99999)
	for _, c := range []struct {
		name  string
		opts  RunOptions
		want  string
		usage bool // a *usage.Error (exit 2)
	}{
		{"missing file", RunOptions{Model: filepath.Join(dir, "nope.gguf"), IDs: []int32{1}, N: 1, DumpLogits: dump}, "nope.gguf", false},
		{"not gguf", RunOptions{Model: bad, IDs: []int32{1}, N: 1, DumpLogits: dump}, "bad.gguf", false},
		{"id out of range", RunOptions{Model: i2s, IDs: []int32{1, 512}, N: 1, DumpLogits: dump}, "512", true},
		{"model is a FIFO", RunOptions{Model: fifo, IDs: []int32{1}, N: 1, DumpLogits: dump}, "-m/--model: " + fifo + " is a named pipe", false},
		{"kernel config is a FIFO", RunOptions{Model: i2s, KernelConfig: fifo, IDs: []int32{1}, N: 1, DumpLogits: dump}, "--kernel-config: " + fifo + " is a named pipe", false},
		{"dump is the model", RunOptions{Model: model, IDs: []int32{1}, N: 1, DumpLogits: model}, "--dump-logits " + model + " is the model file", false},
		{"dump is a link to the model", RunOptions{Model: model, IDs: []int32{1}, N: 1, DumpLogits: link}, "is the model file", false},
		{"model is a link to the dump", RunOptions{Model: link, IDs: []int32{1}, N: 1, DumpLogits: model}, "is the model file", false},
		{"dump is a FIFO", RunOptions{Model: model, IDs: []int32{1}, N: 1, DumpLogits: fifo}, "--dump-logits " + fifo + " exists and is not a regular file", false},
		{"dump is /dev/null", RunOptions{Model: model, IDs: []int32{1}, N: 1, DumpLogits: "/dev/null"}, "--dump-logits /dev/null exists and is not a regular file", false},
		{"-n beyond the context", RunOptions{Model: i2s, IDs: []int32{1, 2}, N: 100000000, DumpLogits: dump}, "-n 100000000: the prompt (2 tokens) plus -n exceeds the context length", true},
		{"BOS outside the vocabulary", RunOptions{Model: badBOS, Prompt: "Hello", HasPrompt: true, N: 1, DumpLogits: dump}, "tokenizer.ggml.bos_token_id: id 99999 is outside the vocabulary", false},
		{"NaN logits", RunOptions{Model: nan, IDs: []int32{1, 2}, N: 3, DumpLogits: dump}, "logits at position 0 are not finite (logit 0 is NaN)", false},
		{"NaN logits, one token", RunOptions{Model: nan, IDs: []int32{1}, N: 1, DumpLogits: dump}, "logits at position 0 are not finite (logit 0 is NaN)", false},
		{"one NaN logit per row", RunOptions{Model: oneNaN, IDs: []int32{1, 2}, N: 3, DumpLogits: dump}, "logits at position 0 are not finite (logit 511 is NaN): the model's weights hold NaN/Inf", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Out = &bytes.Buffer{}
			err := runRun(&o)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, c.want)
			}
			var ue *usage.Error
			if errors.As(err, &ue) != c.usage {
				t.Errorf("usage error = %v, want %v", !c.usage, c.usage)
			}
			if _, err := os.Stat(dump); !os.IsNotExist(err) {
				t.Fatalf("%s exists after a failed run", dump)
			}
			if got, _ := os.ReadFile(model); !bytes.Equal(got, modelBytes) {
				t.Fatalf("%s changed", model)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("%s is no longer a FIFO", fifo)
			}
		})
	}
}

// patchedBOS writes a copy of the GGUF bytes b whose uint32
// tokenizer.ggml.bos_token_id is id to dir and returns its path.
func patchedBOS(t *testing.T, dir string, b []byte, id uint32) string {
	t.Helper()
	const key = "tokenizer.ggml.bos_token_id"
	i := bytes.Index(b, []byte(key))
	if i < 0 || binary.LittleEndian.Uint32(b[i+len(key):]) != uint32(gguf.ValueUint32) {
		t.Fatalf("no uint32 %s in the model", key)
	}
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[i+len(key)+4:], id)
	p := filepath.Join(dir, "badbos.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// nanModel writes a copy of the tiny F32 model whose token_embd.weight is
// all NaN to dir and returns its path. With one, only element 0 of row 511
// (ne [256, 512], tied to the output) is NaN: a prompt without token 511 then
// gives finite logits except logit 511 at every position.
func nanModel(t *testing.T, dir string, one bool) string {
	t.Helper()
	src := filepath.Join(golden, "gguf/ggml-model-f32.gguf")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, ti := range f.Tensors {
		if ti.Name != "token_embd.weight" {
			continue
		}
		if ti.Type != gguf.TypeF32 {
			t.Fatalf("token_embd.weight is %v", ti.Type)
		}
		n, _ := ti.NBytes()
		start := f.DataOffset + ti.Offset
		if one {
			start += 511 * 256 * 4
			n = 4
		}
		for i := start; i < start+n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], 0x7fc00000)
		}
	}
	p := filepath.Join(dir, "nan.gguf")
	if one {
		p = filepath.Join(dir, "onenan.gguf")
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Test_runRun_samplerFlags: the llama-cli sampling flags act on the tiny
// model: --top-k 1 is greedy at any temperature and seed, a strong
// --repeat-penalty over the whole history makes greedy decoding pick no
// token twice, and -c bounds the prompt plus -n.
func Test_runRun_samplerFlags(t *testing.T) {
	model := filepath.Join(golden, "gguf/ggml-model-i2_s.gguf")
	gen := func(o RunOptions) string {
		t.Helper()
		var out bytes.Buffer
		o.Model, o.IDs, o.Out = model, []int32{1, 100}, &out
		if o.N == 0 {
			o.N = 12
		}
		if err := runRun(&o); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "generated ids: ") {
				return strings.TrimPrefix(l, "generated ids: ")
			}
		}
		t.Fatalf("no generated ids in\n%s", out.String())
		return ""
	}
	greedy := gen(RunOptions{})
	for _, seed := range []uint64{7, 8} {
		if got := gen(RunOptions{Temp: 1.5, Seed: seed, TopK: 1}); got != greedy {
			t.Errorf("--top-k 1 --temp 1.5 --seed %d: %s, want the greedy %s", seed, got, greedy)
		}
		if got := gen(RunOptions{Temp: 1.5, Seed: seed, TopP: 1e-6}); got != greedy {
			t.Errorf("--top-p 1e-6 --temp 1.5 --seed %d: %s, want the greedy %s", seed, got, greedy)
		}
	}
	pen := gen(RunOptions{RepeatPenalty: 1e6, RepeatLastN: -1, N: 24})
	seen := map[string]bool{"1": true, "100": true}
	for _, id := range strings.Fields(pen) {
		if seen[id] {
			t.Errorf("--repeat-penalty 1e6: token %s repeats in %s", id, pen)
		}
		seen[id] = true
	}
	if plain := gen(RunOptions{N: 24}); plain == pen {
		t.Errorf("--repeat-penalty changed nothing: %s", pen)
	}
	err := runRun(&RunOptions{Model: model, IDs: []int32{1, 100}, N: 12, Ctx: 5, Out: io.Discard})
	clitest.WantUsage(t, err, "exceeds -c 5")
}

// Test_runRun_arith: bitnet.cpp's own TQ2_0 file of the golden model runs
// with bitnet.cpp's arithmetic by default (its golden TQ ids) and with
// --arith mainline gives the ids mainline llama.cpp 3f545bec generated
// (testdata/golden/mainline-home: our tiny-tq2_0 has the same tensors);
// stderr names the arithmetic.
func Test_runRun_arith(t *testing.T) {
	for arith, want := range map[string]string{
		"":         "440 17 11 1 175 59 215 140 182 335 314 263 47 234 267 35",
		"mainline": "440 17 11 1 175 59 215 140 266 461 17 299 486 131 305 158",
	} {
		var out, errOut bytes.Buffer
		opts := &RunOptions{
			Model: filepath.Join(golden, "../ecosystems/tiny-bitnet-tq2_0.gguf"), Arith: arith,
			IDs: []int32{1, 100, 200, 300, 400, 500, 7, 8}, N: 16, IgnoreEOS: true, Out: &out, Err: &errOut,
		}
		if err := runRun(opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "generated ids: "+want+"\n") {
			t.Errorf("--arith %q: want ids %s, output:\n%s", arith, want, out.String())
		}
		name := map[string]string{"": "bitnet.cpp", "mainline": "mainline"}[arith]
		if !strings.Contains(errOut.String(), "arithmetic = "+name+" ") {
			t.Errorf("--arith %q: stderr does not name %s:\n%s", arith, name, errOut.String())
		}
	}
}
