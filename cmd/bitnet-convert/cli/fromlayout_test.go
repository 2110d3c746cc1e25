package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --from-layout is for I2_S files that record no layout (bitnet.cpp's own);
// on our files, which record theirs in bitnet_convert.i2s_layout, a
// disagreeing value is a usage error naming the flag and the recorded
// layout (it used to override the key: requant wrote a corrupt file, run
// other tokens). The recorded value itself is accepted, and a file without
// the key still takes any layout.
func TestFromLayoutAgainstRecordedLayout(t *testing.T) {
	tmp := t.TempDir()
	tiny := filepath.Join(tmp, "tiny-i2_s.gguf")
	text := filepath.Join(tmp, "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Hello world, this is a tiny BitNet test. ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"hf2gguf", golden, "--model-name", "tiny", "--outfile", tiny}, &out, &errb); code != 0 {
		t.Fatalf("hf2gguf: exit %d: %s", code, errb.String())
	}
	arm := filepath.Join(testdata, "golden/ecosystems/tiny-bitnet-i2_s-arm.gguf")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"requant", []string{"requant", tiny, "--from-layout", "arm", "--outtype", "tq2_0", "--outfile", filepath.Join(tmp, "a.gguf")}, 2},
		{"requant dry-run", []string{"requant", tiny, "--from-layout", "x86-1x4", "--outtype", "tq2_0", "--dry-run", "--outfile", filepath.Join(tmp, "b.gguf")}, 2},
		{"run", []string{"run", "-m", tiny, "--from-layout", "arm", "--ids", "1,2", "-n", "1"}, 2},
		{"perplexity", []string{"perplexity", "-m", tiny, "--from-layout", "arm", "-f", text, "-c", "16", "--chunks", "1"}, 2},
		{"bench", []string{"bench", "-m", tiny, "--from-layout", "ARM", "-p", "4", "-n", "1", "-r", "1"}, 2},
		{"recorded value", []string{"requant", tiny, "--from-layout", "X86", "--outtype", "tq2_0", "--outfile", filepath.Join(tmp, "c.gguf")}, 0},
		{"recorded value run", []string{"run", "-m", tiny, "--from-layout", "x86", "--ids", "1,2", "-n", "1"}, 0},
		{"no key", []string{"run", "-m", arm, "--from-layout", "arm", "--ids", "1,2", "-n", "1"}, 0},
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
			if strings.Count(got, "\n") != 1 || !strings.Contains(got, "--from-layout") || !strings.Contains(got, "as x86") || !strings.Contains(got, "bitnet_convert.i2s_layout") {
				t.Errorf("stderr %q, want one line naming --from-layout and the recorded layout x86", got)
			}
			if _, err := os.Stat(filepath.Join(tmp, "a.gguf")); err == nil {
				t.Errorf("a refused requant wrote its output")
			}
		})
	}
}
