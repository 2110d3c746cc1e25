// Package flagx holds the flag conventions shared by the commands: one
// meaning of --threads everywhere (0 = every core, as hf2gguf always had),
// and the help text of --from-layout.
package flagx

import (
	goruntime "runtime"

	"github.com/spf13/pflag"
)

// ThreadsUsage is the help text of the -t/--threads flag of the commands
// whose output does not depend on it (everything but bench, whose output is
// the speed).
const ThreadsUsage = "goroutines per matrix product or tensor, 0 = all cores (the output does not depend on it, only the speed)"

// ThreadsVar registers -t/--threads (llama.cpp's spelling) into p with
// ThreadsUsage, on every command that computes; the command checks the
// value with CheckThreads.
func ThreadsVar(f *pflag.FlagSet, p *int) {
	f.IntVarP(p, "threads", "t", 0, ThreadsUsage)
	_ = f.SetAnnotation("threads", rangeAnnotation, []string{threadsRange})
}

// Threads resolves a --threads value: 0 means runtime.GOMAXPROCS(0).
// Negative values are rejected by CheckThreads before this is called.
func Threads(n int) int {
	if n == 0 {
		return goruntime.GOMAXPROCS(0)
	}
	return n
}

// FromLayoutUsage is the help text of the runtime commands' --from-layout
// flag (runtime.Options.I2SLayout).
const FromLayoutUsage = "I2_S layout of a file that does not record one (bitnet.cpp's own ARM or 1x4 files): x86, arm, x86-1x4 (default: the file's bitnet_convert.i2s_layout, else x86; a value other than the recorded layout is a usage error)"
