package codegen

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
)

// FuzzParseList feeds arbitrary --BM/--BK/--bm values to parseList: it must
// never panic, every rejection is a usage error (exit 2) naming the flag, and
// an accepted list has one integer per comma item that prints back to the
// same list (issue 7: every CLI list argument is fuzzed).
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"256,128,256", " 96 , 192", "", ",", "1,,2", "32,", "-1", "0x20", "9223372036854775808", "1e3", "۳۲"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseList("BK", s)
		if err != nil {
			var ue *usage.Error
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v is not a usage error", s, err)
			}
			if !strings.HasPrefix(err.Error(), "--BK ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q does not start with the flag on one line", s, err)
			}
			return
		}
		if len(ns) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d numbers for %d items", s, len(ns), strings.Count(s, ",")+1)
		}
		parts := make([]string, len(ns))
		for i, n := range ns {
			parts[i] = strconv.Itoa(n)
		}
		again, err := parseList("BK", strings.Join(parts, ","))
		if err != nil || len(again) != len(ns) {
			t.Fatalf("round trip of %v: %v, %v", ns, again, err)
		}
		for i := range ns {
			if again[i] != ns[i] {
				t.Fatalf("round trip of %v: %v", ns, again)
			}
		}
	})
}
