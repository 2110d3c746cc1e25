package tokenizer

import "strings"

// fragment is a piece of the input being tokenized: raw text, or the id of a
// special token found in it.
type fragment struct {
	text string
	id   int32 // NoToken for raw text
}

// splitAt cuts every raw-text fragment of frags at each occurrence of the
// token text tok, leftmost first, into fragments of text and fragments of
// id: one step of llama.cpp's tokenizer_st_partition, which the SPM and BPE
// tokenizers run for each special token, longest first. Fragments without
// tok are kept as they are (frags itself is returned when none has it).
func splitAt(frags []fragment, tok string, id int32) []fragment {
	var out []fragment
	changed := false
	for _, f := range frags {
		if f.id != NoToken || !strings.Contains(f.text, tok) {
			out = append(out, f)
			continue
		}
		changed = true
		rest := f.text
		for {
			i := strings.Index(rest, tok)
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, fragment{text: rest[:i], id: NoToken})
			}
			out = append(out, fragment{id: id})
			rest = rest[i+len(tok):]
		}
		if rest != "" {
			out = append(out, fragment{text: rest, id: NoToken})
		}
	}
	if !changed {
		return frags
	}
	return out
}
