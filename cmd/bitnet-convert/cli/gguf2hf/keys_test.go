package gguf2hf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// TestKeysContradictingTensors: a GGUF whose keys contradict its tensors
// (or that the runtime refuses) is not exported: config.json is rebuilt
// from those keys, so the checkpoint would describe another model (a
// hostile run got exit 0 and a config.json that hf2gguf then refused). One
// line naming the key, exit 1, no output.
func TestKeysContradictingTensors(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "tiny.gguf")
	mustRun(t, "hf2gguf", tinyHF, "--outfile", orig)
	for _, c := range []struct {
		name, key string
		v         gguf.Value
		want      string // what the line names (the runtime's words)
	}{
		{"kv3", "bitnet.attention.head_count_kv", gguf.Uint32(3), "3 KV heads"},
		{"rope factor 0", "bitnet.rope.scaling.factor", gguf.Float32(0), "bitnet.rope.scaling.factor"},
		{"gelu", "bitnet.hidden_activation", gguf.String("gelu"), "bitnet.hidden_activation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := testutil.WithKVs(t, orig, filepath.Join(t.TempDir(), "bad.gguf"), testutil.SetKV(c.key, c.v))
			out := filepath.Join(t.TempDir(), "export")
			code, _, errs := runMain("gguf2hf", in, "--out", out)
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q: want exit 1 and one line naming %s", code, errs, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
