//go:build unix && !linux

package osx

import "golang.org/x/sys/unix"

// anonMemory maps n bytes of zeroed anonymous memory; a mapping the
// kernel refuses is an error, not Go's fatal out-of-memory.
func anonMemory(n int) ([]byte, func(), error) {
	if n <= 0 {
		return nil, nil, unix.EINVAL
	}
	m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return m, func() { _ = unix.Munmap(m) }, nil
}
