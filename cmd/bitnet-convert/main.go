// Command bitnet-convert converts BitNet b1.58 Hugging Face checkpoints to
// GGUF, generates TL1/TL2 kernels and verifies converted files. See README.md.
package main

import (
	"os"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
