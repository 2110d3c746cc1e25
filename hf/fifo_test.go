package hf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// TestOpenFIFO: a FIFO in place of config.json or a shard is an error
// naming the file, returned at once instead of blocking in open(2).
func TestOpenFIFO(t *testing.T) {
	const src = "../testdata/golden/tiny-bitnet/hf"
	for _, fifo := range []string{"config.json", "model.safetensors"} {
		t.Run(fifo, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"config.json", "model.safetensors"} {
				if name == fifo {
					if err := osx.Mkfifo(filepath.Join(dir, name)); err != nil {
						t.Skipf("mkfifo: %v", err)
					}
					continue
				}
				data, err := os.ReadFile(filepath.Join(src, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() {
				c, err := Open(dir)
				if err == nil {
					for _, ti := range c.Tensors {
						if _, err = c.Read(ti); err != nil {
							break
						}
					}
					c.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !errors.Is(err, fsutil.ErrNotRegular) && !strings.Contains(err.Error(), "not a regular file") {
					t.Fatalf("error %v, want a not-a-regular-file error", err)
				}
				if msg := err.Error(); !strings.Contains(msg, filepath.Join(dir, fifo)) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line naming %s", msg, filepath.Join(dir, fifo))
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Open blocked on FIFO %s", fifo)
			}
		})
	}
}
