// Package progress draws the per-tensor progress bars of the commands on a
// terminal (stderr) and nothing otherwise, so pipes, logs and tests see only
// the command's output.
package progress

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (an *os.File whose descriptor
// x/term says is one).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Bar counts items (tensors, chunks) on w when enabled.
type Bar struct {
	w       io.Writer
	desc    string
	enabled bool
	bar     *progressbar.ProgressBar
}

// New returns a Bar writing to w, or one that does nothing when enabled is
// false.
func New(w io.Writer, enabled bool, desc string) *Bar {
	return &Bar{w: w, desc: desc, enabled: enabled}
}

// Step records that done of total items are finished, name being the last
// one; it matches the Progress hooks of convert.Options and dummy.Options.
func (b *Bar) Step(done, total int, name string) {
	if !b.enabled {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.desc),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	if name != "" {
		b.bar.Describe(name)
	}
	_ = b.bar.Set(done)
}

// StepBytes records that done of total bytes are written, name being the
// last tensor; it matches the ProgressBytes hooks of convert.Options and
// convert.RequantOptions. The bar shows bytes and their rate, so its
// estimate follows the data rather than the tensor count.
func (b *Bar) StepBytes(done, total uint64, name string) {
	if !b.enabled {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions64(int64(total), progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.desc),
			progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	if name != "" {
		b.bar.Describe(name)
	}
	_ = b.bar.Set64(int64(done))
}

// Finish clears the bar (if one was drawn).
func (b *Bar) Finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}
