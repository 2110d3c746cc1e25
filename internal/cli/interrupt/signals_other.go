//go:build !unix

package interrupt

import (
	"os"
	"syscall"
)

// stopSignals cancel a command elsewhere (Windows delivers Ctrl-C, Ctrl-Break
// and console close as os.Interrupt / SIGTERM).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
