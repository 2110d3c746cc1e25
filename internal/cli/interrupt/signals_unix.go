//go:build unix

package interrupt

import (
	"os"
	"syscall"
)

// stopSignals cancel a command on Unix: Ctrl-C, kill, and hang-up.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
