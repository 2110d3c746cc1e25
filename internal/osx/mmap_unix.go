//go:build unix

package osx

import (
	"os"

	"golang.org/x/sys/unix"
)

func mmap(f *os.File, n int) ([]byte, func() error, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

func release(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
