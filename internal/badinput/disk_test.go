package badinput

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// TestFileSizeLimit runs the built binary under RLIMIT_FSIZE (ulimit -f),
// which root cannot exceed either: the GGUF write fails with EFBIG halfway
// (SIGXFSZ is ignored by the Go runtime), the command exits 1 with one line,
// and neither the target nor a temp file is left. With a previous file at
// the target and --force, the previous file stays as it was.
func TestFileSizeLimit(t *testing.T) {
	bin := buildBinary(t)
	for _, previous := range []bool{false, true} {
		t.Run(fmt.Sprintf("previous=%v", previous), func(t *testing.T) {
			root := t.TempDir()
			m := copyTiny(t, filepath.Join(root, "m"))
			out := filepath.Join(root, "out", "x.gguf")
			args := []string{"hf2gguf", m, "--outfile", out}
			if previous {
				writeFile(t, out, []byte("the previous file"))
				args = append(args, "--force")
			} else {
				os.MkdirAll(filepath.Dir(out), 0o755)
			}
			before := snapshot(t, root)
			// 200 blocks is 100 or 200 KB depending on the shell's block
			// size; the I2_S file is 570 KB either way.
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 200 && exec "$0" "$@"`, bin}, args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("want exit 1, got %v; stderr %s", err, stderr.String())
			}
			checkOneLine(t, stderr.String(), []string{out, "file too large"})
			if d := diffSnapshots(before, snapshot(t, root)); d != "" {
				t.Errorf("the run changed the tree: %s", d)
			}
		})
	}
	// D16: a large tensor is streamed through another write path, whose
	// error named the removed temp file instead of the target.
	t.Run("large tensor", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a 70 MB checkpoint")
		}
		m := largeCheckpoint(t)
		root := t.TempDir()
		out := filepath.Join(root, "x.gguf")
		cmd := exec.Command("sh", "-c", `ulimit -f 200 && exec "$0" "$@"`, bin, "hf2gguf", m, "--no-vocab", "--outfile", out)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("want exit 1, got %v; stderr %s", err, stderr.String())
		}
		checkOneLine(t, stderr.String(), []string{"write " + out + ": file too large"})
		if strings.Contains(stderr.String(), ".partial-") {
			t.Errorf("stderr names the temp file: %s", stderr.String())
		}
	})
}

// errDiskFull is what failAfter returns once its budget is spent.
var errDiskFull = errors.New("injected: no space left on device")

// failAfter is an io.Writer that accepts n bytes, then fails (a disk that
// fills up midway).
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errDiskFull
}

// TestFailingWriter injects a writer that fails after n bytes into
// convert.Convert at every stage of the file (magic, KVs, tensor infos, the
// first tensor, the middle, the last bytes): each returns the writer's
// error (wrapped, one line), never a panic or success.
func TestFailingWriter(t *testing.T) {
	ckpt, err := hf.Open(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ckpt.Close()
	opts := convert.Options{}
	plan, err := convert.NewPlan(ckpt, opts)
	if err != nil {
		t.Fatal(err)
	}
	var full countWriter
	if err := convert.Convert(context.Background(), ckpt, plan, &full, opts); err != nil {
		t.Fatal(err)
	}
	if full.n != 581664-32 && full.n < 500000 {
		t.Fatalf("tiny I2_S conversion wrote %d bytes", full.n)
	}
	for _, n := range []int{0, 3, 100, 4096, 60000, full.n / 2, full.n - 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			err := convert.Convert(context.Background(), ckpt, plan, &failAfter{n: n}, opts)
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("after %d of %d bytes: got %v, want the writer's error", n, full.n, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// TestCancelDuringWrite cancels the context (what Ctrl-C does in hf2gguf)
// after the third tensor is written: ConvertDir reports the interruption
// naming the output, and neither the output nor a temp file remains.
func TestCancelDuringWrite(t *testing.T) {
	for _, previous := range []bool{false, true} {
		t.Run(fmt.Sprintf("previous=%v", previous), func(t *testing.T) {
			root := t.TempDir()
			m := copyTiny(t, filepath.Join(root, "m"))
			out := filepath.Join(root, "out", "x.gguf")
			os.MkdirAll(filepath.Dir(out), 0o755)
			if previous {
				writeFile(t, out, []byte("the previous file"))
			}
			before := snapshot(t, root)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			opts := convert.Options{Progress: func(done, total int, name string) {
				calls++
				if done == 3 {
					cancel()
				}
			}}
			_, err := convert.ConvertDir(ctx, m, out, previous, false, opts)
			if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), out) {
				t.Fatalf("got %v, want an interruption naming %s", err, out)
			}
			if calls < 3 || calls > 4 {
				t.Errorf("%d tensors written after cancelling at 3", calls)
			}
			if d := diffSnapshots(before, snapshot(t, root)); d != "" {
				t.Errorf("the run changed the tree: %s", d)
			}
		})
	}
}
