//go:build purego

package kernels

import "testing"

// TestImpl: the purego tag selects the references.
func TestImpl(t *testing.T) {
	if Impl() != "pure Go" {
		t.Fatalf("Impl() = %q with -tags purego, want %q", Impl(), "pure Go")
	}
	t.Logf("kernels: %s", Impl())
}
