package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

func TestNewCmdEmbed(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		want    *EmbedOptions
		wantErr string
	}{
		{"prompt", []string{"-m", "x.gguf", "-p", "hello", "--json", "--pooling", "last", "--threads", "3"},
			&EmbedOptions{Model: "x.gguf", Prompt: "hello", HasPrompt: true, JSON: true, Pooling: "last", Threads: 3}, ""},
		{"ids", []string{"-m", "x.gguf", "--ids", "1, 2,3"}, &EmbedOptions{Model: "x.gguf", IDs: []int32{1, 2, 3}}, ""},
		{"-t", []string{"-m", "x.gguf", "--ids", "1", "-t", "2"}, &EmbedOptions{Model: "x.gguf", IDs: []int32{1}, Threads: 2}, ""},
		{"model given positionally", []string{"x.gguf", "-p", "a"}, nil, "give it as -m x.gguf"},
		{"no model", []string{"-p", "a"}, nil, "-m/--model"},
		{"no input", []string{"-m", "x"}, nil, "exactly one"},
		{"both inputs", []string{"-m", "x", "-p", "a", "--ids", "1"}, nil, "exactly one"},
		{"bad ids", []string{"-m", "x", "--ids", "1,x"}, nil, "--ids"},
		{"bad pooling", []string{"-m", "x", "-p", "a", "--pooling", "max"}, nil, "--pooling"},
		{"negative threads", []string{"-m", "x", "-p", "a", "--threads", "-1"}, nil, "--threads"},
		{"argument", []string{"-m", "x", "-p", "a", "extra"}, nil, "no arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmdEmbed, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out = nil
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func convertFixture(t *testing.T, s embedfixture.Shape, opts embedfixture.Options, ot convert.OutType) string {
	t.Helper()
	dir := t.TempDir()
	opts.TokenizersDir = "../../../../testdata/tokenizers"
	if err := embedfixture.Write(dir, s, opts); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: ot, NoVocab: !opts.Tokenizer}); err != nil {
		t.Fatal(err)
	}
	return out
}

func execEmbed(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := NewCmdEmbed(nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

// embed prints the runtime's embedding: one line of numbers (parsing back to
// the exact float32 values) or JSON; --pooling overrides the file's type;
// bad input gives usage errors (exit 2) or errors naming the file (exit 1).
func TestEmbedRun(t *testing.T) {
	s := embedfixture.Gemma3
	s.Vocab = 300
	path := convertFixture(t, s, embedfixture.Options{Pooling: "cls_token"}, convert.OutI2S)
	m, f, err := runtime.OpenEmbedding(path, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := []int32{2, 40, 41, 299}
	cls, _ := m.Embed(ids, runtime.PoolCLS)
	last, _ := m.Embed(ids, runtime.PoolLast)

	text, err := execEmbed("-m", path, "--ids", "2,40,41,299")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(text)
	if len(fields) != s.Hidden || !strings.HasSuffix(text, "\n") || strings.Count(text, "\n") != 1 {
		t.Fatalf("%d values on %d lines", len(fields), strings.Count(text, "\n"))
	}
	for i, fs := range fields {
		v, err := strconv.ParseFloat(fs, 32)
		if err != nil || float32(v) != cls[i] {
			t.Fatalf("value %d = %q, want %v (file's pooling cls)", i, fs, cls[i])
		}
	}
	js, err := execEmbed("-m", path, "--ids", "2,40,41,299", "--json", "--pooling", "last")
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	if r.Arch != "gemma3" || r.Pooling != "last" || r.Dim != s.Hidden || !reflect.DeepEqual(r.Tokens, ids) || !reflect.DeepEqual(r.Embedding, last) {
		t.Errorf("json %+v", r)
	}
	var n float64
	for _, v := range r.Embedding {
		n += float64(v) * float64(v)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Errorf("|e|² = %v", n)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"-m", path, "-p", "hello"}, false, "no usable tokenizer"},
		{[]string{"-m", path, "--ids", "1,300"}, true, "token id 300 is outside the vocabulary"},
		{[]string{"-m", filepath.Join(t.TempDir(), "none.gguf"), "--ids", "1"}, false, "none.gguf"},
	} {
		_, err := execEmbed(c.args...)
		var ue *usage.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.usage {
			t.Errorf("%v: err = %v, want %q (usage %v)", c.args, err, c.want, c.usage)
		}
	}
}

// -p tokenizes with the GGUF vocabulary: Qwen3 appends <|endoftext|> (the
// converter's add_eos_token), which last-token pooling reads.
func TestEmbedPromptQwen3(t *testing.T) {
	if testing.Short() {
		t.Skip("real-vocabulary checkpoint")
	}
	path := convertFixture(t, embedfixture.Qwen3, embedfixture.Options{Tokenizer: true, Pooling: "lasttoken"}, convert.OutI2S)
	js, err := execEmbed("-m", path, "-p", "Hello world", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	if want := []int32{9707, 1879, 151643}; !reflect.DeepEqual(r.Tokens, want) || r.Pooling != "last" || r.Arch != "qwen3" {
		t.Errorf("tokens %v pooling %s arch %s, want %v last qwen3", r.Tokens, r.Pooling, r.Arch, want)
	}
	ids, err := execEmbed("-m", path, "--ids", "9707,1879,151643", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r2 Result
	json.Unmarshal([]byte(ids), &r2)
	if !reflect.DeepEqual(r.Embedding, r2.Embedding) {
		t.Error("-p and the same --ids give different embeddings")
	}
}
