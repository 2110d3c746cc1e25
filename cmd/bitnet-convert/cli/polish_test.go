package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestThreadsOneCheck: every command with -t/--threads refuses a negative
// count with the same line (flagx.CheckThreads; the check was once written
// six times with six wordings, and verify had none), and a value that is not
// an integer names the flag and the range instead of strconv's error.
func TestThreadsOneCheck(t *testing.T) {
	const m = "x.gguf" // never opened: the flags are checked first
	for _, args := range [][]string{
		{"hf2gguf", golden, "--outfile", "x.gguf"},
		{"perplexity", "-m", m, "-f", "t.txt"},
		{"gguf2hf", m, "--out", "d"},
		{"embed", "-m", m, "-p", "a"},
		{"run", "-m", m, "--ids", "1"},
		{"gpu-pack", m, "--out", "d"},
		{"verify", m},
	} {
		for _, c := range []struct{ val, want string }{
			{"-1", "bitnet-convert: -t/--threads -1: want an integer ≥ 0 (0 = all cores)\n"},
			{"1,2", "bitnet-convert: -t/--threads \"1,2\": want an integer ≥ 0 (0 = all cores)\n"},
		} {
			var out, errb bytes.Buffer
			code := Main(append(append([]string{}, args...), "-t", c.val), &out, &errb)
			if code != 2 || errb.String() != c.want {
				t.Errorf("%s -t %s: exit %d, %q; want exit 2, %q", args[0], c.val, code, errb.String(), c.want)
			}
		}
	}
}

// TestNumberFlagMessages: a number flag given something else is one usage
// line naming the flag and what it accepts (no "strconv.ParseInt"); -s -1
// is llama-cli's random seed, not an error.
func TestNumberFlagMessages(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-m", "x.gguf", "--ids", "1", "-s", "-2"}, `-s/--seed "-2": want an integer from 0 to 18446744073709551615, or -1 for a random seed`},
		{[]string{"run", "-m", "x.gguf", "--ids", "1", "--seed", "1e3"}, `-s/--seed "1e3": want an integer from 0 to 18446744073709551615, or -1 for a random seed`},
		{[]string{"run", "-m", "x.gguf", "--ids", "1", "-n", "ten"}, `-n/--n-predict "ten": want an integer`},
		{[]string{"run", "-m", "x.gguf", "--ids", "1", "--temp", "hot"}, `--temp "hot": want a number`},
		{[]string{"run", "-m", "x.gguf", "--ids", "1", "-n", "99999999999999999999"}, `-n/--n-predict "99999999999999999999": want an integer in range`},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, &out, &errb)
		if code != 2 || errb.String() != "bitnet-convert: "+c.want+"\n" {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	code := Main([]string{"run", "-m", "missing.gguf", "--ids", "1", "-s", "-1"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "missing.gguf") {
		t.Errorf("-s -1: exit %d, %q; want the run to proceed to the missing model (exit 1)", code, errb.String())
	}
}
