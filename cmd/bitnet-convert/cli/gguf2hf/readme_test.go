package gguf2hf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMERoundTrip runs the README's gguf2hf-roundtrip block as written
// (from a scratch directory, the bundled testdata/ paths made absolute):
// every command exits 0 and every verify prints PASS.
func TestREADMERoundTrip(t *testing.T) {
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- gguf2hf-roundtrip")
	if i < 0 {
		t.Fatal("README.md has no gguf2hf-roundtrip block")
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	end := strings.Index(s[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("README.md: the gguf2hf-roundtrip marker is not followed by a ```sh block")
	}
	testdata, err := filepath.Abs("../../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	n, verifies := 0, 0
	for _, line := range strings.Split(s[start+6:start+6+end], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		args := strings.Fields(line)
		if args[0] != "bitnet-convert" {
			t.Fatalf("README block line %q is not a bitnet-convert command", line)
		}
		for j, a := range args {
			if strings.HasPrefix(a, "testdata/") {
				args[j] = filepath.Join(testdata, strings.TrimPrefix(a, "testdata/"))
			}
		}
		code, o, stderr := runMain(args[1:]...)
		if code != 0 || (args[1] == "verify" && !strings.HasSuffix(o, "PASS\n")) {
			t.Fatalf("%s: exit %d:\n%s%s", line, code, o, stderr)
		}
		if args[1] == "verify" {
			verifies++
		}
		n++
	}
	if n < 5 || verifies < 2 {
		t.Errorf("%d commands (%d verify) in the block, want the round trip (5, 2 verify)", n, verifies)
	}
}
