package tokenize_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
)

// TestMainTokenize runs the command through the CLI root: exit 0 with the
// golden ids, 2 for bad usage, 1 for an unreadable file, one-line errors.
func TestMainTokenize(t *testing.T) {
	const model = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"
	missing := filepath.Join(t.TempDir(), "missing.txt")
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string // stdout for code 0, else text the error must contain
	}{
		{"ok", []string{"tokenize", "-m", model, "-p", "Hello", "--no-bos", "--json"}, 0, `{"ids":[413,480,414,271,417],"pieces":[" ","H","e","ll","o"]}` + "\n"},
		{"no text", []string{"tokenize", "-m", model}, 2, "-p TEXT"},
		{"unknown flag", []string{"tokenize", "-m", model, "-p", "x", "--bos"}, 2, "--bos"},
		{"unreadable file", []string{"tokenize", "-m", model, "-f", missing}, 1, "missing.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cli.Main(c.args, &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errb.String())
			}
			if c.code == 0 {
				if out.String() != c.out {
					t.Fatalf("stdout %q, want %q", out.String(), c.out)
				}
				return
			}
			msg := errb.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "bitnet-convert: ") || !strings.Contains(msg, c.out) {
				t.Errorf("stderr %q, want one line naming %q", msg, c.out)
			}
		})
	}
}
