//go:build !purego

package kernels

import (
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestImpl: without the purego tag the assembly is selected wherever the
// CPU has it, so the comparisons in this package test the assembly.
func TestImpl(t *testing.T) {
	want := "pure Go"
	switch {
	case goruntime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasF16C:
		want = "AVX2"
	case goruntime.GOARCH == "arm64":
		want = "NEON"
	}
	if !strings.Contains(Impl(), want) {
		t.Fatalf("Impl() = %q, want it to name %s", Impl(), want)
	}
	t.Logf("kernels: %s", Impl())
}
