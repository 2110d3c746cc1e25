package badinput

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

var (
	largeOnce sync.Once
	largeDir  string
	largeErr  error
)

// largeCheckpoint generates, once per test run, a bitnet_b1_58-large-shaped
// checkpoint (hidden 1536, ffn 4096, bf16 master weights) cut to one layer
// and a 4096-token embedding: about 70 MB, enough that converting it with
// one thread takes a moment to kill. It has no tokenizer (convert with
// --no-vocab).
func largeCheckpoint(t *testing.T) string {
	t.Helper()
	largeOnce.Do(func() {
		var p presets.Model
		p, largeErr = presets.Get("bitnet_b1_58-large")
		if largeErr != nil {
			return
		}
		largeDir, largeErr = os.MkdirTemp("", "badinput-large-")
		if largeErr != nil {
			return
		}
		_, largeErr = dummy.Generate(context.Background(), largeDir, dummy.Options{Config: p.Config, Layers: 1, VocabSize: 4096, Seed: 7})
	})
	if largeErr != nil {
		t.Fatal(largeErr)
	}
	return largeDir
}

// temps returns the atomicfile temp files in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// startAndSignal starts the binary on args (GOMAXPROCS=1, so the 20 MB
// write takes a while) and sends sig once a temp file in outDir holds more
// than 1 MiB: the converter is writing tensor data. It returns the process
// state and stderr. On a loaded machine the poller may miss the window and
// the conversion complete first; then reset restores outDir and it tries
// again, up to 5 times.
func startAndSignal(t *testing.T, bin, outDir string, sig syscall.Signal, reset func(), args ...string) (*os.ProcessState, string) {
	t.Helper()
	return startAndSignalWhen(t, bin, func() bool { return tempDataIn(t, outDir) }, sig, reset, args...)
}

// tempDataIn reports whether dir holds a temp file with more than 1 MiB.
func tempDataIn(t *testing.T, dir string) bool {
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	if ts := temps(t, dir); len(ts) > 0 {
		if fi, err := os.Stat(filepath.Join(dir, ts[0])); err == nil && fi.Size() > 1<<20 {
			return true
		}
	}
	return false
}

// startAndSignalWhen is startAndSignal with the moment to send sig given
// by ready, polled while the process runs.
func startAndSignalWhen(t *testing.T, bin string, ready func() bool, sig syscall.Signal, reset func(), args ...string) (*os.ProcessState, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		st, stderr, ok := trySignal(t, bin, ready, sig, args...)
		if ok {
			return st, stderr
		}
		if attempt == 5 {
			t.Fatalf("the conversion ended %d times before it could be signalled while writing; stderr %s", attempt, stderr)
		}
		t.Logf("attempt %d: the conversion ended before the signal (%v); again", attempt, st)
		reset()
	}
}

func trySignal(t *testing.T, bin string, ready func() bool, sig syscall.Signal, args ...string) (*os.ProcessState, string, bool) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case <-done:
			return cmd.ProcessState, stderr.String(), false
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatal("no temp file with data appeared within 60 s")
		default:
		}
		if ready() {
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	<-done
	if cmd.ProcessState.ExitCode() == 0 {
		// The signal came after the output was committed (the last
		// tensor is written in milliseconds since the converter streams
		// bf16 to I2_S directly): a finished conversion, not an
		// interrupted one. Try again.
		return cmd.ProcessState, stderr.String(), false
	}
	return cmd.ProcessState, stderr.String(), true
}

