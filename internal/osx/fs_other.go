//go:build !unix && !windows

package osx

import (
	"errors"
	"os"
)

func freeSpace(path string) (uint64, error) {
	return 0, &os.PathError{Op: "statfs", Path: path, Err: errors.ErrUnsupported}
}

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func mkfifo(path string) error {
	return &os.PathError{Op: "mkfifo", Path: path, Err: errors.ErrUnsupported}
}

var terminationSignals = []os.Signal{os.Interrupt}
