package verify

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
)

// verify on an embedding model: per-input cosine lines, --min-cosine and
// --pooling reach the check, a failure returns ErrFailed naming the input.
func TestVerifyEmbeddingCommand(t *testing.T) {
	s := embedfixture.Qwen3
	s.Vocab = 400
	dir := t.TempDir()
	if err := embedfixture.Write(dir, s, embedfixture.Options{Pooling: "lasttoken"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var b bytes.Buffer
		cmd := NewCmd(nil)
		cmd.SetArgs(append([]string{"--gguf", out, "--hf", dir}, args...))
		cmd.SetOut(&b)
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		return b.String(), err
	}
	text, err := run("--ids", "3,70,399,12")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "embedding 1 (4 tokens): cosine 0.99") || !strings.Contains(text, "(min 0.999)") || !strings.HasSuffix(text, "PASS\n") {
		t.Errorf("output:\n%s", text)
	}
	text, err = run("--ids", "3,70,399,12", "--pooling", "mean", "--min-cosine", "1.5")
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "prompt 1") || !strings.Contains(text, "(min 1.5)") {
		t.Errorf("err = %v, output:\n%s", err, text)
	}
	_, err = run("--pooling", "max")
	var ue *usage.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--pooling") {
		t.Errorf("--pooling max: %v", err)
	}
}
