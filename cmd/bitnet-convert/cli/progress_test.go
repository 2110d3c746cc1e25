package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/hf2gguf"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/requant"
)

// Progress is drawn only on a terminal: through Main stderr is a buffer, so
// hf2gguf, dummy, verify and perplexity print no bar or stage lines there
// (only their output on stdout). With the terminal switch forced on, the
// same runs draw it.
func TestProgressOnlyOnATerminal(t *testing.T) {
	tmp := t.TempDir()
	tinyGGUF := filepath.Join(tmp, "t.gguf")
	text := "../../../testdata/golden/tiny-bitnet/outputs/ppl_text.txt"
	for _, args := range [][]string{
		{"hf2gguf", golden, "--outfile", tinyGGUF},
		{"dummy", "--preset", "bitnet_b1_58-large", "--layers", "1", "--out", filepath.Join(tmp, "d")},
		{"verify", "--gguf", tinyGGUF, "--hf", golden},
		{"perplexity", "-m", tinyGGUF, "-f", text, "-c", "32", "--chunks", "2"},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
			if l != "" && !strings.HasPrefix(l, "bitnet-convert: ") {
				t.Errorf("%v: stderr line %q is not a notice (progress on a non-terminal?)", args, l)
			}
		}
		if out.Len() == 0 {
			t.Errorf("%v: no output", args)
		}
	}

	// Forced on: the bars appear on stderr.
	var errb bytes.Buffer
	if err := hf2gguf.Run(&hf2gguf.Options{Dir: golden, OutType: "i2_s", OutFile: filepath.Join(tmp, "u.gguf"), Stdout: &bytes.Buffer{}, Stderr: &errb, StderrIsTerminal: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "output.weight") && !strings.Contains(errb.String(), "token_embd.weight") {
		t.Errorf("hf2gguf with a terminal drew no bar: %q", errb.String())
	}
}

// TestProgressCountsBytes (H30): on a terminal, hf2gguf's and requant's
// bars count bytes ("… kB/… MB"), not tensors.
func TestProgressCountsBytes(t *testing.T) {
	tmp := t.TempDir()
	var errb bytes.Buffer
	out := filepath.Join(tmp, "b.gguf")
	if err := hf2gguf.Run(&hf2gguf.Options{Dir: golden, OutType: "i2_s", OutFile: out, Stdout: &bytes.Buffer{}, Stderr: &errb, StderrIsTerminal: true}); err != nil {
		t.Fatal(err)
	}
	bytesBar := regexp.MustCompile(`\d+(\.\d+)? [kMG]?B/\d+(\.\d+)? [kMG]?B`)
	if !bytesBar.MatchString(errb.String()) {
		t.Errorf("hf2gguf bar shows no byte counts: %q", errb.String())
	}
	errb.Reset()
	if err := requant.Run(&requant.Options{In: out, OutType: "tq2_0", OutFile: filepath.Join(tmp, "c.gguf"), Stdout: &bytes.Buffer{}, Stderr: &errb, StderrIsTerminal: true, Context: context.Background()}); err != nil {
		t.Fatal(err)
	}
	if !bytesBar.MatchString(errb.String()) {
		t.Errorf("requant bar shows no byte counts: %q", errb.String())
	}
}
