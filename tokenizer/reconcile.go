package tokenizer

import (
	"fmt"
	"strings"
)

// hfMaxListed bounds how many dropped tokens a warning names.
const hfMaxListed = 8

// hfPadText is the text of a filler token for an id the tokenizer does not
// define ("[PAD<id>]", as bitnet.cpp's converters write it).
func hfPadText(id int) string { return fmt.Sprintf("[PAD%d]", id) }

// reconcile makes entries exactly vocabSize long (vocabSize 0 keeps the
// length): holes and missing ids become "[PAD<id>]" (type UNUSED, score
// −10000); entries with ids ≥ vocabSize are dropped when they are all added
// tokens, with a warning naming how many and which, and are an error naming
// the first non-added one otherwise (the model's embedding has no row for
// it, so dropping it would silently change the tokenizer).
func reconcile(entries []hfEntry, vocabSize int) ([]hfEntry, []string, error) {
	var warnings []string
	if vocabSize > 0 && len(entries) > vocabSize {
		var dropped []string
		for id := vocabSize; id < len(entries); id++ {
			e := entries[id]
			if !e.present {
				continue
			}
			if !e.added {
				return nil, nil, fmt.Errorf("tokenizer.json: token %q (id %d) is beyond the model's vocab_size %d and is not an added token; check vocab_size in config.json", e.text, id, vocabSize)
			}
			dropped = append(dropped, fmt.Sprintf("%q (id %d)", e.text, id))
		}
		if len(dropped) > 0 {
			list := dropped
			more := ""
			if len(list) > hfMaxListed {
				more = fmt.Sprintf(", and %d more", len(list)-hfMaxListed)
				list = list[:hfMaxListed]
			}
			warnings = append(warnings, fmt.Sprintf("dropped %d added token(s) with ids ≥ vocab_size %d: %s%s", len(dropped), vocabSize, strings.Join(list, ", "), more))
		}
		entries = entries[:vocabSize]
	}
	if vocabSize > len(entries) {
		entries = append(entries, make([]hfEntry, vocabSize-len(entries))...)
	}
	for id := range entries {
		if !entries[id].present {
			entries[id] = hfEntry{text: hfPadText(id), typ: TypeUnused, score: hfScorePad, present: true}
		}
	}
	return entries, warnings, nil
}
