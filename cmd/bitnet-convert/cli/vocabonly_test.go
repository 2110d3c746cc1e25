package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

const testdata = "../../../testdata"

// tokenizerDir copies testdata/tokenizers/<name> into dir, decompressing
// .gz files, as a user's checkpoint directory holds them.
func tokenizerDir(t *testing.T, name, dir string) {
	t.Helper()
	src := filepath.Join(testdata, "tokenizers", name)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "tokenizer") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out := e.Name()
		if base, ok := strings.CutSuffix(out, ".gz"); ok {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			out = base
		}
		if err := os.WriteFile(filepath.Join(dir, out), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// vectorInputs reads the inputs of testdata/tokenizers/vectors/<name>.inp
// and, when want is set, the expected ids of .out (one line per input).
func vectorInputs(t *testing.T, name string) ([]string, [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(filepath.Join(testdata, "tokenizers", "vectors", name+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(testdata, "tokenizers", "vectors", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	ins := strings.Split(strings.TrimSuffix(string(inp), sep), sep)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(ins) != len(lines) {
		t.Fatalf("%s: %d inputs, %d output lines", name, len(ins), len(lines))
	}
	want := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = append(want[i], int32(n))
		}
	}
	return ins, want
}

// ggufTokenizer loads the tokenizer of a GGUF file as `tokenize` does.
func ggufTokenizer(t *testing.T, path string) (tokenizer.Tokenizer, *reader.File) {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok, f
}

func mainOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(args, &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// --vocab-only on a directory holding only a real config.json (the literal
// Llama3-8B-1.58 and bitnet-embedding-0.6b configs of testdata/configs) and
// the tokenizer files writes a GGUF whose tokenize ids equal those of the
// GGUF converted from `dummy --layers 1 --tokenizer …` of the same config,
// on every string of the test vectors.
//
// The dummy side keeps the architecture (LlamaForCausalLM with its
// quantization_config; Qwen3 for the embedding model), vocab_size and every
// tokenizer setting, and shrinks only the hidden sizes and head counts (the
// tokenizer KVs do not depend on them), so the test writes ~40 MB instead of
// ~0.3–2 GB. The Llama-3 ids are also checked against llama.cpp's own
// expected ids (vectors/ggml-vocab-llama-bpe.gguf.out).
func TestVocabOnlyMatchesDummyConversion(t *testing.T) {
	if testing.Short() {
		t.Skip("converts two ~40 MB dummy checkpoints")
	}
	for _, tc := range []struct {
		name, config, tok, vectors, arch, llamaVectors string
		shrink                                         map[string]any
	}{
		{"llama3-8b", "HF1BitLLM_Llama3-8B-1.58-100B-tokens.config.json", "llama3", "ggml-vocab-llama-bpe.gguf", "llama", "ggml-vocab-llama-bpe.gguf",
			map[string]any{"hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 2, "num_key_value_heads": 2}},
		{"embedding-0.6b", "microsoft_bitnet-embedding-0.6b.config.json", "qwen3", "ggml-vocab-qwen2.gguf", "qwen3", "",
			map[string]any{"hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 1, "num_key_value_heads": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			cfgBytes, err := os.ReadFile(filepath.Join(testdata, "configs", tc.config))
			if err != nil {
				t.Fatal(err)
			}
			// The vocab-only side: config.json + tokenizer files, nothing else.
			vdir := filepath.Join(tmp, "vocab")
			os.Mkdir(vdir, 0o755)
			os.WriteFile(filepath.Join(vdir, "config.json"), cfgBytes, 0o644)
			tokenizerDir(t, tc.tok, vdir)
			vocab := filepath.Join(tmp, "vocab.gguf")
			sum := mainOK(t, "hf2gguf", vdir, "--vocab-only", "--outfile", vocab)
			if !strings.Contains(sum, "vocab only") || !strings.Contains(sum, "no tensors") {
				t.Errorf("summary %q", sum)
			}
			// The dummy side.
			var cfg map[string]any
			json.Unmarshal(cfgBytes, &cfg)
			for k, v := range tc.shrink {
				cfg[k] = v
			}
			small, _ := json.Marshal(cfg)
			cfgPath := filepath.Join(tmp, "config.json")
			os.WriteFile(cfgPath, small, 0o644)
			ddir := filepath.Join(tmp, "dummy")
			mainOK(t, "dummy", "--config", cfgPath, "--layers", "1", "--tokenizer", filepath.Join(testdata, "tokenizers", tc.tok), "--out", ddir)
			full := filepath.Join(tmp, "full.gguf")
			mainOK(t, "hf2gguf", ddir, "--outfile", full)

			vt, vf := ggufTokenizer(t, vocab)
			ft, ff := ggufTokenizer(t, full)
			if len(vf.Tensors) != 0 || len(ff.Tensors) == 0 {
				t.Fatalf("tensors: vocab-only %d, full %d", len(vf.Tensors), len(ff.Tensors))
			}
			if _, ok := vf.Get("general.file_type"); ok {
				t.Error("the vocab-only file states a general.file_type")
			}
			if vf.Arch() != tc.arch || ff.Arch() != tc.arch {
				t.Errorf("arch: vocab-only %q, dummy conversion %q, want %q for both", vf.Arch(), ff.Arch(), tc.arch)
			}
			ins, want := vectorInputs(t, tc.vectors)
			if len(ins) < 40 {
				t.Fatalf("%s: only %d vector strings", tc.vectors, len(ins))
			}
			for i, in := range ins {
				a, err1 := vt.Encode(in, false, false)
				b, err2 := ft.Encode(in, false, false)
				if err1 != nil || err2 != nil || !slices.Equal(a, b) {
					t.Errorf("input %d %q: vocab-only %v (%v), dummy conversion %v (%v)", i, in, a, err1, b, err2)
				}
				if tc.llamaVectors != "" && !slices.Equal(a, want[i]) {
					t.Errorf("input %d %q: %v, llama.cpp expects %v", i, in, a, want[i])
				}
			}
			// The command itself gives the same ids on both files.
			var outs []string
			for _, m := range []string{vocab, full} {
				outs = append(outs, mainOK(t, "tokenize", "-m", m, "-p", "Hello world! 3.14 ünïcödé", "--json"))
			}
			if outs[0] != outs[1] || !strings.Contains(outs[0], `"ids":[`) {
				t.Errorf("tokenize: %s vs %s", outs[0], outs[1])
			}
			// run on the vocab-only file says what it is.
			var errb bytes.Buffer
			if code := Main([]string{"run", "-m", vocab, "--ids", "1", "-n", "1"}, &bytes.Buffer{}, &errb); code != 1 || !strings.Contains(errb.String(), "vocab-only") {
				t.Errorf("run on the vocab-only file: exit %d, %s", code, errb.String())
			}
		})
	}
}

// Gemma3 configs follow transformers' Gemma3TextConfig defaults: the 270M
// config declares neither layer_types nor sliding_window_pattern nor
// sliding_window, so the file gets a 4096-token window on every layer but
// each 6th (layers 5, 11 and 17 of 18 are global). Checked end to end on the
// real config through hf2gguf --vocab-only and inspect --key.
func TestGemma3WindowDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the 262k-token Gemma3 tokenizer")
	}
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "g")
	os.Mkdir(dir, 0o755)
	cfg, err := os.ReadFile(filepath.Join(testdata, "configs", "microsoft_bitnet-embedding-270m.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644)
	tokenizerDir(t, "gemma3", dir)
	out := filepath.Join(tmp, "g.gguf")
	mainOK(t, "hf2gguf", dir, "--vocab-only", "--outfile", out)
	got := mainOK(t, "inspect", out, "--key", "gemma3.attention.sliding_window,gemma3.attention.sliding_window_pattern")
	var want []string
	want = append(want, "4096")
	for i := 0; i < 18; i++ {
		want = append(want, strconv.FormatBool(i != 5 && i != 11 && i != 17))
	}
	if got != strings.Join(want, "\n")+"\n" {
		t.Errorf("inspect --key: %q, want %q", got, want)
	}
}
