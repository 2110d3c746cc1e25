package flagx

import (
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// ArithUsage is the help text of the runtime commands' --arith flag
// (runtime.Options.Arith).
const ArithUsage = "arithmetic of the graph outside the matrix products: bitnet.cpp (alias bitnet), mainline (alias llama.cpp: flash attention, F16 KV cache), ik (alias ik_llama.cpp), or auto, the default: the file's home runtime (ik for IQ1_BN/IQ2_BN, mainline for Q2_0 or an arch bitnet.cpp lacks, else bitnet.cpp)"

// arithSpellings are the --arith values ArithUsage documents (compared
// case-insensitively): runtime.ParseArith accepts a few more spellings,
// which the commands refuse so that every accepted value is in --help.
var arithSpellings = []string{"bitnet.cpp", "bitnet", "mainline", "llama.cpp", "ik", "ik_llama.cpp", "auto", ""}

// CheckArith is the usage check of an --arith value: one of the spellings
// ArithUsage documents, else a usage error naming the flag and the choices.
func CheckArith(s string) error {
	if !slices.Contains(arithSpellings, strings.ToLower(strings.TrimSpace(s))) {
		return usage.Errorf("--arith: arithmetic %q: want bitnet.cpp, mainline, ik or auto (aliases: bitnet, llama.cpp, ik_llama.cpp)", s)
	}
	if _, err := runtime.ParseArith(s); err != nil {
		return usage.Errorf("--arith: %v", err)
	}
	return nil
}
