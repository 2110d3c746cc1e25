//go:build windows

package osx

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

func freeSpace(path string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, &os.PathError{Op: "GetDiskFreeSpaceEx", Path: path, Err: err}
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, &os.PathError{Op: "GetDiskFreeSpaceEx", Path: path, Err: err}
	}
	return avail, nil
}

// rename moves oldpath over newpath with MoveFileEx (REPLACE_EXISTING so an
// existing newpath is replaced in one step, WRITE_THROUGH so the call returns
// once the move is on disk). A virus scanner or the search indexer often
// opens a freshly written file for a moment, making the move fail with a
// sharing violation or access denied; it is retried for up to about two
// seconds.
func rename(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		if wait > time.Second || !(errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		time.Sleep(wait)
	}
}

// renameNoReplace is rename without MOVEFILE_REPLACE_EXISTING: MoveFileEx
// fails with ERROR_ALREADY_EXISTS when newpath exists.
func renameNoReplace(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_WRITE_THROUGH)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS):
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
		case wait > time.Second || !(errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)):
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		time.Sleep(wait)
	}
}

func mkfifo(path string) error {
	return &os.PathError{Op: "mkfifo", Path: path, Err: errors.ErrUnsupported}
}

// SIGTERM is what Go delivers for CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT and
// CTRL_SHUTDOWN_EVENT on Windows (see os/signal's package doc).
var terminationSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
