package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpTexts (H32): codegen --help lists only the presets it accepts
// (not the embedding models it refuses), and each of those is accepted;
// bench's -t does not claim the speeds are independent of it; the
// --kernel-config defaults of hf2gguf and verify say what the commands do
// (hf2gguf: the preset's tiling, else derived; verify: the stored one).
func TestHelpTexts(t *testing.T) {
	help := func(cmd string) string {
		var out bytes.Buffer
		if code := Main([]string{cmd, "--help"}, &out, &bytes.Buffer{}); code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		return out.String()
	}
	cg := help("codegen")
	line := cg[strings.Index(cg, "Presets (--model): "):]
	line = line[:strings.Index(line, "\n")]
	if strings.Contains(line, "embedding-") || !strings.Contains(line, "bitnet_b1_58-large") {
		t.Errorf("codegen --help presets: %s", line)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "Presets (--model): "), " (the embedding models have no TL files, so no TL kernels)."), ", ") {
		var errb bytes.Buffer
		if code := Main([]string{"codegen", "--arch", "tl2", "--model", name, "--outdir", dir}, &bytes.Buffer{}, &errb); code != 0 {
			t.Errorf("codegen --model %s (listed in --help): exit %d: %s", name, code, errb.String())
		}
	}
	for _, c := range []struct{ cmd, flag, want, not string }{
		{"bench", "-t, --threads", "thread counts to measure", "do not depend"},
		{"hf2gguf", "--kernel-config", "the tiling of the preset with the checkpoint's shapes, else derived", ""},
		{"verify", "--kernel-config", "the one the file stores", "derived from the shapes"},
		{"run", "-t, --threads", "the output does not depend on it, only the speed", ""},
	} {
		h := help(c.cmd)
		i := strings.Index(h, c.flag+" ")
		if i < 0 {
			t.Errorf("%s --help has no %s", c.cmd, c.flag)
			continue
		}
		l := h[i:]
		l = l[:strings.Index(l, "\n")]
		if !strings.Contains(l, c.want) || (c.not != "" && strings.Contains(l, c.not)) {
			t.Errorf("%s --help: %s", c.cmd, l)
		}
	}
}
