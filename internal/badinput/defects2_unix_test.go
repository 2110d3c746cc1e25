//go:build unix

package badinput

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalWhenTemp starts the binary on args, sends sig as soon as a temp
// file appears in dir, and returns the exit code and stderr; ok is false
// when the command ended before the signal could be sent.
func signalWhenTemp(t *testing.T, dir string, sig syscall.Signal, args ...string) (code int, stderr string, ok bool) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var eb strings.Builder
	cmd.Stderr = &eb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.After(60 * time.Second)
	for len(temps(t, dir)) == 0 {
		select {
		case <-done:
			return cmd.ProcessState.ExitCode(), eb.String(), false
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatal("no temp file within 60 s")
		case <-time.After(200 * time.Microsecond):
		}
	}
	time.Sleep(20 * time.Millisecond) // past the handler's installation
	cmd.Process.Signal(sig)
	<-done
	return cmd.ProcessState.ExitCode(), eb.String(), true
}

// TestH12KLBaseInterrupted: perplexity --kl-divergence-base installed no
// handler and left its temp file (up to 8 GiB) on SIGINT, SIGTERM and
// SIGHUP; now it stops, removes it, and exits 128 + the signal (H29).
func TestH12KLBaseInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	text := filepath.Join(t.TempDir(), "t8.txt")
	var b []byte
	for range 8 {
		b = append(b, readFile(t, pplText)...)
	}
	writeFile(t, text, b)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "b.kld")
			code, stderr, ok := signalWhenTemp(t, dir, sig, "perplexity", "-m", "../../testdata/gguf-samples/llama-2-tiny-random.gguf", "-f", text, "-c", "4096", "--kl-divergence-base", base)
			if !ok {
				t.Skipf("perplexity ended before the signal: exit %d %s", code, stderr)
			}
			if code != 128+int(sig) {
				t.Errorf("exit %d, want %d; stderr %s", code, 128+int(sig), stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, "interrupted") || !strings.Contains(last, base) {
				t.Errorf("stderr ends %q", last)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left after %v: %v", sig, ents)
			}
		})
	}
}

// TestH12RequantHangup: requant cleaned up on SIGINT and SIGTERM but not
// on SIGHUP (a closed terminal).
func TestH12RequantHangup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	src := filepath.Join(t.TempDir(), "big-f16.gguf")
	if code, _, stderr := runMain("hf2gguf", largeCheckpoint(t), "--no-vocab", "--outtype", "f16", "--outfile", src); code != 0 {
		t.Fatal(stderr)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "r.gguf")
	code, stderr, ok := signalWhenTemp(t, dir, syscall.SIGHUP, "requant", src, "--outtype", "f32", "--outfile", out)
	if !ok {
		t.Skipf("requant ended before the signal: exit %d %s", code, stderr)
	}
	if code != 129 {
		t.Errorf("exit %d, want 129; stderr %s", code, stderr)
	}
	checkOneLine(t, stderr, []string{"interrupted", out})
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left: %v", ents)
	}
}

// TestH13WriteErrorNamesTarget: a write that fails (here EFBIG under
// ulimit -f, as ENOSPC on a full disk) names the target once, never the
// temp file: requant and the KL base named the temp file, run's
// --dump-logits named the target three times.
func TestH13WriteErrorNamesTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"requant", func(out string) []string {
			return []string{"requant", tinyF32, "--outtype", "f32", "--outfile", out}
		}},
		{"kl base", func(out string) []string {
			return []string{"perplexity", "-m", tinyI2S, "-f", pplText, "-c", "64", "--chunks", "1", "--kl-divergence-base", out}
		}},
		{"dump-logits", func(out string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1,2", "-n", "200", "--ignore-eos", "--dump-logits", out}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "o.bin")
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 2 && exec "$0" "$@"`, bin}, c.args(out)...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			if cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1; stderr %s", cmd.ProcessState, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if n := strings.Count(last, out); n != 1 || strings.Contains(last, ".partial-") || !strings.Contains(last, "file too large") {
				t.Errorf("names the target %d times: %s", n, last)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left: %v", ents)
			}
		})
	}
}

// TestH9OutputModeFollowsUmask: every output was 0644 whatever the umask;
// it is 0666 &^ umask, as os.Create gives.
func TestH9OutputModeFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	root := t.TempDir()
	out := filepath.Join(root, "u.gguf")
	if code, _, stderr := runMain("hf2gguf", tinyDir, "--outfile", out); code != 0 {
		t.Fatal(stderr)
	}
	base := filepath.Join(root, "b.kld")
	if code, _, stderr := runMain("perplexity", "-m", tinyI2S, "-f", pplText, "-c", "64", "--chunks", "1", "--kl-divergence-base", base); code != 0 {
		t.Fatal(stderr)
	}
	for _, p := range []string{out, base} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %03o under umask 027, want 640", p, fi.Mode().Perm())
		}
	}
}

// TestH3TwoWritersOneOutput: two conversions to one output without --force
// both exited 0 and one result was silently replaced. Now exactly one
// succeeds and the other fails with "exists", whether it loses at the
// start (the check) or at the end (the no-replace rename).
func TestH3TwoWritersOneOutput(t *testing.T) {
	for round := range 3 {
		out := filepath.Join(t.TempDir(), "same.gguf")
		codes := make([]int, 2)
		errs := make([]string, 2)
		done := make(chan struct{})
		for i, args := range [][]string{
			{"hf2gguf", "../../testdata/golden/b158-h512/hf", "--outfile", out},
			{"hf2gguf", tinyDir, "--outtype", "f32", "--outfile", out},
		} {
			go func() {
				codes[i], _, errs[i] = runMain(args...)
				done <- struct{}{}
			}()
		}
		<-done
		<-done
		ok, exists := 0, 0
		for i := range codes {
			if codes[i] == 0 {
				ok++
			} else if codes[i] == 1 && strings.Contains(errs[i], "exists") {
				exists++
			}
		}
		if ok != 1 || exists != 1 {
			t.Errorf("round %d: exit codes %v, stderr %q", round, codes, errs)
		}
	}
}
