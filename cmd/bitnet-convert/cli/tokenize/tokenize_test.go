package tokenize

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

const goldenI2S = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

// TestNewCmdTokenize checks flag parsing only (runF captures the options).
func TestNewCmdTokenize(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		want    *TokenizeOptions
		wantErr string
	}{
		{"prompt", []string{"-m", "a.gguf", "-p", "Hello"}, &TokenizeOptions{Model: "a.gguf", Prompt: "Hello", HasPrompt: true}, ""},
		{"empty prompt", []string{"-m", "a.gguf", "-p", ""}, &TokenizeOptions{Model: "a.gguf", HasPrompt: true}, ""},
		{"file and flags", []string{"--model", "a.gguf", "-f", "in.txt", "--no-bos", "--json", "--parse-special"},
			&TokenizeOptions{Model: "a.gguf", File: "in.txt", NoBOS: true, JSON: true, ParseSpecial: true}, ""},
		{"no text", []string{"-m", "a.gguf"}, nil, "exactly one of -p TEXT, -f FILE and --stdin"},
		{"both texts", []string{"-m", "a.gguf", "-p", "x", "-f", "y"}, nil, "exactly one of -p TEXT, -f FILE and --stdin"},
		{"no model", []string{"-p", "x"}, nil, "needs -m FILE"},
		{"stdin", []string{"-m", "a.gguf", "--stdin"}, &TokenizeOptions{Model: "a.gguf", File: "-"}, ""},
		{"stdin dash", []string{"-m", "a.gguf", "-f", "-"}, &TokenizeOptions{Model: "a.gguf", File: "-"}, ""},
		{"stdin and prompt", []string{"-m", "a.gguf", "--stdin", "-p", "x"}, nil, "exactly one of"},
		{"stdin and file", []string{"-m", "a.gguf", "--stdin", "-f", "y"}, nil, "--stdin and -f y"},
		{"argument", []string{"-m", "a.gguf", "-p", "x", "extra"}, nil, "no arguments"},
		{"--ids", []string{"-m", "a.gguf", "-p", "x", "--ids"}, &TokenizeOptions{Model: "a.gguf", Prompt: "x", HasPrompt: true, IDs: true}, ""},
		{"--show-count", []string{"-m", "a.gguf", "-p", "x", "--show-count"}, &TokenizeOptions{Model: "a.gguf", Prompt: "x", HasPrompt: true, ShowCount: true}, ""},
		{"--ids and --json", []string{"-m", "a.gguf", "-p", "x", "--ids", "--json"}, nil, "--json excludes --ids"},
		{"--show-count and --json", []string{"-m", "a.gguf", "-p", "x", "--show-count", "--json"}, nil, "--json excludes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmdTokenize, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.Stdin = nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options %+v, want %+v", got, c.want)
			}
		})
	}
}

