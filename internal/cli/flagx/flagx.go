// Package flagx holds the flag conventions shared by the commands: one
// meaning of --threads everywhere (0 = every core, as hf2gguf always had),
// and optional numeric flags whose help shows no sentinel default.
package flagx

import (
	goruntime "runtime"
	"strconv"

	"github.com/spf13/pflag"
)

// ThreadsUsage is the help text of every --threads flag.
const ThreadsUsage = "goroutines per matrix product or tensor, 0 = all cores (results do not depend on it)"

// Threads resolves a --threads value: 0 means runtime.GOMAXPROCS(0).
// Negative values are rejected by the commands before this is called.
func Threads(n int) int {
	if n == 0 {
		return goruntime.GOMAXPROCS(0)
	}
	return n
}

// OptFloat is a float64 flag that may be left unset: its help shows no
// "(default …)" and Set records that it was given. The value it writes
// stays at its initial value (e.g. -1, "keep the default") until set.
type OptFloat struct {
	dst *float64
	set bool
}

// NewOptFloat registers an optional float flag writing to dst.
func NewOptFloat(fs *pflag.FlagSet, dst *float64, name, usage string) *OptFloat {
	o := &OptFloat{dst: dst}
	fs.Var(o, name, usage)
	return o
}

// String is the current value, "" when unset (so pflag prints no default).
func (o *OptFloat) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatFloat(*o.dst, 'g', -1, 64)
}

// Set parses a float64 (strconv.ParseFloat rules, so "NaN" parses; the
// commands range-check the value).
func (o *OptFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*o.dst, o.set = v, true
	return nil
}

// Type names the value in help ("float").
func (o *OptFloat) Type() string { return "float" }

// FromLayoutUsage is the help text of the runtime commands' --from-layout
// flag (runtime.Options.I2SLayout).
const FromLayoutUsage = "I2_S layout of a file that does not record one (bitnet.cpp's own ARM or 1x4 files): x86, arm, x86-1x4 (default: the file's bitnet_convert.i2s_layout, else x86; a value other than the recorded layout is a usage error)"
