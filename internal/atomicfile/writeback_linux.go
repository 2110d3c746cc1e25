//go:build linux

package atomicfile

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to begin writing [off, off+n) of f to disk
// without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so the final fsync
// in Commit has little left to do and the disk works while the caller
// computes. Errors are ignored: Commit's fsync reports any real failure.
func startWriteback(fd uintptr, off, n int64) {
	_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
