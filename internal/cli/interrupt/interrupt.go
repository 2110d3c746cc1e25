// Package interrupt gives the long-running commands (hf2gguf, dummy) one
// context that is cancelled by the signals that mean "stop": Ctrl-C,
// SIGTERM, and SIGHUP where it exists (a closed terminal or a dropped ssh
// session, defect D10), so the command removes its temp file on each of them.
// The per-OS signal list is internal/osx.TerminationSignals.
package interrupt

import (
	"context"
	"os/signal"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// NotifyContext returns a copy of parent cancelled when one of the stop
// signals arrives, and the function that stops listening (as
// signal.NotifyContext).
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, osx.TerminationSignals()...)
}
