package badinput

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDiskFullTmpfs converts the tiny checkpoint (a 570 KB I2_S file) onto
// a 200 KB tmpfs: the write fails midway with ENOSPC, and the command must
// exit 1 with one line naming the output, leaving the filesystem empty. It
// needs mount(2) (root in a sandbox that allows it); TestFileSizeLimit and
// TestFailingWriter cover the same failure everywhere else.
func TestDiskFullTmpfs(t *testing.T) {
	root := t.TempDir()
	fsDir := filepath.Join(root, "small")
	if err := os.Mkdir(fsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", fsDir, "tmpfs", 0, "size=200k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); disk full is covered by TestFileSizeLimit", err)
	}
	t.Cleanup(func() { syscall.Unmount(fsDir, syscall.MNT_DETACH) })
	m := copyTiny(t, filepath.Join(root, "m"))
	out := filepath.Join(fsDir, "x.gguf")
	before := snapshot(t, root)
	code, _, stderr := runMain("hf2gguf", m, "--outfile", out)
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr %s", code, stderr)
	}
	checkOneLine(t, stderr, []string{out, "no space left on device"})
	if d := diffSnapshots(before, snapshot(t, root)); d != "" {
		t.Errorf("the run changed the tree: %s", d)
	}
}

// TestH19DryRunReadOnly: --dry-run "fails as the real run would", but
// passed for an output on a read-only filesystem that the real run cannot
// create; it probes the directory now.
func TestH19DryRunReadOnly(t *testing.T) {
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_RDONLY, "size=64k"); err != nil {
		t.Skipf("cannot mount a read-only tmpfs here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(ro, syscall.MNT_DETACH) })
	for _, args := range [][]string{
		{"hf2gguf", tinyDir, "--dry-run", "--outfile", filepath.Join(ro, "x.gguf")},
		{"requant", tinyF32, "--outtype", "f16", "--dry-run", "--outfile", filepath.Join(ro, "x.gguf")},
	} {
		code, _, stderr := runMain(args...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1; stderr %s", args[0], code, stderr)
		}
		if !strings.Contains(stderr, "read-only file system") || !strings.Contains(stderr, filepath.Join(ro, "x.gguf")) {
			t.Errorf("%s: stderr %q", args[0], stderr)
		}
	}
}
