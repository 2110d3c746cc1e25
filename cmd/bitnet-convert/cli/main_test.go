package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

const golden = "../../../testdata/golden/tiny-bitnet/hf"

// Exit codes: 0 success, 1 failure, 2 bad usage; errors are one line naming
// the file, tensor or flag.
func TestMainExitCodes(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ok", []string{"hf2gguf", golden, "--outfile", filepath.Join(tmp, "a.gguf"), "--model-name", "tiny"}, 0, ""},
		{"exists", []string{"hf2gguf", golden, "--outfile", filepath.Join(tmp, "a.gguf")}, 1, "--force"},
		{"no args", []string{"hf2gguf"}, 2, "exactly one argument"},
		{"bad outtype", []string{"hf2gguf", golden, "--outtype", "q4_0"}, 2, "--outtype"},
		{"unknown flag", []string{"hf2gguf", golden, "--frobnicate"}, 2, "frobnicate"},
		{"unknown command", []string{"frobnicate"}, 2, "frobnicate"},
		{"missing dir", []string{"hf2gguf", filepath.Join(tmp, "nope"), "--outfile", filepath.Join(tmp, "b.gguf")}, 1, "nope"},
		{"output under a file", []string{"hf2gguf", golden, "--outfile", filepath.Join(tmp, "a.gguf", "x.gguf")}, 1, "a.gguf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errb.String())
			}
			if tc.code == 0 {
				return
			}
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "bitnet-convert: ") || !strings.Contains(last, tc.msg) {
				t.Errorf("stderr %q, want one line naming %q", errb.String(), tc.msg)
			}
		})
	}
}

// A panic inside a command is a bug, but the user still gets one line naming
// the command and exit 1, never a Go stack trace.
func TestMainRecoversPanic(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append(append([]func() *cobra.Command(nil), saved...), func() *cobra.Command {
		return &cobra.Command{Use: "boom", RunE: func(_ *cobra.Command, args []string) error {
			xs := make([]int, len(args))
			xs[len(args)]++ // index out of range: a runtime panic, as a real bug would raise
			return nil
		}}
	})
	var out, errb bytes.Buffer
	code := Main([]string{"boom", "--"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	got := errb.String()
	if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, `bitnet-convert: internal error in "boom": `) || !strings.Contains(got, "bug") || strings.Contains(got, "goroutine") {
		t.Fatalf("stderr %q, want one line naming the command and calling it a bug", got)
	}
}
