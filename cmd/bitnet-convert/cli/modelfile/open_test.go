package modelfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

const tiny = "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

// TestOpen: the one open path of run, perplexity, bench and embed names
// the flag of each bad input, refuses a disagreeing --from-layout as a
// usage error, explains a vocab-only file, and opens a good one with the
// resolved thread count.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		o       Options
		want    string
		isUsage bool
	}{
		{"missing model", Options{Cmd: "run", Model: filepath.Join(dir, "nope.gguf")}, "-m/--model: ", false},
		{"model is a directory", Options{Cmd: "run", Model: dir}, "-m/--model: ", false},
		{"missing kernel config", Options{Cmd: "run", Model: tiny, KernelConfig: filepath.Join(dir, "k.ini")}, "--kernel-config: ", false},
		{"vocab-only", Options{Cmd: "bench", Model: "../../../../testdata/gguf-samples/ggml-vocab-llama-spm.gguf"}, "is a vocab-only GGUF", false},
	} {
		_, _, _, err := Open(c.o, runtime.Open)
		var ue *usage.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.isUsage {
			t.Errorf("%s: %v, want %q (usage error %v)", c.name, err, c.want, c.isUsage)
		}
	}
	m, f, rt, err := Open(Options{Cmd: "run", Model: tiny, Threads: 3}, runtime.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rt.Threads != 3 || m.Params.NVocab != 512 {
		t.Errorf("threads %d, vocab %d; want 3 and 512", rt.Threads, m.Params.NVocab)
	}
}
