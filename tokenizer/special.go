package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// specialVocabTypes is gguf-py SpecialVocab's default special_token_types, in its
// order, with the Vocab field each one fills. The GGUF key of each is
// tokenizer.ggml.<Key>_token_id (see Vocab.KVs).
var specialVocabTypes = []struct {
	typ string // the HF name: bos_token, add_bos_token, bos_token_id
	id  func(v *Vocab) *int32
}{
	{"bos", func(v *Vocab) *int32 { return &v.BOS }},
	{"eos", func(v *Vocab) *int32 { return &v.EOS }},
	{"unk", func(v *Vocab) *int32 { return &v.UNK }},
	{"sep", func(v *Vocab) *int32 { return &v.SEP }},
	{"pad", func(v *Vocab) *int32 { return &v.PAD }},
	{"cls", func(v *Vocab) *int32 { return &v.CLS }},
	{"mask", func(v *Vocab) *int32 { return &v.MASK }},
}

// specialAddFlags are the add_<typ>_token flags the GGUF writer has a key for
// (gguf-py GGUFWriter.add_add_bos_token / add_add_eos_token); SpecialVocab
// skips the others with a warning.
var specialAddFlags = []struct {
	typ  string
	flag func(v *Vocab) **bool
}{
	{"bos", func(v *Vocab) **bool { return &v.AddBOS }},
	{"eos", func(v *Vocab) **bool { return &v.AddEOS }},
}

// ApplySpecialVocab fills the special-token part of v from the Hugging Face
// side files in dir, as gguf-py's SpecialVocab (bitnet.cpp's llama.cpp fork,
// merge-dev 406a5036) does for every tokenizer kind (spec conversion.md §5.3):
//
//  1. tokenizer_config.json: add_bos_token / add_eos_token booleans set
//     v.AddBOS / v.AddEOS; <typ>_token (a string, or an object with
//     "content") names a token whose id is looked up among the added_tokens
//     of dir/tokenizer.json only (never the base vocabulary: that is why a
//     SentencePiece-only model gets no unknown_token_id); when
//     tokenizer_config.json has no <typ>_token, special_tokens_map.json is
//     consulted the same way; chat_template (a string, or a list of
//     {"name", "template"} of which "default" is taken) sets v.ChatTemplate.
//  2. config.json: <typ>_token_id integers fill the ids still unset.
//
// typ is bos, eos, unk, sep, pad, cls, mask. An id is set only when the
// Vocab field is still NoToken (first source wins) and the id is below
// len(v.Tokens); out-of-range, negative or non-integer ids are skipped with
// a warning. Missing files are skipped; a file that is not valid JSON of the
// expected shape is an error naming it.
func ApplySpecialVocab(v *Vocab, dir string) (warnings []string, err error) {
	return applySpecialVocab(v, dirFiles(dir))
}

// ApplySpecialVocabFS is ApplySpecialVocab reading the side files from the
// root of fsys; errors and warnings name them relative to that root.
func ApplySpecialVocabFS(v *Vocab, fsys fs.FS) (warnings []string, err error) {
	return applySpecialVocab(v, modelFiles{fsys: fsys})
}

