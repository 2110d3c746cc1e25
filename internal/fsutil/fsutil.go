package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular marks a path that exists but is not a regular file (a FIFO,
// device, socket or directory); errors from CheckRegular and the readers here
// wrap it.
var ErrNotRegular = errors.New("not a regular file")

// CheckRegular returns nil when path names a regular file, following
// symlinks (os.Stat). A path that exists but is a FIFO, device, socket or
// directory gives a one-line error wrapping ErrNotRegular that names path and
// its kind; a missing or unreadable path gives the *fs.PathError of os.Stat
// (so errors.Is(err, fs.ErrNotExist) still works). It never opens path.
func CheckRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, fi)
}

// ReadFile is os.ReadFile after CheckRegular: it returns the content of the
// regular file at path, or CheckRegular's error without opening path.
func ReadFile(path string) ([]byte, error) {
	if err := CheckRegular(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Open is os.Open after CheckRegular.
func Open(path string) (*os.File, error) {
	if err := CheckRegular(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// CheckRegularFS is CheckRegular for name inside fsys (fs.Stat; os.DirFS
// follows symlinks). Errors name name as given.
func CheckRegularFS(fsys fs.FS, name string) error {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return err
	}
	return regular(name, fi)
}

// ReadFileFS is fs.ReadFile after CheckRegularFS.
func ReadFileFS(fsys fs.FS, name string) ([]byte, error) {
	if err := CheckRegularFS(fsys, name); err != nil {
		return nil, err
	}
	return fs.ReadFile(fsys, name)
}

// regular turns a non-regular mode into the error naming path.
func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, %w; point the tool at a regular file", path, kind(m), ErrNotRegular)
}

// kind names the file type of m for error messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// SameFile reports whether a and b both exist and are the same file
// (os.SameFile of their Stat, so symbolic and hard links count). An empty
// path, "-" (standard input) or a path that cannot be read is no file.
// Commands use it to refuse an output that is one of their inputs (defect
// H2: --force replaced the --metadata file it had just read).
func SameFile(a, b string) bool {
	if a == "" || b == "" || a == "-" || b == "-" {
		return false
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}
