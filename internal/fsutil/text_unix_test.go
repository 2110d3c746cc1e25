//go:build unix

package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe (what a shell's <(zcat x.gz) gives) is read as a stream, and
// a pipe longer than the limit fails after reading limit+1 bytes.
func TestReadTextFIFO(t *testing.T) {
	for _, tc := range []struct {
		data  string
		limit int64
		err   string
	}{{"piped text", 100, ""}, {strings.Repeat("x", 64), 10, "limit"}} {
		fifo := filepath.Join(t.TempDir(), "p")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip(err)
		}
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.WriteString(tc.data)
			f.Close()
		}()
		b, err := ReadText(fifo, nil, tc.limit)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			continue
		}
		if err != nil || string(b) != tc.data {
			t.Fatalf("got %q, %v", b, err)
		}
	}
}

// A named pipe nobody writes to fails at once instead of blocking in open.
func TestReadTextFIFONoWriter(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := ReadText(fifo, nil, 100); err == nil || !strings.Contains(err.Error(), "nothing to read") {
		t.Fatalf("err %v", err)
	}
}