func applySpecialVocab(v *Vocab, files modelFiles) (warnings []string, err error) {
	nVocab := len(v.Tokens)
	set := func(src, typ string, id int64, field *int32) {
		switch {
		case id < 0 || id >= int64(nVocab):
			warnings = append(warnings, fmt.Sprintf("%s: %s token id %d is outside the vocabulary (0..%d); ignored", src, typ, id, nVocab-1))
		case *field == NoToken:
			*field = int32(id)
		}
	}

	added, err := readTokenizerJSONAdded(files)
	if err != nil {
		return nil, err
	}

	cfg, cfgPath, err := readSideJSON(files, "tokenizer_config.json")
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		stm, _, err := readSideJSON(files, "special_tokens_map.json")
		if err != nil {
			return nil, err
		}
		if raw, ok := cfg["chat_template"]; ok {
			tmpl, w := specialChatTemplate(raw)
			if w != "" {
				warnings = append(warnings, cfgPath+": "+w)
			}
			v.ChatTemplate = tmpl
		}
		for _, a := range specialAddFlags {
			var b bool
			if raw, ok := cfg["add_"+a.typ+"_token"]; ok && json.Unmarshal(raw, &b) == nil && specialIsJSONBool(raw) {
				*a.flag(v) = &b
			}
		}
		for _, s := range specialVocabTypes {
			content, ok := specialTokenContent(cfg[s.typ+"_token"])
			if !ok {
				content, ok = specialTokenContent(stm[s.typ+"_token"])
			}
			if !ok {
				continue
			}
			if id, found := added[content]; found {
				set(files.path("tokenizer.json"), s.typ, id, s.id(v))
			}
		}
	}

	conf, confPath, err := readSideJSON(files, "config.json")
	if err != nil {
		return nil, err
	}
	for _, s := range specialVocabTypes {
		raw, ok := conf[s.typ+"_token_id"]
		if !ok {
			continue
		}
		id, isInt := specialJSONInt(raw)
		if !isInt {
			if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				warnings = append(warnings, fmt.Sprintf("%s: %s_token_id is %s, not one integer; ignored", confPath, s.typ, bytes.TrimSpace(raw)))
			}
			continue
		}
		set(confPath, s.typ, id, s.id(v))
	}
	return warnings, nil
}

// readSideJSON reads a JSON object file as raw members and returns the path
// naming it; a missing file gives a nil map and no error.
func readSideJSON(files modelFiles, name string) (map[string]json.RawMessage, string, error) {
	data, path, err := files.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("read tokenizer side file %s: %w", path, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, path, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	if m == nil { // the file said null
		m = map[string]json.RawMessage{}
	}
	return m, path, nil
}

// readTokenizerJSONAdded returns content → id of the added_tokens list of a
// tokenizer.json (first entry wins, as SpecialVocab's next(...) does); a
// missing file is an empty map.
func readTokenizerJSONAdded(files modelFiles) (map[string]int64, error) {
	data, path, err := files.read("tokenizer.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var tj struct {
		AddedTokens []struct {
			ID      *int64  `json:"id"`
			Content *string `json:"content"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("%s: bad added_tokens: %w", path, err)
	}
	out := make(map[string]int64, len(tj.AddedTokens))
	for _, a := range tj.AddedTokens {
		if a.ID == nil || a.Content == nil {
			continue
		}
		if _, dup := out[*a.Content]; !dup {
			out[*a.Content] = *a.ID
		}
	}
	return out, nil
}

// specialTokenContent reads a <typ>_token value: a string, or an object whose
// "content" is a string (AddedToken serialisation).
func specialTokenContent(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, true
	}
	return "", false
}

// chatTemplate reads tokenizer_config.json chat_template: a string, or a
// list of named templates of which "default" is the one GGUF's
// tokenizer.chat_template holds. The second result is a warning ("" if none).
func specialChatTemplate(raw json.RawMessage) (string, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if json.Unmarshal(raw, &list) == nil {
		for _, t := range list {
			if t.Name == "default" {
				return t.Template, fmt.Sprintf("chat_template has %d named templates; only \"default\" is written", len(list))
			}
		}
		return "", "chat_template list has no \"default\" entry; none written"
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", ""
	}
	return "", "chat_template is neither a string nor a list of templates; ignored"
}

// specialJSONInt reports raw as an integer when it is a JSON number without
// fraction or exponent (Python's isinstance(x, int) on the parsed value).
func specialJSONInt(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') || bytes.ContainsAny(raw, ".eE") {
		return 0, false
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false
	}
	return n, true
}

// specialIsJSONBool reports whether raw is a JSON true or false literal.
func specialIsJSONBool(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return bytes.Equal(raw, []byte("true")) || bytes.Equal(raw, []byte("false"))
}
