package badinput

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	largeGGUFOnce sync.Once
	largeGGUF     string
	largeGGUFErr  string
)

// largeGGUFFile converts largeCheckpoint once per test run to a GGUF (no
// vocabulary) for the commands that read one.
func largeGGUFFile(t *testing.T) string {
	t.Helper()
	m := largeCheckpoint(t)
	largeGGUFOnce.Do(func() {
		dir, err := os.MkdirTemp("", "badinput-large-gguf-")
		if err != nil {
			largeGGUFErr = err.Error()
			return
		}
		largeGGUF = filepath.Join(dir, "large.gguf")
		if code, _, stderr := runMain("hf2gguf", m, "--outfile", largeGGUF, "--no-vocab", "--force"); code != 0 {
			largeGGUFErr = stderr
		}
	})
	if largeGGUFErr != "" {
		t.Fatalf("hf2gguf of the large checkpoint: %s", largeGGUFErr)
	}
	return largeGGUF
}

// partialDirData reports whether parent holds a ".<base>.partial-*"
// directory with a file of more than 1 MiB: gguf2hf is writing a shard.
func partialDirData(parent, base string) bool {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "."+base+".partial-") {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(parent, e.Name()))
		for _, f := range files {
			if fi, err := f.Info(); err == nil && fi.Size() > 1<<20 {
				return true
			}
		}
	}
	return false
}

// TestInterruptGGUF2HF sends SIGINT, SIGTERM and SIGHUP to gguf2hf while it
// writes a shard into its temp folder: like hf2gguf it exits 128 + the
// signal's number with one line saying the folder was not written, and
// removes the temp folder (hostile run: SIGINT/SIGTERM exited 1, SIGHUP
// exited 129 silently and left ".o.partial-PID-RAND/" behind).
func TestInterruptGGUF2HF(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	bin := buildBinary(t)
	in := largeGGUFFile(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "o")
			reset := func() { os.RemoveAll(out) }
			ready := func() bool { return partialDirData(parent, "o") }
			st, stderr := startAndSignalWhen(t, bin, ready, sig, reset, "gguf2hf", in, "--out", out, "--threads", "1")
			if st.ExitCode() != 128+int(sig) {
				t.Fatalf("exit %v after %v, want %d; stderr %s", st, sig, 128+int(sig), stderr)
			}
			checkOneLine(t, stderr, []string{"interrupted", out})
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("files left after %v: %v", sig, ents)
			}
		})
	}
}

// TestInterruptGPUPack sends SIGINT to gpu-pack while it writes into an
// --out folder it created: it exits 130 and removes the folder, leaving no
// output at all (hostile run: an empty folder was left); a folder that
// existed before is kept.
func TestInterruptGPUPack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	bin := buildBinary(t)
	m := largeCheckpoint(t)
	for _, existed := range []bool{false, true} {
		name := "new folder"
		if existed {
			name = "existing folder"
		}
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "pack")
			reset := func() {
				os.RemoveAll(out)
				if existed {
					if err := os.Mkdir(out, 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			reset()
			ready := func() bool { return tempDataIn(t, out) }
			st, stderr := startAndSignalWhen(t, bin, ready, syscall.SIGINT, reset, "gpu-pack", m, "--out", out, "--threads", "1", "--allow-unsupported-shape")
			if st.ExitCode() != 130 {
				t.Fatalf("exit %v after SIGINT, want 130; stderr %s", st, stderr)
			}
			ents, _ := os.ReadDir(parent)
			switch {
			case !existed && len(ents) != 0:
				t.Errorf("left after SIGINT: %v", ents)
			case existed:
				if len(ents) != 1 {
					t.Errorf("the existing --out folder is gone or joined: %v", ents)
				} else if files, _ := os.ReadDir(out); len(files) != 0 {
					t.Errorf("files left in the --out folder: %v", files)
				}
			}
		})
	}
}
