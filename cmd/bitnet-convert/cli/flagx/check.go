package flagx

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
)

// rangeAnnotation is the pflag annotation key holding the accepted range a
// flag's help and errors name ("an integer ≥ 0 (0 = all cores)").
const rangeAnnotation = "bitnet_convert_range"

// threadsRange is what -t/--threads accepts, as CheckThreads and a value
// that is not an integer say it.
const threadsRange = "an integer ≥ 0 (0 = all cores)"

// CheckThreads is the one usage check of a -t/--threads value, shared by
// every command that registers it with ThreadsVar: a negative count is a
// usage error naming the flag and the accepted range.
func CheckThreads(n int) error {
	if n < 0 {
		return usage.Errorf("-t/--threads %d: want %s", n, threadsRange)
	}
	return nil
}

// InvalidValue rewrites pflag's error for a flag value its type cannot
// parse ("invalid argument "1,2" for "-t, --threads" flag:
// strconv.ParseInt: parsing "1,2": invalid syntax") as one usage line that
// names the flag, the value and the accepted range: the range registered
// for the flag (ThreadsVar, SeedVar), else one read from the flag's type.
// Other errors are returned unchanged.
func InvalidValue(err error) error {
	var ie *pflag.InvalidValueError
	if !errors.As(err, &ie) {
		return err
	}
	f := ie.GetFlag()
	var ne *strconv.NumError
	want := ""
	if r := f.Annotations[rangeAnnotation]; len(r) == 1 {
		want = r[0]
	} else if errors.As(err, &ne) {
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64":
			want = "an integer"
		case "uint", "uint8", "uint16", "uint32", "uint64":
			want = "an integer ≥ 0"
		case "float32", "float64":
			want = "a number"
		case "bool":
			want = "true or false"
		}
		if want != "" && errors.Is(ne.Err, strconv.ErrRange) {
			want += " in range"
		}
	}
	if want == "" {
		return err
	}
	return usage.Errorf("%s %q: want %s", FlagName(f), ie.GetValue(), want)
}

// FlagName is how messages name f: "-t/--threads" when it has a shorthand,
// else "--name".
func FlagName(f *pflag.Flag) string {
	if f.Shorthand != "" && f.ShorthandDeprecated == "" {
		return fmt.Sprintf("-%s/--%s", f.Shorthand, f.Name)
	}
	return "--" + f.Name
}

// seedRange is what -s/--seed accepts.
const seedRange = "an integer from 0 to 18446744073709551615, or -1 for a random seed"

// seedValue is the pflag.Value of -s/--seed: an unsigned 64-bit seed, or
// -1 (llama-cli's LLAMA_DEFAULT_SEED spelling, common/common.h) for a seed
// drawn at run time.
type seedValue struct {
	seed   *uint64
	random *bool
}

func (s seedValue) Set(v string) error {
	if v == "-1" {
		*s.seed, *s.random = 0, true
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return err
	}
	*s.seed, *s.random = n, false
	return nil
}

func (s seedValue) String() string {
	if s.random == nil || *s.random {
		return "-1"
	}
	return strconv.FormatUint(*s.seed, 10)
}

func (s seedValue) Type() string { return "int" }

// SeedVar registers -s/--seed as llama-cli has it: -1 (the default) asks
// for a random seed (*random is set, *seed is 0; the command draws one and
// prints it), any other value is the seed (0 to 2^64-1). A value outside
// that is a usage error naming the flag and the range (InvalidValue).
func SeedVar(f *pflag.FlagSet, seed *uint64, random *bool, usage string) {
	*random = true
	f.VarP(seedValue{seed, random}, "seed", "s", usage)
	_ = f.SetAnnotation("seed", rangeAnnotation, []string{seedRange})
}
