//go:build !unix

package badinput

import (
	"testing"
	"time"
)

// peakRSS needs wait4's ru_maxrss, which this OS does not report.
func peakRSS(t *testing.T, _ ...string) (uint64, time.Duration) {
	t.Helper()
	t.Skip("no peak RSS (ru_maxrss) on this platform")
	return 0, 0
}
