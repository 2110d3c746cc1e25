// Package interrupt gives the commands that write files (hf2gguf, gguf2hf,
// gpu-pack, requant, dummy, perplexity --kl-divergence-base) one context that is cancelled by
// the signals that mean "stop": Ctrl-C, SIGTERM, and SIGHUP where it exists
// (a closed terminal or a dropped ssh session, defect D10), so the command
// removes its temp file on each of them. The per-OS signal list is
// internal/osx.TerminationSignals.
//
// The signal that stopped a command is remembered (Received) so that
// cli.Main exits with 128 + its number, as a shell reports a process
// killed by it: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP (defect
// H29), and scripts can tell an interrupt from a failure.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

var last struct {
	sync.Mutex
	sig os.Signal
}

// NotifyContext returns a copy of parent cancelled when one of the stop
// signals arrives, and the function that stops listening (as
// signal.NotifyContext). After the first signal the default action is
// restored, so a second Ctrl-C ends a command that is slow to stop.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, osx.TerminationSignals()...)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			signal.Stop(ch)
			cancel()
		})
	}
	go func() {
		select {
		case s := <-ch:
			last.Lock()
			last.sig = s
			last.Unlock()
			stop()
		case <-ctx.Done():
		}
	}()
	return ctx, stop
}

// Received returns the stop signal a NotifyContext got since the last
// Reset, or nil.
func Received() os.Signal {
	last.Lock()
	defer last.Unlock()
	return last.sig
}

// Reset forgets the received signal (cli.Main calls it at the start of
// each command line).
func Reset() {
	last.Lock()
	last.sig = nil
	last.Unlock()
}

// ExitCode returns 128 + the number of sig (130 for os.Interrupt, 143 for
// SIGTERM, 129 for SIGHUP), the status a shell reports for a process the
// signal killed; 1 for a signal without a number.
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
