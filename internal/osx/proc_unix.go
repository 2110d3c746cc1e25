//go:build unix

package osx

import (
	"errors"
	"syscall"
)

// processAlive: signal 0 checks without sending anything; EPERM means the
// process exists but belongs to another user.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
