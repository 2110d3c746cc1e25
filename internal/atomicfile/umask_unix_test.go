//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModeFollowsUmask (H9): the committed file has mode 0666 &^ umask, as
// os.Create gives, also when it replaces a file of another mode.
func TestModeFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o002, 0o664}, {0o022, 0o644}, {0o027, 0o640}} {
		syscall.Umask(c.umask)
		for _, name := range []string{"new.gguf", "old.gguf"} {
			p := filepath.Join(dir, name)
			if name == "old.gguf" {
				os.WriteFile(p, nil, 0o600)
				os.Chmod(p, 0o755)
			}
			if err := WriteFile(p, []byte("x"), true); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != c.want {
				t.Errorf("umask %03o, %s: mode %03o, want %03o", c.umask, name, got, c.want)
			}
			os.Remove(filepath.Join(dir, "new.gguf"))
		}
	}
}
