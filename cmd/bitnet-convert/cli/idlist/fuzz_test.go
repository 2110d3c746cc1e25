package idlist

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary --ids values to Parse: it must never panic,
// an accepted list holds only ids in [0, 2^31), and printing the ids back as
// a comma list parses to the same ids (issue 7: every CLI list argument is
// fuzzed).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1,2,3", "", "  ", " 7 , 8", "1,,2", "-1", "2147483647", "2147483648", "0x10", "1,2,", "١", "+5", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := Parse(s)
		if err != nil {
			if ids != nil {
				t.Fatalf("%q: error %v together with ids %v", s, err, ids)
			}
			return
		}
		if strings.TrimSpace(s) == "" {
			t.Fatalf("blank %q accepted", s)
		}
		if len(ids) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d ids for %d items", s, len(ids), strings.Count(s, ",")+1)
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			if id < 0 {
				t.Fatalf("negative id %d from %q", id, s)
			}
			parts[i] = strconv.Itoa(int(id))
		}
		again, err := Parse(strings.Join(parts, ","))
		if err != nil || len(again) != len(ids) {
			t.Fatalf("round trip of %v: %v, %v", ids, again, err)
		}
		for i := range ids {
			if again[i] != ids[i] {
				t.Fatalf("round trip of %v: %v", ids, again)
			}
		}
	})
}
