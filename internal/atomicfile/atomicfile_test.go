package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

func TestCreateTargets(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "old.gguf")
	os.WriteFile(regular, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.gguf")
	os.Symlink(regular, link)
	dangling := filepath.Join(dir, "dangling.gguf")
	os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling)
	fifo := filepath.Join(dir, "fifo")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{dir, "is a directory"},
		{fifo, "not a regular file"},
		{"/dev/null", "not a regular file"},
		{dangling, "leads nowhere"},
	} {
		if err := WriteFile(tc.path, []byte("new"), true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.want)
		}
	}
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatal("/dev/null is no longer a device")
	}
	// Without overwrite an existing file is kept.
	if err := WriteFile(regular, []byte("new"), false); !errors.Is(err, ErrExists) {
		t.Errorf("existing file without overwrite: %v", err)
	}
	// Through a link: the link stays a link and its target gets the data.
	if err := WriteFile(link, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(regular); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("leftover files: %v", ents)
	}
}

// Clean removes only this target's temp files.
func TestCleanLeftovers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.gguf")
	for _, n := range []string{".m.gguf.partial-1", ".m.gguf.partial-2", ".other.gguf.partial-1", "m.gguf"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	if n := Clean(target); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	if !IsTemp(".m.gguf.partial-9") || IsTemp("m.gguf") {
		t.Error("IsTemp")
	}
}

// TestCleanKeepsLiveWrites (D8): a temp file named with the pid of a running
// process is another write in progress and survives Clean; one with the pid
// of a process that has exited, or no pid (older versions), is removed.
func TestCleanKeepsLiveWrites(t *testing.T) {
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "m.gguf")
	keep := []string{
		fmt.Sprintf(".m.gguf.partial-%d-123", live.Process.Pid),
		fmt.Sprintf(".m.gguf.partial-%d-456", os.Getpid()),
	}
	gone := []string{fmt.Sprintf(".m.gguf.partial-%d-789", dead.Process.Pid), ".m.gguf.partial-3529705008"}
	for _, n := range append(append([]string(nil), keep...), gone...) {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	if n := Clean(target); n != len(gone) {
		t.Errorf("removed %d, want %d", n, len(gone))
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("live write's temp file %s removed", n)
		}
	}
	for _, n := range gone {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("stale temp file %s kept", n)
		}
	}
	// Create names its temp file with this process's pid.
	f, err := Create(target, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if want := fmt.Sprintf(".m.gguf.partial-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(f.TempName()), want) {
		t.Errorf("temp file %s, want prefix %s", f.TempName(), want)
	}
}

// TestCommitRefusesLateTarget (H3): a target that appears after Create's
// existence check (a second writer of the same output) is not replaced
// without overwrite: Commit fails with ErrExists, the other file stays and
// no temp file is left. With overwrite it is replaced.
func TestCommitRefusesLateTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "same.gguf")
	f, err := Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("the other writer's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), p) {
		t.Errorf("Commit over a late target: %v, want %v naming %s", err, ErrExists, p)
	}
	if b, _ := os.ReadFile(p); string(b) != "the other writer's" {
		t.Errorf("the other writer's file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left: %v", ents)
	}
	g, err := Create(p, true)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("forced"))
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "forced" {
		t.Errorf("with overwrite the target holds %q", b)
	}
}
