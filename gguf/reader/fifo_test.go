package reader

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// TestOpenNotRegular: Open refuses a FIFO, a directory and a character
// device at once, naming the path, instead of blocking or mapping it.
func TestOpenNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.gguf")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, path := range []string{fifo, dir, "/dev/zero"} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(path)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, fsutil.ErrNotRegular) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open(%s) = %v, want a not-a-regular-file error naming it", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocked", path)
		}
	}
}
