package requant

import (
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/clitest"
)

// TestRequantPositional: llama-quantize's "IN [OUT] TYPE" form fills
// --outfile and --outtype; the flag form is kept, and a form that gives
// one of them twice, a last argument that is no type, or llama-quantize's
// trailing thread count are usage errors that say what to give.
func TestRequantPositional(t *testing.T) {
	for _, c := range []struct {
		name             string
		args             []string
		in, out, outtype string
		wantErr          string
	}{
		{"IN OUT TYPE", []string{"a.gguf", "b.gguf", "TQ2_0"}, "a.gguf", "b.gguf", "TQ2_0", ""},
		{"IN TYPE", []string{"a.gguf", "iq2_bn"}, "a.gguf", "", "iq2_bn", ""},
		{"flags", []string{"a.gguf", "--outtype", "i2_s", "--outfile", "c.gguf"}, "a.gguf", "c.gguf", "i2_s", ""},
		{"positional with other flags", []string{"a.gguf", "b.gguf", "tq1_0", "--force"}, "a.gguf", "b.gguf", "tq1_0", ""},
		{"no arguments", nil, "", "", "", "requant needs the input GGUF"},
		{"last is no type", []string{"a.gguf", "b.gguf"}, "", "", "", `the last argument "b.gguf" is not an output type`},
		{"type twice", []string{"a.gguf", "b.gguf", "tq2_0", "--outtype", "i2_s"}, "", "", "", "give the type once"},
		{"output twice", []string{"a.gguf", "b.gguf", "tq2_0", "--outfile", "c.gguf"}, "", "", "", "give the output once"},
		{"thread count", []string{"a.gguf", "b.gguf", "tq2_0", "4"}, "", "", "", "requant has no thread count"},
		{"too many", []string{"a", "b", "c", "d", "e"}, "", "", "", "got 5 arguments"},
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
			if got.In != c.in || got.OutFile != c.out || got.OutType != c.outtype {
				t.Fatalf("In %q OutFile %q OutType %q, want %q %q %q", got.In, got.OutFile, got.OutType, c.in, c.out, c.outtype)
			}
		})
	}
}
