package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongNames: an output name of up to 255 bytes (NAME_MAX) is written,
// although ".NAME.partial-PID-RAND" would be longer: the temp name carries a
// shortened, hashed base (TempBase), always within 255 bytes and valid
// UTF-8; Clean finds the leftovers of a long name; names that fit keep
// their base as it is.
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	ascii := strings.Repeat("a", 250) + ".gguf"               // 255 bytes
	utf := strings.Repeat("é", 100) + strings.Repeat("b", 50) // 250 bytes, 2-byte runes
	for _, c := range []struct {
		base string
		same bool
	}{
		{"model.gguf", true},
		{strings.Repeat("x", maxName-1-tempSuffixMax), true},
		{strings.Repeat("x", maxName-tempSuffixMax), false},
		{ascii, false},
		{utf, false},
	} {
		tb := TempBase(c.base)
		if (tb == c.base) != c.same {
			t.Errorf("TempBase(%d bytes) = %d bytes %q; unchanged %v, want %v", len(c.base), len(tb), tb, tb == c.base, c.same)
		}
		if n := 1 + len(tb) + tempSuffixMax; n > maxName || !utf8.ValidString(tb) {
			t.Errorf("TempBase(%d bytes): temp names up to %d bytes, valid UTF-8 %v", len(c.base), n, utf8.ValidString(tb))
		}
	}
	if TempBase(ascii) == TempBase(strings.Repeat("a", 250)+".ggux") {
		t.Error("two long names with the same prefix share a temp base")
	}
	for _, base := range []string{ascii, utf} {
		p := filepath.Join(dir, base)
		if err := WriteFile(p, []byte("data"), false); err != nil {
			t.Fatalf("%d-byte name: %v", len(base), err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "data" {
			t.Fatalf("%d-byte name: read back %q, %v", len(base), b, err)
		}
		// a leftover of a killed run (pid 4194303 is above Linux's
		// pid_max) is found and removed
		stale := filepath.Join(dir, "."+TempBase(base)+tempInfix+"4194303-1")
		if err := os.WriteFile(stale, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if n := Clean(p); n != 1 {
			t.Errorf("Clean(%d-byte name) removed %d files, want 1", len(base), n)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("directory holds %d entries, want the 2 outputs", len(ents))
	}
}
