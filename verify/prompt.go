package verify

import (
	"errors"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// NoVocabIDs is the prompt verify runs on a file without a vocabulary
// (hf2gguf --no-vocab) when no IDs are given: 1, 100, 200, 300, 400, 7, 8,
// each modulo {arch}.vocab_size (2 when the key is missing or 0).
func NoVocabIDs(f *reader.File) []int32 {
	n, _ := f.Uint(f.Arch() + ".vocab_size")
	if n == 0 {
		n = 2
	}
	return []int32{1 % int32(n), 100 % int32(n), 200 % int32(n), 300 % int32(n), 400 % int32(n), 7 % int32(n), 8 % int32(n)}
}

func promptIDs(f *reader.File, opts Options) ([]int32, error) {
	if len(opts.IDs) > 0 {
		return opts.IDs, nil
	}
	prompt := opts.Prompt
	if _, ok := f.Get("tokenizer.ggml.tokens"); !ok {
		if prompt != "" {
			return nil, fmt.Errorf("%s has no vocabulary: pass --ids instead of --prompt", opts.GGUF)
		}
		return NoVocabIDs(f), nil
	}
	if prompt == "" {
		prompt = DefaultPrompt
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	ids, err := tok.Encode(prompt, true, false)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("the prompt tokenizes to no tokens")
	}
	return ids, nil
}
