package osx

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace uses renameat2(RENAME_NOREPLACE) (Linux 3.15; ext4, xfs,
// btrfs, tmpfs, …); filesystems that do not implement the flag (EINVAL) and
// kernels without the call (ENOSYS) get link(2).
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return renameByLink(oldpath, newpath)
	case errors.Is(err, unix.EEXIST):
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
}
