package kernels

import (
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestArm64Kernels cross-compiles this package's tests for GOARCH=arm64 and
// runs them under qemu-aarch64 (Debian package qemu-user), so the NEON
// kernels are compared with the references on every run of the amd64
// tests. Skipped without qemu-aarch64 unless CI is set (then it fails).
func TestArm64Kernels(t *testing.T) {
	if testing.Short() {
		t.Skip("cross build and emulation")
	}
	if goruntime.GOARCH == "arm64" {
		t.Skip("already running on arm64")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("qemu-aarch64 not found: install Debian package qemu-user (CI is set, so this check may not be skipped)")
		}
		t.Skip("qemu-aarch64 not found (apt-get install qemu-user); set CI to make this fatal")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kernels.arm64.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go test -c: %v\n%s", err, out)
	}
	out, err := exec.Command(qemu, bin, "-test.v", "-test.run", "^Test[^A]|^Fuzz").CombinedOutput()
	if err != nil {
		t.Fatalf("arm64 kernel tests under qemu failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kernels: arm64 NEON assembly") {
		t.Fatalf("arm64 build did not select the NEON kernels:\n%s", out)
	}
	t.Logf("arm64 under qemu: NEON kernels equal the references")
}
