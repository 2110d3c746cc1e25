package dummy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
)

// TestMainExitCodes runs the command through cli.Main: the preset list exits
// 0, bad usage 2, data errors 1, each with one error line.
func TestMainExitCodes(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	os.WriteFile(huge, []byte(`{"architectures":["LlamaForCausalLM"],"hidden_size":2147483647,"num_attention_heads":1,"intermediate_size":8,"vocab_size":32000,"num_hidden_layers":1}`), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dummy", "--preset"}, 0, "bitnet_b1_58-large"},
		{[]string{"dummy", "--out", dir}, 2, "exactly one of --preset NAME or --config FILE"},
		{[]string{"dummy", "--preset", "nope", "--out", dir}, 2, `unknown model "nope"`},
		{[]string{"dummy", "--preset", "bitnet_b1_58-large", "--out", dir, "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"dummy", "--preset", "bitnet_b1_58-large", "--out", dir, "--layers", "x"}, 2, "--layers"},
		{[]string{"dummy", "--config", filepath.Join(dir, "none.json"), "--out", dir}, 1, "none.json"},
		// Refused before writing: an absurd shape names its config key, a
		// checkpoint larger than the disk names both sizes; no --out is left.
		{[]string{"dummy", "--config", huge, "--out", filepath.Join(dir, "h")}, 1, "hidden_size 2147483647"},
		{[]string{"dummy", "--preset", "bitnet_b1_58-3B", "--layers", "100000", "--out", filepath.Join(dir, "big")}, 1, "free ("},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := cli.Main(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%v: exit %d (want %d), output %q %q, want %q", tc.args, code, tc.code, out.String(), errb.String(), tc.want)
		}
		if code != 0 && strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: error is not one line: %q", tc.args, errb.String())
		}
	}
	for _, sub := range []string{"h", "big"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err == nil {
			t.Errorf("refused run created --out %s", sub)
		}
	}
}
