package gguf2hf_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// TestOutDirNames: --out with a trailing slash names that directory (it
// once looked for "newdir" inside itself and failed), missing parents are
// created as save_pretrained's os.makedirs does and removed again when the
// export fails, and a 255-byte name (NAME_MAX) works although the temp
// directory's ".NAME.partial-PID-RAND" would not fit.
func TestOutDirNames(t *testing.T) {
	dir := t.TempDir()
	gg := filepath.Join(dir, "m.gguf")
	mustRun(t, "hf2gguf", tinyHF, "--outtype", "tq2_0", "--outfile", gg)
	for _, out := range []string{
		filepath.Join(dir, "newdir") + string(filepath.Separator),
		filepath.Join(dir, "a", "b", "c"),
		filepath.Join(dir, strings.Repeat("n", 255)),
	} {
		mustRun(t, "gguf2hf", gg, "--out", out)
		if _, err := os.Stat(filepath.Join(out, "model.safetensors")); err != nil {
			t.Errorf("--out %s: %v", out, err)
		}
	}
	// a failed export (a NaN in output_norm, found while writing) leaves
	// no parent it made
	b, err := os.ReadFile(gg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(gg)
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.Tensor("output_norm.weight")
	binary.LittleEndian.PutUint32(b[f.DataOffset+ti.Offset:], math.Float32bits(float32(math.NaN())))
	f.Close()
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, b, 0o644)
	if code, _, errs := runMain("gguf2hf", bad, "--out", filepath.Join(dir, "x", "y")+"/"); code != 1 || !strings.Contains(errs, "output_norm.weight") {
		t.Fatalf("bad input: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed export left the parent it created: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name()[:min(len(e.Name()), 8)])
	}
	if got := strings.Join(names, " "); got != "a bad.gguf m.gguf newdir nnnnnnnn" {
		t.Errorf("directory holds %s", got)
	}
}
