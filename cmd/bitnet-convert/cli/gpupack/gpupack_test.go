package gpupack

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
	"github.com/bitnet-convert/bitnet-convert/torchpt"
)

const tiny = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

func TestNewCmdParses(t *testing.T) {
	o, err := clitest.Parse(NewCmd, []string{tiny, "--out", "d", "--gpu-scale-layout", "PR316", "--allow-unsupported-shape", "--force", "-v"})
	if err != nil {
		t.Fatal(err)
	}
	if o.In != tiny || o.Out != "d" || o.ScaleLayout != "PR316" || !o.AllowUnsupportedShape || !o.Force || !o.Verbose {
		t.Errorf("options %+v", o)
	}
	o, _ = clitest.Parse(NewCmd, []string{tiny, "--out", "d"})
	if o.ScaleLayout != "main" {
		t.Errorf("default layout %q", o.ScaleLayout)
	}
}

func TestNewCmdRejectsBadUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "exactly one argument"},
		{[]string{tiny}, "--out DIR is required"},
		{[]string{tiny, "--out", "d", "--gpu-scale-layout", "v2"}, "--gpu-scale-layout"},
		{[]string{tiny, "--out", "d", "--threads", "-1"}, "--threads"},
	} {
		_, err := clitest.Parse(NewCmd, c.args)
		clitest.WantUsage(t, err, c.want)
	}
}

// TestRun packs the golden tiny I2_S GGUF (4 heads, 2 KV heads: shapes
// main's kernel lacks) and prints one line per file.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new")
	var stdout, stderr bytes.Buffer
	err := Run(&Options{In: tiny, Out: out, ScaleLayout: "main", Stdout: &stdout, Stderr: &stderr})
	if err == nil || !strings.Contains(err.Error(), "--allow-unsupported-shape") {
		t.Fatalf("unsupported shape: %v", err)
	}
	err = Run(&Options{In: tiny, Out: out, ScaleLayout: "main", AllowUnsupportedShape: true, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "model_state_int2.pt: 27 tensors") || !strings.Contains(stderr.String(), "not in main's kernel list") {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	for _, name := range []string{"model_state_fp16.pt", "model_state_int2.pt"} {
		f, err := torchpt.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if f.Archive != strings.TrimSuffix(name, ".pt") {
			t.Errorf("archive %s", f.Archive)
		}
		f.Close()
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Errorf("output dir holds %d entries", len(ents))
	}
}
