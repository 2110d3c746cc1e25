package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// SentencePiece ModelProto fields written by SentencePieceModel besides the
// ones the reader parses (sentencepiece src/sentencepiece_model.proto:
// TrainerSpec vocab_size = 4, unk_id 40, bos_id 41, eos_id 42, pad_id 43;
// NormalizerSpec name = 1, remove_extra_whitespaces 4, escape_whitespaces 5).
const (
	fieldTrainerVocabSize  = 4
	fieldTrainerUnkID      = 40
	fieldTrainerBosID      = 41
	fieldTrainerEosID      = 42
	fieldTrainerPadID      = 43
	fieldNormName          = 1
	fieldNormRemoveExtraWS = 4
	fieldNormEscapeWS      = 5
	spModelTypeBPE         = 2
)

// SentencePieceModel serializes a "llama" (SentencePiece-style) vocabulary
// as a tokenizer.model ModelProto: one piece per token with its score and
// type (the GGUF token types are SentencePiece's piece types, llama.h
// llama_token_type), a BPE TrainerSpec with byte_fallback set when the
// vocabulary has byte tokens and the special ids, and an identity
// NormalizerSpec whose add_dummy_prefix is v.AddSpacePrefix (default true).
// LoadSentencePiece reads it back to the same tokens, scores and types.
// It returns an error for a vocabulary of another model, without exactly
// one unknown token, or with an empty or duplicate token (sentencepiece
// refuses to load those).
func (v *Vocab) SentencePieceModel() ([]byte, error) {
	if v.Model != "llama" {
		return nil, fmt.Errorf("tokenizer.ggml.model is %q: a tokenizer.model holds only SentencePiece-style (llama) vocabularies", v.Model)
	}
	if len(v.Scores) != len(v.Tokens) || len(v.Types) != len(v.Tokens) {
		return nil, fmt.Errorf("tokenizer.ggml.scores/token_type: %d scores and %d types for %d tokens", len(v.Scores), len(v.Types), len(v.Tokens))
	}
	var out []byte
	seen := make(map[string]int, len(v.Tokens))
	unk, byteFallback := -1, false
	for id, tok := range v.Tokens {
		if tok == "" {
			return nil, fmt.Errorf("token %d is empty; sentencepiece cannot load it", id)
		}
		if j, dup := seen[tok]; dup {
			return nil, fmt.Errorf("token %d %q duplicates token %d; sentencepiece cannot load it", id, tok, j)
		}
		seen[tok] = id
		typ := v.Types[id]
		if typ < TypeNormal || typ > TypeByte {
			typ = TypeNormal
		}
		switch typ {
		case TypeUnknown:
			if unk >= 0 {
				return nil, fmt.Errorf("tokens %d and %d are both of the unknown type", unk, id)
			}
			unk = id
		case TypeByte:
			byteFallback = true
		}
		var p []byte
		p = protowire.AppendTag(p, fieldPiecePiece, protowire.BytesType)
		p = protowire.AppendString(p, tok)
		p = protowire.AppendTag(p, fieldPieceScore, protowire.Fixed32Type)
		p = protowire.AppendFixed32(p, math.Float32bits(v.Scores[id]))
		if typ != TypeNormal {
			p = protowire.AppendTag(p, fieldPieceType, protowire.VarintType)
			p = protowire.AppendVarint(p, uint64(typ))
		}
		out = protowire.AppendTag(out, fieldModelPieces, protowire.BytesType)
		out = protowire.AppendBytes(out, p)
	}
	if unk < 0 {
		return nil, fmt.Errorf("the vocabulary has no unknown-type token (<unk>); sentencepiece cannot load it")
	}
	var ts []byte
	ts = protowire.AppendTag(ts, fieldTrainerModelType, protowire.VarintType)
	ts = protowire.AppendVarint(ts, spModelTypeBPE)
	ts = protowire.AppendTag(ts, fieldTrainerVocabSize, protowire.VarintType)
	ts = protowire.AppendVarint(ts, uint64(len(v.Tokens)))
	if byteFallback {
		ts = protowire.AppendTag(ts, fieldTrainerByteFallback, protowire.VarintType)
		ts = protowire.AppendVarint(ts, 1)
	}
	for _, f := range []struct {
		num protowire.Number
		id  int32
	}{{fieldTrainerUnkID, int32(unk)}, {fieldTrainerBosID, v.BOS}, {fieldTrainerEosID, v.EOS}, {fieldTrainerPadID, v.PAD}} {
		ts = protowire.AppendTag(ts, f.num, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(int64(f.id))) // -1 (none) as protobuf's int32 varint
	}
	out = protowire.AppendTag(out, fieldModelTrainerSpec, protowire.BytesType)
	out = protowire.AppendBytes(out, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, fieldNormName, protowire.BytesType)
	ns = protowire.AppendString(ns, "identity")
	ns = protowire.AppendTag(ns, fieldNormAddDummyPrefix, protowire.VarintType)
	ns = protowire.AppendVarint(ns, protowire.EncodeBool(v.AddSpacePrefix == nil || *v.AddSpacePrefix))
	ns = protowire.AppendTag(ns, fieldNormRemoveExtraWS, protowire.VarintType)
	ns = protowire.AppendVarint(ns, 0)
	ns = protowire.AppendTag(ns, fieldNormEscapeWS, protowire.VarintType)
	ns = protowire.AppendVarint(ns, 1)
	out = protowire.AppendTag(out, fieldModelNormalizerSpec, protowire.BytesType)
	out = protowire.AppendBytes(out, ns)
	return out, nil
}

