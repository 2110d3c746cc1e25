package cli

import (
	"bytes"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The notice of a TL conversion whose tiling was derived from the shapes
// names the codegen command with the real input directory (it printed a
// literal "--from-config DIR"), quoted for the shell when it needs it.
func TestTLNoticeNamesInputDir(t *testing.T) {
	tmp := t.TempDir()
	spaced := filepath.Join(tmp, "my model")
	testutil.CopyDir(t, golden, spaced)
	for _, tc := range []struct{ dir, want string }{
		{golden, "`bitnet-convert codegen --arch tl2 --from-config " + golden + "`"},
		{spaced, "`bitnet-convert codegen --arch tl2 --from-config '" + spaced + "'`"},
	} {
		var out, errb bytes.Buffer
		if code := Main([]string{"hf2gguf", tc.dir, "--outtype", "tl2", "--model-name", "tiny", "--outfile", filepath.Join(tmp, "tl2.gguf"), "--force"}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), "DIR") {
			t.Errorf("stderr %q, want the notice naming %s", errb.String(), tc.want)
		}
	}
}

// The round trip I2_S → TQ2_0 → I2_S keeps every code, but the final f32
// scales are the original ones rounded to f16. verify is not loosened for
// that: --hf and --ref-gguf against the original I2_S fail on the first
// scale in one line that says it is the f16 rounding and what checks such a
// file; --ref-gguf against the TQ2_0 file it was requantized from passes.
func TestRoundTripScalesF16(t *testing.T) {
	tmp := t.TempDir()
	orig := filepath.Join(golden, "../gguf/ggml-model-i2_s.gguf")
	tq := filepath.Join(tmp, "tiny-tq2_0.gguf")
	back := filepath.Join(tmp, "tiny-i2_s.gguf")
	for _, args := range [][]string{
		{"requant", orig, "--outtype", "tq2_0", "--outfile", tq},
		{"requant", tq, "--outtype", "i2_s", "--outfile", back},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"--hf", []string{"verify", "--gguf", back, "--hf", golden}, 1,
			[]string{"tensor blk.0.", ": scale 0 of 1 is ", "exactly that scale rounded to f16", "`verify --ref-gguf` against the file it was requantized from"}},
		{"--ref-gguf original", []string{"verify", "--ref-gguf", orig, back}, 1,
			[]string{"(I2_S, reference I2_S): scale of element ", "exactly that scale rounded to f16", "compare it with the f16-scale file it was requantized from"}},
		{"--ref-gguf the TQ2_0 input", []string{"verify", "--ref-gguf", tq, back}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errb.String())
			}
			if tc.code == 0 {
				return
			}
			got := errb.String()
			if strings.Count(got, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("stderr %q lacks %q", got, w)
				}
			}
		})
	}
}

// verify on a --no-vocab file without --ids runs fixed ids and says which
// on stderr (it used them silently); with --ids there is no notice.
func TestVerifyNoVocabSaysIDs(t *testing.T) {
	tmp := t.TempDir()
	nv := filepath.Join(tmp, "nv.gguf")
	var out, errb bytes.Buffer
	if code := Main([]string{"hf2gguf", golden, "--no-vocab", "--outfile", nv}, &out, &errb); code != 0 {
		t.Fatalf("hf2gguf: exit %d: %s", code, errb.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--gguf", nv, "--hf", golden}, "bitnet-convert: " + nv + " has no vocabulary: the prompt is the ids 1,100,200,300,400,7,8 (pass --ids to choose others)\n"},
		{[]string{"verify", "--gguf", nv, "--hf", golden, "--ids", "5,6"}, ""},
	} {
		out.Reset()
		errb.Reset()
		if code := Main(tc.args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		if got := errb.String(); (tc.want == "" && strings.Contains(got, "no vocabulary")) || !strings.Contains(got, tc.want) {
			t.Errorf("%v: stderr %q, want %q", tc.args, got, tc.want)
		}
	}
}

// --kernel-config on a file without TL tensors is accepted with a one-line
// notice by every runtime command that takes it (bench said nothing).
func TestKernelConfigOnNonTLFileNotice(t *testing.T) {
	i2s := filepath.Join(golden, "../gguf/ggml-model-i2_s.gguf")
	ini := filepath.Join(golden, "../gguf/kernel_config_tl2.ini")
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Hello world, this is a tiny BitNet test. ", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "bitnet-convert: --kernel-config has no effect: the file has no TL1/TL2 tensors\n"
	for _, args := range [][]string{
		{"run", "-m", i2s, "--ids", "1,2", "-n", "1", "--kernel-config", ini},
		{"perplexity", "-m", i2s, "-f", text, "-c", "32", "--chunks", "1", "--kernel-config", ini},
		{"bench", "-m", i2s, "-p", "4", "-n", "1", "-r", "1", "--kernel-config", ini},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if strings.Count(errb.String(), want) != 1 {
			t.Errorf("%s: stderr %q, want the notice once", args[0], errb.String())
		}
	}
}
