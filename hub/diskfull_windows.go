//go:build windows

package hub

import (
	"errors"
	"syscall"
)

// isDiskFull: ERROR_HANDLE_DISK_FULL (39) and ERROR_DISK_FULL (112).
func isDiskFull(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == 39 || errno == 112)
}
