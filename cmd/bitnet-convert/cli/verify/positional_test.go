package verify

import (
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
)

// TestVerifyPositional: verify takes the file as its argument, as
// llama.cpp's tools take the model first; --gguf is kept, and both at once
// or neither is a usage error.
func TestVerifyPositional(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		gguf    string
		ref     string
		wantErr string
	}{
		{"argument", []string{"m.gguf"}, "m.gguf", "", ""},
		{"argument with --hf", []string{"m.gguf", "--hf", "dir", "-t", "2"}, "m.gguf", "", ""},
		{"--gguf kept", []string{"--gguf", "m.gguf"}, "m.gguf", "", ""},
		{"argument with --ref-gguf", []string{"--ref-gguf", "a.gguf", "b.gguf"}, "b.gguf", "a.gguf", ""},
		{"both", []string{"--gguf", "a.gguf", "b.gguf"}, "", "", "give the file to check once"},
		{"neither", []string{"--hf", "dir"}, "", "", "verify FILE (or --gguf FILE)"},
		// two files: the proof of a requant needs --ref-gguf
		{"two files", []string{"a.gguf", "b.gguf"}, "", "", "verify checks one GGUF, got a.gguf and b.gguf: to compare two files give the reference (the requant's input) with --ref-gguf: verify --ref-gguf a.gguf b.gguf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := clitest.Parse(NewCmd, c.args)
			if c.wantErr != "" {
				clitest.WantUsage(t, err, c.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GGUF != c.gguf || got.RefGGUF != c.ref {
				t.Fatalf("GGUF %q RefGGUF %q, want %q %q", got.GGUF, got.RefGGUF, c.gguf, c.ref)
			}
		})
	}
}

// TestMissingFileNamedAsGiven: a missing file given as the argument is
// named as such (it was blamed on --gguf, which the user never typed); the
// --gguf spelling keeps naming the flag.
func TestMissingFileNamedAsGiven(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.gguf")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{missing}, missing + ": no such file or directory; give the GGUF file to check"},
		{[]string{"--gguf", missing}, "--gguf: stat " + missing + ": no such file or directory"},
	} {
		o, err := clitest.Parse(NewCmd, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(o); err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
