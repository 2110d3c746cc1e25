package tokenizer

import "github.com/bitnet-convert/bitnet-convert/gguf"

// Token types as stored in tokenizer.ggml.token_type (llama.h
// llama_token_type).
const (
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// NoToken marks an absent special token id in Vocab.
const NoToken int32 = -1

// Vocab is a tokenizer as GGUF stores it (the tokenizer.ggml.* keys). It is
// what the converters build from tokenizer.model / tokenizer.json and what the
// runtime tokenizers are built from.
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" (SentencePiece-style) or "gpt2"
	// (byte-level BPE).
	Model string
	// Pre is tokenizer.ggml.pre ("default", "llama-bpe", "qwen2", …).
	Pre string
	// Tokens, Scores and Types are indexed by token id. Scores is nil for
	// gpt2 vocabularies (no tokenizer.ggml.scores key is written then).
	Tokens []string
	Scores []float32
	Types  []int32
	// Merges are "a b" strings in rank order (gpt2 only).
	Merges []string
	// Special token ids, NoToken when absent.
	BOS, EOS, UNK, PAD, SEP, CLS, MASK, EOT int32
	// AddBOS / AddEOS / AddSpacePrefix are nil when the source does not say.
	AddBOS, AddEOS, AddSpacePrefix *bool
	// ChatTemplate is tokenizer.chat_template ("" when absent).
	ChatTemplate string
}

// NewVocab returns an empty Vocab with every special id set to NoToken.
func NewVocab(model, pre string) *Vocab {
	return &Vocab{Model: model, Pre: pre, BOS: NoToken, EOS: NoToken, UNK: NoToken, PAD: NoToken, SEP: NoToken, CLS: NoToken, MASK: NoToken, EOT: NoToken}
}

// KVs returns the tokenizer.* metadata of v in the order bitnet.cpp's
// converter writes it (spec conversion.md §5.3): model, pre, tokens, scores,
// token_type, merges, special ids, add_* flags, chat template.
func (v *Vocab) KVs() []gguf.KV {
	kvs := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.String(v.Model)},
		{Key: "tokenizer.ggml.pre", Value: gguf.String(v.Pre)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings(v.Tokens)},
	}
	if v.Scores != nil {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.scores", Value: gguf.Float32s(v.Scores)})
	}
	kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s(v.Types)})
	if len(v.Merges) > 0 {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.merges", Value: gguf.Strings(v.Merges)})
	}
	for _, s := range []struct {
		key string
		id  int32
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"seperator", v.SEP}, {"padding", v.PAD}, {"cls", v.CLS}, {"mask", v.MASK}, {"eot", v.EOT}} {
		if s.id >= 0 {
			kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml." + s.key + "_token_id", Value: gguf.Uint32(uint32(s.id))})
		}
	}
	for _, f := range []struct {
		key string
		v   *bool
	}{{"tokenizer.ggml.add_bos_token", v.AddBOS}, {"tokenizer.ggml.add_eos_token", v.AddEOS}, {"tokenizer.ggml.add_space_prefix", v.AddSpacePrefix}} {
		if f.v != nil {
			kvs = append(kvs, gguf.KV{Key: f.key, Value: gguf.Bool(*f.v)})
		}
	}
	if v.ChatTemplate != "" {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: gguf.String(v.ChatTemplate)})
	}
	return kvs
}

// AddsBOS reports whether llama.cpp's tokenizer adds BOS for v: v.AddBOS
// when set, else llama.cpp's default for the model and pre type (true for
// SPM "llama" and for the llama-bpe pre type).
func (v *Vocab) AddsBOS() bool {
	if v.AddBOS != nil {
		return *v.AddBOS
	}
	switch v.Model {
	case "llama":
		return spmDefaults.addBOS
	case "gpt2":
		if p, ok := lookupPre(v.Pre); ok {
			return p.addBOS
		}
	}
	return false
}
