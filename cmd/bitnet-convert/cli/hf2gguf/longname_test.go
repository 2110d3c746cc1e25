package hf2gguf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongOutfileName: a 255-byte --outfile name (NAME_MAX) is written and
// leaves no temp file; it was refused with "file name too long" because the
// temp file's name was the output's plus ".partial-PID-RAND".
func TestLongOutfileName(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("m", 250) + ".gguf"
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(dir, name), ModelName: "tiny"}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != name {
		t.Errorf("directory holds %v, want only the output", ents)
	}
}