// jsonObject is a JSON object that keeps its keys in insertion order (HF
// tokenizers writes tokenizer.json keys in its struct order).
type jsonObject []jsonField

type jsonField struct {
	key string
	val any
}

// MarshalJSON writes the fields in order, without HTML escaping.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(f.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalNoEscape(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// AddedTokens lists the tokens of v that Hugging Face tokenizers keeps
// outside the BPE model (added_tokens): the control tokens (special) and
// the user-defined ones (not special), in id order.
func (v *Vocab) AddedTokens() []AddedToken {
	var out []AddedToken
	for id, t := range v.Types {
		if t == TypeControl || t == TypeUserDefined {
			out = append(out, AddedToken{ID: id, Content: v.Tokens[id], Special: t == TypeControl})
		}
	}
	return out
}

// AddedToken is one entry of tokenizer.json's added_tokens (and of
// tokenizer_config.json's added_tokens_decoder).
type AddedToken struct {
	ID      int
	Content string
	Special bool
}

// HFTokenizerJSON builds the tokenizer.json of a byte-level BPE ("gpt2")
// vocabulary: model.vocab holds the normal and byte tokens, added_tokens
// the control and user-defined ones (AddedTokens), model.merges the GGUF
// merges ("a b"), and the pre-tokenizer is the one LoadTokenizerJSON
// detects as v.Pre (a Split on the family's regex then ByteLevel without
// regex for llama-bpe and qwen2; ByteLevel with its regex for gpt-2;
// Punctuation, ByteLevel, individual Digits for falcon3/falcon_e); with
// AddsBOS a TemplateProcessing post-processor prepends the BOS token.
// Unused tokens (the [PAD…] fill up to vocab_size) are left out: hf2gguf
// adds them back. Other pre types are an error naming the pre.
func (v *Vocab) HFTokenizerJSON() ([]byte, error) {
	if v.Model != "gpt2" {
		return nil, fmt.Errorf("tokenizer.ggml.model is %q: tokenizer.json is written for byte-level BPE (gpt2) vocabularies", v.Model)
	}
	byteLevel := func(useRegex bool) jsonObject {
		return jsonObject{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", useRegex}}
	}
	var pre any
	p, ok := lookupPre(v.Pre)
	switch {
	case ok && len(p.patterns) > 0:
		split := jsonObject{{"type", "Split"}, {"pattern", jsonObject{{"Regex", p.patterns[0]}}}, {"behavior", "Isolated"}, {"invert", false}}
		pre = jsonObject{{"type", "Sequence"}, {"pretokenizers", []any{split, byteLevel(false)}}}
	case ok && p.byteLevelRegex:
		pre = byteLevel(true)
	case ok && (v.Pre == "falcon3" || v.Pre == "falcon_e"):
		pre = jsonObject{{"type", "Sequence"}, {"pretokenizers", []any{
			jsonObject{{"type", "Punctuation"}, {"behavior", "contiguous"}},
			jsonObject{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}},
			jsonObject{{"type", "Digits"}, {"individual_digits", true}},
		}}}
	default:
		return nil, fmt.Errorf("tokenizer.ggml.pre %q: no tokenizer.json pre-tokenizer is known for it (known: %s)", v.Pre, supportedPres())
	}
	var added []any
	for _, a := range v.AddedTokens() {
		added = append(added, jsonObject{{"id", a.ID}, {"content", a.Content}, {"single_word", false}, {"lstrip", false}, {"rstrip", false}, {"normalized", !a.Special}, {"special", a.Special}})
	}
	if added == nil {
		added = []any{}
	}
	vocab := make(jsonObject, 0, len(v.Tokens))
	for id, tok := range v.Tokens {
		if t := v.Types[id]; t == TypeNormal || t == TypeByte || t == TypeUnknown {
			vocab = append(vocab, jsonField{tok, id})
		}
	}
	merges := v.Merges
	if merges == nil {
		merges = []string{}
	}
	var post any
	if v.AddsBOS() && v.BOS >= 0 && int(v.BOS) < len(v.Tokens) {
		bos := v.Tokens[v.BOS]
		seq := func(id string) jsonObject { return jsonObject{{"Sequence", jsonObject{{"id", id}, {"type_id", 0}}}} }
		special := func(id string) jsonObject {
			return jsonObject{{"SpecialToken", jsonObject{{"id", id}, {"type_id", 0}}}}
		}
		post = jsonObject{{"type", "TemplateProcessing"},
			{"single", []any{special(bos), seq("A")}},
			{"pair", []any{special(bos), seq("A"), special(bos), seq("B")}},
			{"special_tokens", jsonObject{{bos, jsonObject{{"id", bos}, {"ids", []int{int(v.BOS)}}, {"tokens", []string{bos}}}}}}}
	}
	doc := jsonObject{
		{"version", "1.0"},
		{"truncation", nil},
		{"padding", nil},
		{"added_tokens", added},
		{"normalizer", nil},
		{"pre_tokenizer", pre},
		{"post_processor", post},
		{"decoder", jsonObject{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
		{"model", jsonObject{{"type", "BPE"}, {"dropout", nil}, {"unk_token", nil}, {"continuing_subword_prefix", nil}, {"end_of_word_suffix", nil}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", ok && p.ignoreMerges}, {"vocab", vocab}, {"merges", merges}}},
	}
	b, err := marshalNoEscape(doc)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