// TestKillWhileWriting kills hf2gguf with SIGKILL while it writes the GGUF
// (a temp file beside the target already holds data): the target holds
// nothing, or with --force the previous file byte for byte, never a partial
// file; the recognisable temp file is left behind, and the next run removes
// it and writes a complete GGUF.
func TestKillWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	bin := buildBinary(t)
	m := largeCheckpoint(t)
	for _, previous := range []bool{false, true} {
		name := "no previous file"
		if previous {
			name = "previous file with --force"
		}
		t.Run(name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "x.gguf")
			args := []string{"hf2gguf", m, "--outfile", out, "--threads", "1", "--no-vocab"}
			old := []byte("GGUF the previous, complete file")
			if previous {
				args = append(args, "--force")
			}
			reset := func() {
				os.Remove(out)
				if previous {
					writeFile(t, out, old)
				}
			}
			reset()
			st, _ := startAndSignal(t, bin, outDir, syscall.SIGKILL, reset, args...)
			if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("process was not killed by SIGKILL: %v", st)
			}
			got, err := os.ReadFile(out)
			switch {
			case previous && !bytes.Equal(got, old):
				t.Fatalf("target changed after the kill (%d bytes, %v)", len(got), err)
			case !previous && !errors.Is(err, os.ErrNotExist):
				t.Fatalf("target exists after the kill (%d bytes, %v)", len(got), err)
			}
			left := temps(t, outDir)
			if len(left) != 1 || !strings.HasPrefix(left[0], ".x.gguf.partial-") {
				t.Fatalf("want one recognisable temp file left by the kill, got %q", left)
			}
			// The next run removes the leftover and succeeds.
			code, stdout, stderr := runMain(args...)
			if code != 0 {
				t.Fatalf("second run: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, out) {
				t.Errorf("summary does not name the output: %q", stdout)
			}
			if left := temps(t, outDir); len(left) != 0 {
				t.Errorf("temp files remain after the second run: %q", left)
			}
			checkComplete(t, m, out)
		})
	}
}

// checkComplete parses out and checks it holds every planned tensor of the
// checkpoint m with its full size.
func checkComplete(t *testing.T, m, out string) {
	t.Helper()
	ckpt, err := hf.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	defer ckpt.Close()
	plan, err := convert.NewPlan(ckpt, convert.Options{NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(out)
	if err != nil {
		t.Fatalf("output is not a readable GGUF: %v", err)
	}
	defer f.Close()
	if len(f.Tensors) != len(plan.Tensors) {
		t.Fatalf("output has %d tensors, the plan %d", len(f.Tensors), len(plan.Tensors))
	}
	for _, pt := range plan.Tensors {
		d, err := f.TensorData(pt.GGUFName)
		if err != nil || uint64(len(d)) != pt.Bytes {
			t.Errorf("tensor %s: %d bytes, planned %d (%v)", pt.GGUFName, len(d), pt.Bytes, err)
		}
	}
}

// TestInterruptWhileWriting sends SIGINT (Ctrl-C), SIGTERM and SIGHUP (a
// closed terminal, defect D10) to hf2gguf while it writes: it exits 128 +
// the signal's number (130, 143, 129, as a shell reports a killed process;
// it was 1, defect H29) with one line saying the output was not written,
// and removes its temp file itself.
func TestInterruptWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	bin := buildBinary(t)
	m := largeCheckpoint(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "x.gguf")
			reset := func() { os.Remove(out) }
			st, stderr := startAndSignal(t, bin, outDir, sig, reset, "hf2gguf", m, "--outfile", out, "--threads", "1", "--no-vocab")
			if st.ExitCode() != 128+int(sig) {
				t.Fatalf("exit %v after %v, want %d; stderr %s", st, sig, 128+int(sig), stderr)
			}
			checkOneLine(t, stderr, []string{"interrupted", out})
			if ents, _ := os.ReadDir(outDir); len(ents) != 0 {
				t.Errorf("files left after %v: %v", sig, ents)
			}
		})
	}
}

// TestCleanLeftovers checks the naming contract the kill test relies on:
// atomicfile.Create removes earlier ".<base>.partial-*" files of the same
// target, and only those.
func TestCleanLeftovers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "x.gguf")
	for _, n := range []string{".x.gguf.partial-123", ".x.gguf.partial-9", ".y.gguf.partial-1", "x.gguf.partial-1", ".x.gguf"} {
		writeFile(t, filepath.Join(dir, n), []byte(n))
	}
	f, err := atomicfile.Create(target, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".x.gguf .y.gguf.partial-1 x.gguf.partial-1" {
		t.Errorf("after Create+Abort the directory holds %q", got)
	}
}
