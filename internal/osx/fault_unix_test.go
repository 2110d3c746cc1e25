//go:build unix

package osx

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestFaultError (H1): a read of a mapped file that shrank faults (SIGBUS);
// with debug.SetPanicOnFault the fault is a panic that FaultError turns into
// one line naming the file, also after the mapping was closed by the
// unwinding; a panic that is no fault in a mapping is not claimed.
func TestFaultError(t *testing.T) {
	page := os.Getpagesize()
	p := filepath.Join(t.TempDir(), "m.bin")
	if err := os.WriteFile(p, make([]byte, 3*page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Map(f, int64(3*page), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(page)); err != nil {
		t.Fatal(err)
	}
	var got any
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { got = recover() }()
		defer m.Close() // the unwinding closes the mapping before the recover
		faultSink = m.Bytes()[2*page+5]
	}()
	err = FaultError(got)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "was the file changed?") || !strings.Contains(err.Error(), "byte 8197") && page == 4096 {
		t.Errorf("FaultError(%v) = %v", got, err)
	}
	if err := FaultError("some other panic"); err != nil {
		t.Errorf("a plain panic was taken for a fault: %v", err)
	}
}

// faultSink keeps the compiler from dropping the test's read.
var faultSink byte
