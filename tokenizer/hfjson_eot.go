package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// hfSpecialTypes are the special-token kinds of SpecialVocab, in the order
// bitnet.cpp's gguf-py discovers them (spec conversion.md §5.3), with the Vocab
// field each one sets.
var hfSpecialTypes = []struct {
	typ   string
	field func(*Vocab) *int32
}{
	{"bos", func(v *Vocab) *int32 { return &v.BOS }},
	{"eos", func(v *Vocab) *int32 { return &v.EOS }},
	{"unk", func(v *Vocab) *int32 { return &v.UNK }},
	{"sep", func(v *Vocab) *int32 { return &v.SEP }},
	{"pad", func(v *Vocab) *int32 { return &v.PAD }},
	{"cls", func(v *Vocab) *int32 { return &v.CLS }},
	{"mask", func(v *Vocab) *int32 { return &v.MASK }},
}

// hfEOTTokens are the end-of-turn tokens of the chat families we know;
// the first one the vocabulary holds becomes tokenizer.ggml.eot_token_id.
var hfEOTTokens = []string{
	"<|eot_id|>",      // Llama 3
	"<|im_end|>",      // Qwen (ChatML)
	"<end_of_turn>",   // Gemma
	"<|end_of_turn|>", // OpenChat style
}

// hfSpecialConfig is what the side files of a Hugging Face model directory say
// about special tokens.
type hfSpecialConfig struct {
	// names maps a special type ("bos", …) to token text, from
	// tokenizer_config.json, else special_tokens_map.json.
	names map[string]string
	// namesFrom records which file each name came from, for warnings.
	namesFrom map[string]string
	// ids maps a special type to an id from config.json <typ>_token_id.
	ids            map[string]int64
	addBOS, addEOS *bool
	hfChatTemplate string
}

// hfSideFile reads an optional JSON file of the model directory into a map of
// raw values; a missing file gives nil, a malformed one an error naming it.
func hfSideFile(fsys fs.FS, name string) (map[string]json.RawMessage, error) {
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w (fix or remove the file)", name, err)
	}
	return m, nil
}

// hfTokenText decodes a <typ>_token value: a string, an {"content": …} object
// or null.
func hfTokenText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, s != ""
	}
	var obj struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content, true
	}
	return "", false
}

// loadHFSpecialConfig reads tokenizer_config.json, special_tokens_map.json and
// config.json from fsys (each optional).
//
// It is private to the tokenizer.json path; the SentencePiece path has its
// own reading in special*.go.
func loadHFSpecialConfig(fsys fs.FS) (*hfSpecialConfig, error) {
	cfg := &hfSpecialConfig{names: map[string]string{}, namesFrom: map[string]string{}, ids: map[string]int64{}}
	for _, name := range []string{"tokenizer_config.json", "special_tokens_map.json"} {
		m, err := hfSideFile(fsys, name)
		if err != nil {
			return nil, err
		}
		for _, st := range hfSpecialTypes {
			if _, done := cfg.names[st.typ]; done {
				continue
			}
			if t, ok := hfTokenText(m[st.typ+"_token"]); ok {
				cfg.names[st.typ] = t
				cfg.namesFrom[st.typ] = name
			}
		}
		if name != "tokenizer_config.json" || m == nil {
			continue
		}
		for _, f := range []struct {
			key string
			dst **bool
		}{{"add_bos_token", &cfg.addBOS}, {"add_eos_token", &cfg.addEOS}} {
			var b bool
			if raw, ok := m[f.key]; ok && json.Unmarshal(raw, &b) == nil && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				*f.dst = &b
			}
		}
		cfg.hfChatTemplate = hfChatTemplate(m["chat_template"])
	}
	m, err := hfSideFile(fsys, "config.json")
	if err != nil {
		return nil, err
	}
	for _, st := range hfSpecialTypes {
		raw, ok := m[st.typ+"_token_id"]
		if !ok {
			continue
		}
		var id int64
		var list []int64
		switch {
		case json.Unmarshal(raw, &id) == nil && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
			cfg.ids[st.typ] = id
		case json.Unmarshal(raw, &list) == nil && len(list) > 0:
			// Llama 3.1 style lists of eos ids: the first one is the
			// primary.
			cfg.ids[st.typ] = list[0]
		}
	}
	return cfg, nil
}

// hfChatTemplate decodes tokenizer_config.json chat_template: a string, or a
// list of {name, template} where the "default" entry (else the first) is
// taken.
func hfChatTemplate(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return ""
	}
	for _, t := range list {
		if t.Name == "default" {
			return t.Template
		}
	}
	return list[0].Template
}

// apply sets the special ids, add_* flags, chat template and EOT of v. A
// named token is looked up among the added tokens first, then the whole
// vocabulary (never the [PAD] fillers); an id must be below len(v.Tokens).
// Names that resolve to nothing give a warning.
func (cfg *hfSpecialConfig) apply(v *Vocab, j *hfTokenizerJSON) []string {
	var warnings []string
	n := int64(len(v.Tokens))
	byText := make(map[string]int32, len(v.Tokens))
	for id := len(v.Tokens) - 1; id >= 0; id-- {
		if v.Types[id] != TypeUnused {
			byText[v.Tokens[id]] = int32(id)
		}
	}
	for _, a := range j.AddedTokens {
		if a.ID < n && v.Tokens[a.ID] == a.Content {
			byText[a.Content] = int32(a.ID)
		}
	}
	for _, st := range hfSpecialTypes {
		dst := st.field(v)
		if name, ok := cfg.names[st.typ]; ok {
			if id, ok := byText[name]; ok {
				*dst = id
				continue
			}
			warnings = append(warnings, fmt.Sprintf("%s: %s_token %q is not in the vocabulary; %s id left unset", cfg.namesFrom[st.typ], st.typ, name, st.typ))
		}
		if id, ok := cfg.ids[st.typ]; ok {
			if id >= 0 && id < n {
				*dst = int32(id)
			} else {
				warnings = append(warnings, fmt.Sprintf("config.json: %s_token_id %d is outside the vocabulary (0..%d); ignored", st.typ, id, n-1))
			}
		}
	}
	for _, t := range hfEOTTokens {
		if id, ok := byText[t]; ok {
			v.EOT = id
			break
		}
	}
	v.AddBOS, v.AddEOS = cfg.addBOS, cfg.addEOS
	v.ChatTemplate = cfg.hfChatTemplate
	return warnings
}
