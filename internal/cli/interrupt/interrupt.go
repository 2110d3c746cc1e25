// Package interrupt gives the long-running commands (hf2gguf, dummy) one
// context that is cancelled by the signals that mean "stop": Ctrl-C,
// SIGTERM, and SIGHUP where it exists (a closed terminal or a dropped ssh
// session, defect D10), so the command removes its temp file on each of them.
// The signal list is per OS (signals_unix.go, signals_other.go).
package interrupt

import (
	"context"
	"os/signal"
)

// NotifyContext returns a copy of parent cancelled when one of the stop
// signals arrives, and the function that stops listening (as
// signal.NotifyContext).
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, stopSignals...)
}
