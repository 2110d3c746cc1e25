package inspect_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/inspect"
)

// Run `inspect` on bitnet.cpp's I2_S file and show the header and one I2_S
// tensor with its per-tensor scale.
func ExampleNewCmdInspect() {
	cmd := inspect.NewCmdInspect(nil)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"})
	if err := cmd.Execute(); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "version") || strings.HasPrefix(line, "data offset") || strings.Contains(line, "blk.0.attn_q.weight") {
			fmt.Println(line)
		}
	}
	// Output:
	// version:      3
	// data offset:  12896
	//   blk.0.attn_q.weight         I2_S(36)  [256, 256]  390304  16416   0.15998523
}
