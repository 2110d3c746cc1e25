package outname_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/internal/outname"
)

// A repo id as model name gives a safe file name; a template in --outfile
// takes the output type.
func Example() {
	fmt.Println(outname.Stem("microsoft/BitNet-b1.58-2B-4T"))
	fmt.Println(outname.ModelName("/cache/hub/models--microsoft--bitnet-b1.58-2B-4T/snapshots/0123abcd"))
	p, _ := outname.Resolve(outname.Request{OutFile: "out/model-{ftype}.gguf", ModelName: "m", OutType: "tl2"})
	fmt.Println(p)
	// Output:
	// microsoft-BitNet-b1.58-2B-4T
	// bitnet-b1.58-2B-4T
	// out/model-tl2.gguf
}
