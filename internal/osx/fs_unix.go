//go:build unix

package osx

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func freeSpace(path string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func mkfifo(path string) error {
	if err := unix.Mkfifo(path, 0o644); err != nil {
		return &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return nil
}

// SIGHUP: a closed terminal or a dropped ssh session.
var terminationSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
