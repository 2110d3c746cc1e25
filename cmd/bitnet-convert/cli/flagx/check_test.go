package flagx

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
)

// TestCheckThreads: 0 and positive counts pass; a negative one is a usage
// error in the one wording every command prints.
func TestCheckThreads(t *testing.T) {
	for _, n := range []int{0, 1, 64} {
		if err := CheckThreads(n); err != nil {
			t.Errorf("CheckThreads(%d) = %v", n, err)
		}
	}
	var ue *usage.Error
	if err := CheckThreads(-2); !errors.As(err, &ue) || err.Error() != "-t/--threads -2: want an integer ≥ 0 (0 = all cores)" {
		t.Errorf("CheckThreads(-2) = %v", err)
	}
}

// TestCheckArith: every spelling --help documents is accepted (and is in
// ArithUsage), the undocumented spellings runtime.ParseArith also takes
// are refused, and so is an unknown value, as usage errors naming --arith.
func TestCheckArith(t *testing.T) {
	for _, s := range []string{"bitnet.cpp", "bitnet", "mainline", "llama.cpp", "ik", "ik_llama.cpp", "auto", "", "Mainline"} {
		if err := CheckArith(s); err != nil {
			t.Errorf("CheckArith(%q) = %v", s, err)
		}
		if s != "" && s != "Mainline" && !strings.Contains(ArithUsage, s) {
			t.Errorf("ArithUsage does not document %q", s)
		}
	}
	var ue *usage.Error
	for _, s := range []string{"default", "bitnetcpp", "ik_llama", "cuda"} {
		if err := CheckArith(s); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), `--arith: arithmetic "`+s+`": want bitnet.cpp, mainline, ik or auto`) {
			t.Errorf("CheckArith(%q) = %v", s, err)
		}
	}
}

// TestInvalidValue: pflag's strconv errors become one line naming the flag,
// the value and the range (the flag's registered one, else its type's);
// other errors pass unchanged.
func TestInvalidValue(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var th, n int
	var seed uint64
	var random bool
	var temp float64
	ThreadsVar(fs, &th)
	SeedVar(fs, &seed, &random, "seed")
	fs.IntVarP(&n, "n-predict", "n", 0, "")
	fs.Float64Var(&temp, "temp", 0, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "1,2"}, `-t/--threads "1,2": want an integer ≥ 0 (0 = all cores)`},
		{[]string{"--seed=-7"}, `-s/--seed "-7": want an integer from 0 to 18446744073709551615, or -1 for a random seed`},
		{[]string{"-n", "x"}, `-n/--n-predict "x": want an integer`},
		{[]string{"--temp", "warm"}, `--temp "warm": want a number`},
	} {
		err := InvalidValue(fs.Parse(c.args))
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if err := fs.Parse([]string{"-s", "-1"}); err != nil || !random || seed != 0 {
		t.Errorf("-s -1: %v, random %v seed %d", err, random, seed)
	}
	if err := fs.Parse([]string{"-s", "42"}); err != nil || random || seed != 42 {
		t.Errorf("-s 42: %v, random %v seed %d", err, random, seed)
	}
	other := errors.New("unknown flag: --x")
	if InvalidValue(other) != other {
		t.Error("an error other than a bad value was rewritten")
	}
}
