package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Shell completion offers the values of the enumerated flags (cobra's
// __complete entry point, which the generated completion scripts call), and
// codegen's help lists the presets.
func TestFlagValueCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"hf2gguf", "dir", "--outtype", ""}, []string{"i2_s", "tl1", "tl2", "f32", "f16", "bf16"}},
		{[]string{"dummy", "--preset", "bitnet"}, []string{"bitnet_b1_58-large", "bitnet_b1_58-3B"}},
		{[]string{"dummy", "--preset=bitnet"}, []string{"bitnet_b1_58-large"}},
		{[]string{"codegen", "--model", ""}, []string{"bitnet_b1_58-large"}},
		{[]string{"codegen", "--arch", ""}, []string{"tl1", "tl2"}},
		{[]string{"verify", "--pooling", ""}, []string{"mean", "cls", "last"}},
		{[]string{"embed", "--pooling", ""}, []string{"mean", "cls", "last"}},
		{[]string{"bench", "-o", ""}, []string{"md", "json", "csv"}},
	} {
		var out bytes.Buffer
		if code := Main(append([]string{"__complete"}, tc.args...), &out, &bytes.Buffer{}); code != 0 {
			t.Fatalf("%v: exit %d", tc.args, code)
		}
		got := strings.Split(out.String(), "\n")
		for _, w := range tc.want {
			found := false
			for _, g := range got {
				if g == w || strings.HasPrefix(g, w+"\t") {
					found = true
				}
			}
			if !found {
				t.Errorf("%v: completions %q lack %q", tc.args, got, w)
			}
		}
	}
	var out bytes.Buffer
	Main([]string{"codegen", "--help"}, &out, &bytes.Buffer{})
	if !strings.Contains(out.String(), "Presets (--model): ") || !strings.Contains(out.String(), "bitnet_b1_58-large") {
		t.Errorf("codegen --help does not list the presets:\n%s", out.String())
	}
}
