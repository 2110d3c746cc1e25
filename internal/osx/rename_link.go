//go:build !windows

package osx

import (
	"errors"
	"io/fs"
	"os"
)

// renameByLink is RenameNoReplace with link(2) and unlink: a hard link
// fails with EEXIST when newpath exists. Filesystems without hard links get
// the check-then-rename fallback.
func renameByLink(oldpath, newpath string) error {
	err := os.Link(oldpath, newpath)
	if err == nil {
		os.Remove(oldpath)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	if _, serr := os.Lstat(newpath); serr == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return rename(oldpath, newpath)
}