// writeGPT2Vocab writes a vocab-only GGUF with a tiny byte-level BPE
// vocabulary ("gpt2", pre llama-bpe) and returns its path.
func writeGPT2Vocab(t *testing.T) string {
	t.Helper()
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("llama-bpe")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"<|begin_of_text|>", "H", "e", "l", "o", "Ġ", "w", "r", "d", "ll", "Ġw"})},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
		{Key: "tokenizer.ggml.merges", Value: gguf.Strings([]string{"l l", "Ġ w"})},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32(0)},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(true)},
	}
	path := filepath.Join(t.TempDir(), "gpt2.gguf")
	var buf bytes.Buffer
	w, err := writer.New(&buf, kvs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Test_tokenizeRun runs the command body on the golden tiny I2_S vocabulary
// (the reference runtime's ids for the golden prompt) and on a gpt2 one.
func Test_tokenizeRun(t *testing.T) {
	dir := t.TempDir()
	promptFile := filepath.Join(dir, "prompt.txt")
	if err := os.WriteFile(promptFile, []byte("Hello world, this is a tiny BitNet test."), 0o644); err != nil {
		t.Fatal(err)
	}
	gpt2 := writeGPT2Vocab(t)
	for _, c := range []struct {
		name string
		opts TokenizeOptions
		want string
	}{
		{"golden prompt json", TokenizeOptions{Model: goldenI2S, Prompt: "Hello world, this is a tiny BitNet test.", HasPrompt: true, JSON: true},
			`{"ids":[1,413,480,414,271,417,313,269,421,427,457,360,314,411,280,262,261,437,413,461,268,469,316,262,414,284,432],` +
				`"pieces":["<s>"," ","H","e","ll","o"," w","or","l","d",","," th","is"," is"," a"," t","in","y"," ","B","it","N","et"," t","e","st","."]}` + "\n"},
		{"file", TokenizeOptions{Model: goldenI2S, File: promptFile, JSON: true},
			`{"ids":[1,413,480,414,271,417,313,269,421,427,457,360,314,411,280,262,261,437,413,461,268,469,316,262,414,284,432],` +
				`"pieces":["<s>"," ","H","e","ll","o"," w","or","l","d",","," th","is"," is"," a"," t","in","y"," ","B","it","N","et"," t","e","st","."]}` + "\n"},
		{"text", TokenizeOptions{Model: goldenI2S, Prompt: "Hello world", HasPrompt: true},
			"     1 -> '<s>'\n   413 -> ' '\n   480 -> 'H'\n   414 -> 'e'\n   271 -> 'll'\n   417 -> 'o'\n   313 -> ' w'\n   269 -> 'or'\n   421 -> 'l'\n   427 -> 'd'\n"},
		// llama-tokenize --ids / --show-count output.
		{"ids", TokenizeOptions{Model: goldenI2S, Prompt: "Hello world", HasPrompt: true, IDs: true},
			"[1, 413, 480, 414, 271, 417, 313, 269, 421, 427]\n"},
		{"ids show-count", TokenizeOptions{Model: goldenI2S, Prompt: "Hello world", HasPrompt: true, IDs: true, ShowCount: true},
			"[1, 413, 480, 414, 271, 417, 313, 269, 421, 427]\nTotal number of tokens: 10\n"},
		{"show-count", TokenizeOptions{Model: goldenI2S, Prompt: "Hello", HasPrompt: true, NoBOS: true, ShowCount: true},
			"   413 -> ' '\n   480 -> 'H'\n   414 -> 'e'\n   271 -> 'll'\n   417 -> 'o'\nTotal number of tokens: 5\n"},
		{"ids empty", TokenizeOptions{Model: goldenI2S, HasPrompt: true, NoBOS: true, IDs: true, ShowCount: true}, "[]\nTotal number of tokens: 0\n"},
		{"no bos", TokenizeOptions{Model: goldenI2S, Prompt: "Hello", HasPrompt: true, NoBOS: true},
			"   413 -> ' '\n   480 -> 'H'\n   414 -> 'e'\n   271 -> 'll'\n   417 -> 'o'\n"},
		{"special as text", TokenizeOptions{Model: goldenI2S, Prompt: "</s>", HasPrompt: true, NoBOS: true, JSON: true},
			`{"ids":[376,430,420,474],"pieces":[" <","/","s",">"]}` + "\n"},
		{"parse special", TokenizeOptions{Model: goldenI2S, Prompt: "</s>", HasPrompt: true, NoBOS: true, ParseSpecial: true, JSON: true},
			`{"ids":[2],"pieces":["</s>"]}` + "\n"},
		{"empty", TokenizeOptions{Model: goldenI2S, HasPrompt: true, NoBOS: true, JSON: true}, `{"ids":[],"pieces":[]}` + "\n"},
		{"gpt2", TokenizeOptions{Model: gpt2, Prompt: "Hello world", HasPrompt: true, JSON: true},
			`{"ids":[0,1,2,9,4,10,4,7,3,8],"pieces":["<|begin_of_text|>","H","e","ll","o"," w","o","r","l","d"]}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			c.opts.Out = &out
			if err := tokenizeRun(&c.opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Fatalf("output\n%s\nwant\n%s", out.String(), c.want)
			}
		})
	}
}

// Test_tokenizeRunErrors: unreadable inputs are errors naming the file.
func Test_tokenizeRunErrors(t *testing.T) {
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notGGUF, []byte("this is not a GGUF file at all, just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	noVocab := filepath.Join(dir, "novocab.gguf")
	var buf bytes.Buffer
	w, err := writer.New(&buf, []gguf.KV{{Key: "general.architecture", Value: gguf.String("llama")}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noVocab, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts TokenizeOptions
		want []string
	}{
		{"missing text file", TokenizeOptions{Model: goldenI2S, File: filepath.Join(dir, "nope.txt")}, []string{"nope.txt"}},
		{"missing model", TokenizeOptions{Model: filepath.Join(dir, "nope.gguf"), HasPrompt: true}, []string{"nope.gguf"}},
		{"not gguf", TokenizeOptions{Model: notGGUF, HasPrompt: true}, []string{"notes.txt"}},
		{"no vocabulary", TokenizeOptions{Model: noVocab, HasPrompt: true}, []string{"novocab.gguf", "tokenizer.ggml.model"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			c.opts.Out = &out
			err := tokenizeRun(&c.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q before failing", out.String())
			}
		})
	}
}

// --stdin reads the text from stdin and gives the ids -p gives.
func TestTokenizeStdin(t *testing.T) {
	var a, b bytes.Buffer
	for _, tc := range []struct {
		args []string
		out  *bytes.Buffer
	}{{[]string{"-m", goldenI2S, "-p", "Hello world, this is a tiny BitNet test.", "--json"}, &a}, {[]string{"-m", goldenI2S, "--stdin", "--json"}, &b}} {
		cmd := NewCmdTokenize(nil)
		cmd.SetArgs(tc.args)
		cmd.SetIn(strings.NewReader("Hello world, this is a tiny BitNet test."))
		cmd.SetOut(tc.out)
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), `{"ids":[1,413,480,414`) {
		t.Fatalf("-p %s\n--stdin %s", a.String(), b.String())
	}
}
