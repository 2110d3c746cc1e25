package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestLlamaFlagHints: every llama.cpp flag of the table, typed on each
// command it is listed for, is a usage error (exit 2) whose one line names
// the command, the flag and what to use instead (H26), whether pflag sees
// it as an unknown flag or, for single-dash forms such as -ngl or -cnv, as
// a bad value of one of our shorthands.
func TestLlamaFlagHints(t *testing.T) {
	n := 0
	for _, lf := range llamaFlags {
		for _, cmd := range strings.Fields(lf.cmds) {
			for _, flag := range lf.flags {
				n++
				var out, errb bytes.Buffer
				code := Main([]string{cmd, flag, "1"}, &out, &errb)
				want := "bitnet-convert: " + cmd + " " + flag + ": " + lf.hint + "\n"
				if code != 2 || errb.String() != want {
					t.Errorf("%s %s 1: exit %d, stderr %q, want exit 2 and %q", cmd, flag, code, errb.String(), want)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d flags checked", n)
	}
}

// TestLlamaFlagHintsNameOurs: the refusals that have an equivalent name
// it, also when the flag follows valid ones or is written --flag=value;
// a flag neither we nor the table know keeps cobra's message, and a
// flag we define under llama.cpp's name is never refused.
func TestLlamaFlagHintsNameOurs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-m", "x.gguf", "-f", "prompt.txt"}, `run -f: give the prompt text with -p "$(cat FILE)"`},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-tb", "4"}, "run -tb: use -t/--threads"},
		{[]string{"perplexity", "-m", "x.gguf", "--threads-batch=4"}, "perplexity --threads-batch: use -t/--threads"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "--min-p", "0.05"}, "--temp, --top-k, --top-p, --repeat-penalty"},
		{[]string{"run", "-m", "x.gguf", "-cnv"}, "give the whole prompt with -p TEXT"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-ngl", "99"}, "run -ngl: the runtime computes on the CPU (use -t/--threads"},
		{[]string{"bench", "-m", "x.gguf", "-ngl", "99"}, "bench -ngl: the runtime computes on the CPU"},
		{[]string{"bench", "-m", "x.gguf", "-pg", "512,128"}, "bench -pg: give the prompt and generation tests separately: -p N -n M"},
		{[]string{"hf2gguf", "dir", "--print-supported-models"}, "hf2gguf --print-supported-models: use --list-archs"},
		{[]string{"requant", "a.gguf", "b.gguf", "TQ2_0", "--leave-output-tensor"}, "unless --output-tensor-type is given"},
		{[]string{"tokenize", "-m", "x.gguf", "-p", "hi", "--log-disable"}, "tokenize --log-disable: logs and timings go to stderr"},
		{[]string{"bench", "-m", "x.gguf", "-mmp", "0"}, "bench -mmp: llama-bench's -mmp 0 is --no-mmap here"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "-mmp", "0"}, "run -mmp: llama-bench's -mmp 0 is --no-mmap here"},
		{[]string{"bench", "-m", "x.gguf", "--mmap", "0"}, "bench --mmap: llama-bench's --mmap 0 is --no-mmap here"},
		{[]string{"verify", "x.gguf", "--mlock"}, "verify --mlock: verify always maps the files it compares"},
		{[]string{"run", "-m", "x.gguf", "-p", "hi", "--mmap"}, "run --mmap: memory-mapping the model is the default; drop it"},
		{[]string{"verify", "x.gguf", "--no-mmap"}, "verify --no-mmap: verify always maps the files it compares"},
		{[]string{"run", "-m", "x.gguf", "--frobnicate"}, "unknown flag: --frobnicate"},
	} {
		var out, errb bytes.Buffer
		if code := Main(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and one line with %q", c.args, code, errb.String(), c.want)
		}
	}
	// Our own flags under llama.cpp's names parse (the run then fails on
	// the missing file, exit 1, not on the flag).
	for _, args := range [][]string{
		{"run", "-m", "nope.gguf", "-p", "hi", "-t", "2", "-c", "64", "-s", "1", "--top-k", "40", "--top-p", "0.9", "--repeat-penalty", "1.1", "--repeat-last-n", "64"},
		{"perplexity", "-m", "nope.gguf", "-f", "nope.txt", "-t", "2", "-c", "64"},
		{"perplexity", "-m", "nope.gguf", "-f", "nope.txt", "-c", "64", "-b", "128", "-ub", "32"},
		{"perplexity", "-m", "nope.gguf", "-f", "nope.txt", "-b", "1", "-ub=1"},
		{"bench", "-m", "nope.gguf", "-t", "2", "-o", "csv"},
		{"bench", "-m", "nope.gguf", "--no-mmap"},
		{"run", "-m", "nope.gguf", "-p", "hi", "--no-mmap"},
		{"perplexity", "-m", "nope.gguf", "-f", "nope.txt", "--no-mmap"},
		{"embed", "-m", "nope.gguf", "-p", "hi", "-t", "2"},
		{"embed", "-m", "nope.gguf", "-p", "hi", "--no-mmap"},
		{"verify", "nope.gguf", "-t", "2"},
		{"tokenize", "-m", "nope.gguf", "-p", "hi", "--ids", "--show-count"},
		{"hf2gguf", "nope", "-t", "2"},
		{"requant", "nope.gguf", "out.gguf", "TQ2_0"},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "nope") {
			t.Errorf("%q: exit %d, stderr %q, want exit 1 naming the missing file", args, code, errb.String())
		}
	}
}

// TestLlamaSingleDash: perplexity's -ub (llama-perplexity's spelling of
// --ubatch-size, which pflag would read as -u -b) reaches the flag, in both
// forms; after "--" it is left alone, and other commands keep cobra's
// reading.
func TestLlamaSingleDash(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"perplexity", "-m", "x.gguf", "-f", "t.txt", "-ub", "0"}, "perplexity: -ub 0: the physical batch size must be ≥ 1"},
		{[]string{"perplexity", "-m", "x.gguf", "-f", "t.txt", "-ub=0"}, "-ub 0: the physical batch size must be ≥ 1"},
		{[]string{"perplexity", "-m", "x.gguf", "-f", "t.txt", "-c", "64", "-b", "100"}, "-b 100: a batch of at least one chunk must be a multiple of -c 64"},
	} {
		var out, errb bytes.Buffer
		if code := Main(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), strings.TrimPrefix(c.want, "perplexity: ")) {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	root := NewRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range []struct{ in, want []string }{
		{[]string{"perplexity", "-ub", "7", "-m", "x"}, []string{"perplexity", "--ubatch-size", "7", "-m", "x"}},
		{[]string{"perplexity", "-ub=7", "--", "-ub"}, []string{"perplexity", "--ubatch-size=7", "--", "-ub"}},
		{[]string{"run", "-ub", "7"}, []string{"run", "-ub", "7"}},
	} {
		if got := llamaLongSpellings(root, c.in); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
	}
}
