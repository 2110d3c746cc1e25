package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// idRE matches BR-NN and NC-NN case ids.
	idRE = regexp.MustCompile(`\b(BR|NC)-\d+\b`)
	// defectRE matches a cited campaign defect: "defect D7", "Defect D2".
	defectRE = regexp.MustCompile(`\b[Dd]efects? (D\d+)\b`)
	// sectionRE matches a spec section, optionally preceded by the spec's
	// name: "conversion.md §7.2", "codegen spec §4.2", "spec §5.5", "§3.1".
	sectionRE = regexp.MustCompile(`(?:\b(conversion|codegen|runtime)(?:\.md)?(?: spec)?,? )?§ ?(\d+(?:\.\d+)*)`)
)

// glossaryKeys returns the first cell of every table row of glossary.md.
func glossaryKeys(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("glossary.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(line, "| ") {
			keys[strings.TrimSpace(cells[1])] = true
		}
	}
	return keys
}

// missing returns, for one line of Go source, the cited ids the glossary
// lacks. A section cited with its spec's name needs that exact row
// ("codegen §4.2"); a bare one needs a row for the number in any spec.
func missing(line string, keys map[string]bool, sections map[string]bool) []string {
	var out []string
	for _, id := range idRE.FindAllString(line, -1) {
		if !keys[id] {
			out = append(out, id)
		}
	}
	for _, m := range defectRE.FindAllStringSubmatch(line, -1) {
		if !keys[m[1]] {
			out = append(out, m[1])
		}
	}
	for _, m := range sectionRE.FindAllStringSubmatch(line, -1) {
		spec, num := m[1], m[2]
		switch {
		case spec != "" && !keys[spec+" §"+num]:
			out = append(out, spec+" §"+num)
		case spec == "" && !sections[num]:
			out = append(out, "§"+num)
		}
	}
	return out
}

// sectionNumbers returns the section numbers of the glossary's "<spec> §N" rows.
func sectionNumbers(keys map[string]bool) map[string]bool {
	nums := map[string]bool{}
	for k := range keys {
		if _, num, ok := strings.Cut(k, " §"); ok {
			nums[num] = true
		}
	}
	return nums
}

func TestMissingFindsUnknownIDs(t *testing.T) {
	keys := map[string]bool{"D7": true, "BR-06": true, "NC-03": true, "conversion §2.4": true, "codegen §4.2": true}
	sections := sectionNumbers(keys)
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"// BR-06 and NC-03 (spec §2.4; codegen.md §4.2)", nil},
		{"// BR-99, see conversion spec §2.4 and §9.9", []string{"BR-99", "§9.9"}},
		{"// codegen.md §2.4 (only conversion has it)", []string{"codegen §2.4"}},
		{"// runtime spec §1", []string{"runtime §1"}},
		{"x := \"NC-7\" // NC-03", []string{"NC-7"}},
		{"// BR-066 is not BR-06", []string{"BR-066"}},
		{"// defect D7 and Defect D99; D98 alone is not a citation", []string{"D99"}},
	} {
		got := missing(tc.line, keys, sections)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("missing(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// Every BR-, NC-, § and defect Dn id cited in a .go file of the module has its line in
// glossary.md.
func TestGlossaryCoversCitedIDs(t *testing.T) {
	keys := glossaryKeys(t)
	sections := sectionNumbers(keys)
	if len(keys) < 50 || len(sections) < 20 {
		t.Fatalf("glossary.md has only %d rows (%d sections); is the table format intact?", len(keys), len(sections))
	}
	var errs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		// This file's own table cites made-up ids on purpose.
		if d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Base(path) == "glossary_test.go" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			for _, id := range missing(sc.Text(), keys, sections) {
				errs = append(errs, filepath.ToSlash(path)+":"+strconv.Itoa(n)+": "+id)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s is cited but has no line in docs/glossary.md (add it with its public source, or replace the id by the fact)", e)
	}
}
