package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the ```sh block that follows the marker comment
// "<!-- NAME" in the repository's README.md.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- "+name)
	if i < 0 {
		t.Fatalf("README.md has no %s block", name)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("README.md: the %s marker is not followed by a ```sh block", name)
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatalf("README.md: the %s block does not end", name)
	}
	return s[:end]
}

// TestREADMEQuickStart runs the README's quick start as written, with sh,
// from a scratch directory whose testdata is the repository's, with a
// freshly built bitnet-convert first on PATH: every command exits 0 and
// both verify commands print PASS (acceptance c of issue 24).
func TestREADMEQuickStart(t *testing.T) {
	block := readmeBlock(t, "quick-start")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "bitnet-convert"), "./cmd/bitnet-convert")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	n := 0
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] != "#" {
			if f[0] != "bitnet-convert" {
				t.Fatalf("quick-start line %q is not a bitnet-convert command", line)
			}
			n++
		}
	}
	if n < 4 {
		t.Fatalf("%d commands in the quick start, want at least convert, verify, run, inspect", n)
	}
	cmd := exec.Command(sh, "-e", "-x")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(block)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("quick start: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, want := range []string{"wrote tiny-i2_s.gguf", "generated ids: ", "tiny-tq2_0.gguf"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("quick start output lacks %q:\n%s", want, out.String())
		}
	}
	if got := strings.Count(out.String(), "PASS\n"); got != 2 || strings.Contains(out.String(), "FAIL") {
		t.Errorf("quick start: %d PASS lines, want 2:\n%s", got, out.String())
	}
	for _, f := range []string{"tiny-i2_s.gguf", "tiny-tq2_0.gguf"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("quick start did not write %s: %v", f, err)
		}
	}
}
