package cli

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
)

// TestSummariesShareOneShape (H31): hf2gguf and requant print the same two
// summary lines: the file, arch and target runtime, output type, tensor and
// KV counts, time; then the tensors per type with human-readable sizes.
func TestSummariesShareOneShape(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a.gguf"), filepath.Join(tmp, "b.gguf")
	shape := regexp.MustCompile(`^wrote (\S+): arch \S+ for (bitnet\.cpp|llama\.cpp|ik_llama\.cpp), outtype \S+, \d+ tensors, \d+ KVs in \d+\.\d\ds\n` +
		`tensors: ([A-Z0-9_]+ \d+ \(\d+(\.\d+)? (B|KiB|MiB|GiB)\)(, )?)+; data \d+(\.\d+)? (B|KiB|MiB|GiB)\n$`)
	for _, c := range []struct {
		args    []string
		out, rt string
	}{
		{[]string{"hf2gguf", golden, "--outfile", a}, a, "bitnet.cpp"},
		{[]string{"requant", a, b, "TQ2_0"}, b, "llama.cpp"},
	} {
		var out, errb bytes.Buffer
		if code := Main(c.args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
		m := shape.FindStringSubmatch(out.String())
		if m == nil || m[1] != c.out || m[2] != c.rt {
			t.Errorf("%v: summary\n%s\ndoes not have the shared shape (file %s, for %s)", c.args, out.String(), c.out, c.rt)
		}
	}
}
