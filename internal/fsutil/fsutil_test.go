package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

func TestCheckRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	linkFifo := filepath.Join(dir, "link-fifo")
	if err := os.Symlink(fifo, linkFifo); err != nil {
		t.Fatal(err)
	}
	linkReg := filepath.Join(dir, "link-reg")
	if err := os.Symlink(reg, linkReg); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string // "" ok; else substring of the error
		notRegular bool
		notExist   bool
	}{
		{"regular", reg, "", false, false},
		{"symlink to regular", linkReg, "", false, false},
		{"fifo", fifo, "fifo is a named pipe (FIFO), not a regular file", true, false},
		{"symlink to fifo", linkFifo, "link-fifo is a named pipe (FIFO)", true, false},
		{"directory", dir, "is a directory, not a regular file", true, false},
		{"char device", "/dev/null", "/dev/null is a character device", true, false},
		{"missing", filepath.Join(dir, "nope"), "no such file", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for fn, f := range map[string]func(string) error{
				"CheckRegular": CheckRegular,
				"ReadFile":     func(p string) error { _, err := ReadFile(p); return err },
				"Open": func(p string) error {
					f, err := Open(p)
					if err == nil {
						f.Close()
					}
					return err
				},
				"ReadFileFS": func(p string) error {
					_, err := ReadFileFS(os.DirFS(filepath.Dir(p)), filepath.Base(p))
					return err
				},
			} {
				err := f(tc.path)
				if tc.want == "" {
					if err != nil {
						t.Errorf("%s: %v", fn, err)
					}
					continue
				}
				if err == nil {
					t.Fatalf("%s: no error", fn)
				}
				if fn != "ReadFileFS" && !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %q, want it to contain %q", fn, err, tc.want)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: error spans lines: %q", fn, err)
				}
				if got := errors.Is(err, ErrNotRegular); got != tc.notRegular {
					t.Errorf("%s: errors.Is(ErrNotRegular) = %v, want %v", fn, got, tc.notRegular)
				}
				if got := errors.Is(err, fs.ErrNotExist); got != tc.notExist {
					t.Errorf("%s: errors.Is(ErrNotExist) = %v, want %v", fn, got, tc.notExist)
				}
			}
		})
	}
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(reg, []byte("hello world"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadText(reg, nil, 100); err != nil || string(b) != "hello world" {
		t.Fatalf("regular: %q %v", b, err)
	}
	if _, err := ReadText(reg, nil, 5); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("regular over the limit: %v", err)
	}
	if b, err := ReadText("-", strings.NewReader("from stdin"), 100); err != nil || string(b) != "from stdin" {
		t.Fatalf("stdin: %q %v", b, err)
	}
	if _, err := ReadText("-", strings.NewReader("0123456789"), 4); err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Fatalf("stdin over the limit: %v", err)
	}
	if _, err := ReadText(dir, nil, 100); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("directory: %v", err)
	}
}
