package tokenizer

import (
	"strings"
	"testing"
)

// TestApplySpecialVocab pins gguf-py SpecialVocab's rules: token names from
// tokenizer_config.json (or special_tokens_map.json) resolve only through
// tokenizer.json added_tokens, config.json <typ>_token_id fills the rest,
// first source wins, out-of-range ids are dropped with a warning.
func TestApplySpecialVocab(t *testing.T) {
	tokens := []string{"<unk>", "<s>", "</s>", "a", "b", "<pad>", "<mask>"}
	for _, c := range []struct {
		name  string
		files map[string]string
		check func(t *testing.T, v *Vocab, warnings []string)
	}{
		{
			name: "tiny golden style: config.json ids only",
			files: map[string]string{
				"tokenizer_config.json": `{"add_bos_token": true, "add_eos_token": false, "bos_token": "<s>", "unk_token": "<unk>"}`,
				"config.json":           `{"bos_token_id": 1, "eos_token_id": 2}`,
			},
			check: func(t *testing.T, v *Vocab, w []string) {
				if v.BOS != 1 || v.EOS != 2 || v.UNK != NoToken || v.AddBOS == nil || !*v.AddBOS || v.AddEOS == nil || *v.AddEOS {
					t.Errorf("bos %d eos %d unk %d add_bos %v add_eos %v", v.BOS, v.EOS, v.UNK, v.AddBOS, v.AddEOS)
				}
			},
		},
		{
			name: "added_tokens first, then config.json",
			files: map[string]string{
				"tokenizer.json":          `{"added_tokens": [{"id": 0, "content": "<unk>"}, {"id": 5, "content": "<pad>"}, {"id": 6, "content": "<pad>"}]}`,
				"tokenizer_config.json":   `{"unk_token": {"content": "<unk>", "lstrip": false}, "pad_token": "<pad>", "chat_template": "{% for m in messages %}{{ m }}{% endfor %}"}`,
				"special_tokens_map.json": `{"mask_token": "<mask>"}`,
				"config.json":             `{"pad_token_id": 3, "eos_token_id": [2, 4], "bos_token_id": 1.0, "sep_token_id": null, "cls_token_id": 9}`,
			},
			check: func(t *testing.T, v *Vocab, w []string) {
				// pad from added_tokens (first entry) wins over config.json 3;
				// mask names a token that is not an added token: unresolved.
				if v.UNK != 0 || v.PAD != 5 || v.MASK != NoToken || v.BOS != NoToken || v.EOS != NoToken || v.SEP != NoToken || v.CLS != NoToken {
					t.Errorf("unk %d pad %d mask %d bos %d eos %d sep %d cls %d", v.UNK, v.PAD, v.MASK, v.BOS, v.EOS, v.SEP, v.CLS)
				}
				if v.AddBOS != nil || v.AddEOS != nil {
					t.Errorf("add flags set without keys")
				}
				if v.ChatTemplate != "{% for m in messages %}{{ m }}{% endfor %}" {
					t.Errorf("chat template %q", v.ChatTemplate)
				}
				joined := strings.Join(w, "\n")
				for _, s := range []string{"eos_token_id is [2, 4]", "bos_token_id is 1.0", "cls token id 9 is outside"} {
					if !strings.Contains(joined, s) {
						t.Errorf("warnings %q lack %q", w, s)
					}
				}
				if len(w) != 3 {
					t.Errorf("%d warnings, want 3: %q", len(w), w)
				}
			},
		},
		{
			name: "special_tokens_map.json resolves through added_tokens",
			files: map[string]string{
				"tokenizer.json":          `{"added_tokens": [{"id": 6, "content": "<mask>"}]}`,
				"tokenizer_config.json":   `{}`,
				"special_tokens_map.json": `{"mask_token": {"content": "<mask>"}}`,
			},
			check: func(t *testing.T, v *Vocab, w []string) {
				if v.MASK != 6 {
					t.Errorf("mask %d, want 6", v.MASK)
				}
			},
		},
		{
			name: "named chat templates",
			files: map[string]string{
				"tokenizer_config.json": `{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`,
			},
			check: func(t *testing.T, v *Vocab, w []string) {
				if v.ChatTemplate != "D" || len(w) != 1 {
					t.Errorf("template %q warnings %q", v.ChatTemplate, w)
				}
			},
		},
		{
			name:  "no side files",
			files: map[string]string{},
			check: func(t *testing.T, v *Vocab, w []string) {
				if v.BOS != NoToken || v.AddBOS != nil || v.ChatTemplate != "" || len(w) != 0 {
					t.Errorf("something was set: %+v %q", v, w)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := NewVocab("llama", "default")
			v.Tokens = tokens
			w, err := ApplySpecialVocab(v, spWriteDir(t, c.files))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, v, w)
		})
	}
}

// TestApplySpecialVocabBadJSON: a side file that is not JSON of the right
// shape is an error naming it.
func TestApplySpecialVocabBadJSON(t *testing.T) {
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"} {
		files := map[string]string{"tokenizer_config.json": `{}`, name: `{"added_tokens": 5, `}
		dir := spWriteDir(t, files)
		v := NewVocab("llama", "default")
		v.Tokens = []string{"<unk>"}
		_, err := ApplySpecialVocab(v, dir)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming the file", name, err)
		}
	}
}
