package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/version"
)

// --version prints one line: the program, the module version (and the
// revision when the build is stamped), the toolchain and the target; the
// GGUF hf2gguf writes records the same version under bitnet_convert.version.
func TestVersion(t *testing.T) {
	want := "bitnet-convert " + version.Read().String() + "\n"
	if !strings.Contains(want, " built with go") {
		t.Fatalf("version line %q", want)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 || out.String() != want || errb.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", args, code, out.String(), errb.String(), want)
		}
	}
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	var so, se bytes.Buffer
	if code := Main([]string{"hf2gguf", golden, "--outfile", out, "--model-name", "tiny"}, &so, &se); code != 0 {
		t.Fatalf("hf2gguf: exit %d: %s", code, se.String())
	}
	checkVersionKey(t, out)
	// requant records the version too (replacing the input's record).
	tq := filepath.Join(t.TempDir(), "tiny-tq2_0.gguf")
	if code := Main([]string{"requant", out, "--outtype", "tq2_0", "--outfile", tq}, &so, &se); code != 0 {
		t.Fatalf("requant: exit %d: %s", code, se.String())
	}
	checkVersionKey(t, tq)
}

func checkVersionKey(t *testing.T, path string) {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, ok := f.Get(version.Key)
	if s, isStr := v.V.(string); !ok || !isStr || s != version.Read().GGUFValue() {
		t.Errorf("%s: %s = %v (present %v), want %q", path, version.Key, v.V, ok, version.Read().GGUFValue())
	}
}
