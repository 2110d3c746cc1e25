package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The notice of a TL conversion whose tiling was derived from the shapes
// names the codegen command with the real input directory (it printed a
// literal "--from-config DIR"), quoted for the shell when it needs it.
func TestTLNoticeNamesInputDir(t *testing.T) {
	tmp := t.TempDir()
	spaced := filepath.Join(tmp, "my model")
	copyDir(t, golden, spaced)
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
