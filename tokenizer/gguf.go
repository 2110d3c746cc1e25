package tokenizer

import (
	"errors"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// ErrGGUFVocab marks GGUF tokenizer metadata that cannot be turned into a
// Vocab (a missing or mistyped tokenizer.ggml.* key, array lengths that
// disagree, a special id outside the vocabulary). It is returned wrapped with
// the key name; test for it with errors.Is.
var ErrGGUFVocab = errors.New("bad GGUF tokenizer metadata")

// ggufSpecialIDs maps tokenizer.ggml.<name>_token_id keys to Vocab fields.
// "seperator" is spelled as llama.cpp and gguf-py spell it.
var ggufSpecialIDs = []struct {
	key string
	id  func(v *Vocab) *int32
}{
	{"tokenizer.ggml.bos_token_id", func(v *Vocab) *int32 { return &v.BOS }},
	{"tokenizer.ggml.eos_token_id", func(v *Vocab) *int32 { return &v.EOS }},
	{"tokenizer.ggml.unknown_token_id", func(v *Vocab) *int32 { return &v.UNK }},
	{"tokenizer.ggml.seperator_token_id", func(v *Vocab) *int32 { return &v.SEP }},
	{"tokenizer.ggml.padding_token_id", func(v *Vocab) *int32 { return &v.PAD }},
	{"tokenizer.ggml.cls_token_id", func(v *Vocab) *int32 { return &v.CLS }},
	{"tokenizer.ggml.mask_token_id", func(v *Vocab) *int32 { return &v.MASK }},
	{"tokenizer.ggml.eot_token_id", func(v *Vocab) *int32 { return &v.EOT }},
}

// ggufFlags maps the tokenizer.ggml.add_* boolean keys to Vocab fields.
var ggufFlags = []struct {
	key  string
	flag func(v *Vocab) **bool
}{
	{"tokenizer.ggml.add_bos_token", func(v *Vocab) **bool { return &v.AddBOS }},
	{"tokenizer.ggml.add_eos_token", func(v *Vocab) **bool { return &v.AddEOS }},
	{"tokenizer.ggml.add_space_prefix", func(v *Vocab) **bool { return &v.AddSpacePrefix }},
}

// FromGGUF builds a Vocab from the tokenizer.* metadata of a GGUF file (the
// KVs as gguf/reader returns them), the inverse of Vocab.KVs, with the
// tolerance of llama.cpp's llm_load_vocab:
//
//   - tokenizer.ggml.model (string) and tokenizer.ggml.tokens (string array)
//     are required;
//   - tokenizer.ggml.pre is optional ("default" when absent, as llama.cpp
//     treats a missing pre);
//   - tokenizer.ggml.scores may be a float32 or float64 array, and
//     tokenizer.ggml.token_type an array of any integer width (other tools
//     write u32 or i8; BR-27); both must have one entry per token; absent
//     scores stay nil and absent types are all NORMAL;
//   - tokenizer.ggml.merges is an optional string array;
//   - the special ids may be any non-negative integer scalar and must be
//     below the token count; the add_* flags must be bool;
//   - tokenizer.chat_template is an optional string.
//
// Every error wraps ErrGGUFVocab and names the key.
func FromGGUF(kvs []gguf.KV) (*Vocab, error) {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrGGUFVocab, key, fmt.Sprintf(format, args...))
	}
	str := func(key string, required bool) (string, bool, error) {
		val, ok := gguf.Lookup(kvs, key)
		if !ok {
			if required {
				return "", false, bad(key, "key missing; is this a GGUF with a vocabulary?")
			}
			return "", false, nil
		}
		s, isStr := val.V.(string)
		if !isStr || val.Type != gguf.ValueString {
			return "", false, bad(key, "is %s, want string", val.Type)
		}
		return s, true, nil
	}

	model, _, err := str("tokenizer.ggml.model", true)
	if err != nil {
		return nil, err
	}
	pre, ok, err := str("tokenizer.ggml.pre", false)
	if err != nil {
		return nil, err
	}
	if !ok {
		pre = "default"
	}
	v := NewVocab(model, pre)

	const tokensKey = "tokenizer.ggml.tokens"
	val, ok := gguf.Lookup(kvs, tokensKey)
	if !ok {
		return nil, bad(tokensKey, "key missing; is this a GGUF with a vocabulary?")
	}
	toks, isStrs := val.V.([]string)
	if !isStrs {
		return nil, bad(tokensKey, "is %s of %s, want array of string", val.Type, val.Elem)
	}
	if len(toks) == 0 {
		return nil, bad(tokensKey, "is empty")
	}
	if len(toks) > math.MaxInt32 {
		return nil, bad(tokensKey, "has %d entries, more than int32 token ids can address", len(toks))
	}
	v.Tokens = toks
	n := len(toks)

	const scoresKey = "tokenizer.ggml.scores"
	if val, ok := gguf.Lookup(kvs, scoresKey); ok {
		switch s := val.V.(type) {
		case []float32:
			v.Scores = s
		case []float64:
			v.Scores = make([]float32, len(s))
			for i, x := range s {
				v.Scores[i] = float32(x)
			}
		default:
			return nil, bad(scoresKey, "is %s of %s, want array of float32", val.Type, val.Elem)
		}
		if len(v.Scores) != n {
			return nil, bad(scoresKey, "has %d entries for %d tokens", len(v.Scores), n)
		}
	}

	const typesKey = "tokenizer.ggml.token_type"
	if val, ok := gguf.Lookup(kvs, typesKey); ok {
		types, err := ggufIntSlice(val.V)
		if err != nil {
			return nil, bad(typesKey, "%v (array element type %s)", err, val.Elem)
		}
		if len(types) != n {
			return nil, bad(typesKey, "has %d entries for %d tokens", len(types), n)
		}
		v.Types = types
	} else {
		v.Types = make([]int32, n)
		for i := range v.Types {
			v.Types[i] = TypeNormal
		}
	}

	const mergesKey = "tokenizer.ggml.merges"
	if val, ok := gguf.Lookup(kvs, mergesKey); ok {
		m, isStrs := val.V.([]string)
		if !isStrs {
			return nil, bad(mergesKey, "is %s of %s, want array of string", val.Type, val.Elem)
		}
		v.Merges = m
	}

	for _, s := range ggufSpecialIDs {
		val, ok := gguf.Lookup(kvs, s.key)
		if !ok {
			continue
		}
		id, isUint := val.Uint()
		if !isUint || val.Type == gguf.ValueArray || val.Type == gguf.ValueBool {
			return nil, bad(s.key, "is %s %v, want a non-negative integer", val.Type, val.V)
		}
		if id >= uint64(n) {
			return nil, bad(s.key, "id %d is outside the vocabulary of %d tokens", id, n)
		}
		*s.id(v) = int32(id)
	}
	for _, f := range ggufFlags {
		val, ok := gguf.Lookup(kvs, f.key)
		if !ok {
			continue
		}
		b, isBool := val.V.(bool)
		if !isBool {
			return nil, bad(f.key, "is %s, want bool", val.Type)
		}
		*f.flag(v) = &b
	}
	tmpl, _, err := str("tokenizer.chat_template", false)
	if err != nil {
		return nil, err
	}
	v.ChatTemplate = tmpl
	return v, nil
}

// ggufIntSlice converts a Go slice of any integer type to []int32,
// failing on values outside int32.
func ggufIntSlice(x any) ([]int32, error) {
	conv := func(n int, at func(int) (int64, bool)) ([]int32, error) {
		out := make([]int32, n)
		for i := range out {
			v, ok := at(i)
			if !ok || v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("entry %d does not fit in int32", i)
			}
			out[i] = int32(v)
		}
		return out, nil
	}
	switch s := x.(type) {
	case []int32:
		return s, nil
	case []uint32:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), true })
	case []int8:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), true })
	case []uint8:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), true })
	case []int16:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), true })
	case []uint16:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), true })
	case []int64:
		return conv(len(s), func(i int) (int64, bool) { return s[i], true })
	case []uint64:
		return conv(len(s), func(i int) (int64, bool) { return int64(s[i]), s[i] <= math.MaxInt64 })
	}
	return nil, fmt.Errorf("not an integer array")
}
