package badinput

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hwm runs the binary on args and returns the largest VmHWM (the peak
// resident set of the process's own address space, in bytes) read from
// /proc/PID/status while it runs. Unlike wait4's ru_maxrss it does not
// carry the test process's own peak across the vfork and exec that start
// the child.
func hwm(t *testing.T, args ...string) uint64 {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")
	var peak uint64
	for {
		if b, err := os.ReadFile(status); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					peak = max(peak, kb<<10)
				}
			}
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, stderr.String())
			}
			return peak
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestH10RunKeepsOneRow: run kept a copy of every row of logits (32000
// floats, 125 KiB each, for this vocabulary) whether or not --dump-logits
// asked for them: 600 tokens held about 75 MB more (230 MB at -n 1500).
// It keeps only the last row now, and the dump is streamed to its file row
// by row.
func TestH10RunKeepsOneRow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const model = "../../testdata/gguf-samples/llama-2-tiny-random.gguf"
	for _, dump := range []bool{false, true} {
		args := []string{"run", "-m", model, "--ids", "1", "-n", "600", "--ignore-eos"}
		if dump {
			args = append(args, "--dump-logits", filepath.Join(t.TempDir(), "l.bin"))
		}
		rss := hwm(t, args...)
		t.Logf("dump %v: peak RSS %d MB", dump, rss>>20)
		if rss > 50<<20 {
			t.Errorf("dump %v: peak RSS %d MB, want under 50 MB", dump, rss>>20)
		}
	}
}
