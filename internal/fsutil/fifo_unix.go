//go:build unix

package fsutil

import (
	"os"
	"syscall"
)

// openPipe opens a named pipe for reading without blocking in open(2) when
// no writer has it open (a plain open would hang, and Ctrl-C cannot
// interrupt it). The descriptor is non-blocking, so os.NewFile hands it to
// the runtime poller: reads wait for data while a writer holds the pipe and
// return EOF once none does.
func openPipe(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
