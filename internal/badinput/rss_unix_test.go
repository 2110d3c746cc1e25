//go:build unix

// The peak-RSS tests (memory_test.go) are Unix-only: ru_maxrss comes from
// wait4(2).

package badinput

import (
	"bytes"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// peakRSS runs the built binary on args and returns its peak resident set
// size in bytes: ru_maxrss from wait4(2), the figure /usr/bin/time -v prints
// as "Maximum resident set size" (it counts touched pages of the mmapped
// input as well as the heap).
func peakRSS(t *testing.T, args ...string) (uint64, time.Duration) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	took := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this platform")
	}
	if runtime.GOOS == "darwin" {
		return uint64(ru.Maxrss), took // macOS reports bytes
	}
	return uint64(ru.Maxrss) * 1024, took // Linux reports KiB
}
