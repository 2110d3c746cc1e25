package verify

import (
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
