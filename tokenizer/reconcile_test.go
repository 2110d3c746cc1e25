package tokenizer

import (
	"strings"
	"testing"
)

func TestReconcile(t *testing.T) {
	normal := func(s string) hfEntry { return hfEntry{text: s, typ: TypeNormal, present: true} }
	added := func(s string) hfEntry {
		return hfEntry{text: s, typ: TypeControl, score: hfScoreAdded, added: true, present: true}
	}
	for _, c := range []struct {
		name      string
		in        []hfEntry
		vocabSize int
		want      []string // token texts
		wantTypes []int32
		warn      string // substring of the single warning, "" for none
		err       string
	}{
		{"exact", []hfEntry{normal("a"), added("<s>")}, 2, []string{"a", "<s>"}, []int32{TypeNormal, TypeControl}, "", ""},
		{"keep size", []hfEntry{normal("a"), {}, normal("b")}, 0, []string{"a", "[PAD1]", "b"}, []int32{TypeNormal, TypeUnused, TypeNormal}, "", ""},
		{"pad", []hfEntry{normal("a")}, 3, []string{"a", "[PAD1]", "[PAD2]"}, []int32{TypeNormal, TypeUnused, TypeUnused}, "", ""},
		{"drop added", []hfEntry{normal("a"), added("<x>"), {}, added("<y>")}, 1, []string{"a"}, []int32{TypeNormal}, `dropped 2 added token(s) with ids ≥ vocab_size 1: "<x>" (id 1), "<y>" (id 3)`, ""},
		{"drop many", append([]hfEntry{normal("a")}, func() []hfEntry {
			var e []hfEntry
			for i := 0; i < 10; i++ {
				e = append(e, added("<x>"))
			}
			return e
		}()...), 1, []string{"a"}, []int32{TypeNormal}, "and 2 more", ""},
		{"normal beyond", []hfEntry{normal("a"), added("<x>"), normal("b")}, 1, nil, nil, "", `token "b" (id 2) is beyond the model's vocab_size 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, warnings, err := reconcile(c.in, c.vocabSize)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d entries, want %d", len(got), len(c.want))
			}
			for i := range got {
				if got[i].text != c.want[i] || got[i].typ != c.wantTypes[i] {
					t.Errorf("entry %d = %q type %d, want %q type %d", i, got[i].text, got[i].typ, c.want[i], c.wantTypes[i])
				}
				if got[i].typ == TypeUnused && got[i].score != -10000 {
					t.Errorf("pad %d score %v, want -10000", i, got[i].score)
				}
			}
			switch {
			case c.warn == "" && len(warnings) != 0:
				t.Errorf("warnings = %q, want none", warnings)
			case c.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], c.warn)):
				t.Errorf("warnings = %q, want one containing %q", warnings, c.warn)
			}
		})
	}
}
