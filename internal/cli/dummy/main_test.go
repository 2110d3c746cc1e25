package dummy_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/cli"
)

// TestMainExitCodes runs the command through cli.Main: the preset list exits
// 0, bad usage 2, data errors 1, each with one error line.
func TestMainExitCodes(t *testing.T) {
	dir := t.TempDir()
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
}
