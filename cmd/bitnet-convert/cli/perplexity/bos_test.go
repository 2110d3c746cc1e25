package perplexity

import (
	"testing"

	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// H37: the BOS perplexity puts first in every chunk follows the one add-BOS
// rule of the tokenizer. A llama-bpe vocabulary without add_bos_token adds
// BOS when encoding (llama.cpp's default for that pre type) and so does
// llama-perplexity per chunk; chunkBOS used to return -1 there.
func TestChunkBOSFollowsTokenizer(t *testing.T) {
	f, tr := false, true
	bpe := func(add *bool) *tokenizer.Vocab {
		return &tokenizer.Vocab{Model: "gpt2", Pre: "llama-bpe",
			Tokens: []string{"H", "e", "Ġ", "<|begin_of_text|>"},
			Types:  []int32{tokenizer.TypeNormal, tokenizer.TypeNormal, tokenizer.TypeNormal, tokenizer.TypeControl},
			BOS:    3, EOS: tokenizer.NoToken, UNK: tokenizer.NoToken, PAD: tokenizer.NoToken, EOT: tokenizer.NoToken, AddBOS: add}
	}
	spm := func(add *bool) *tokenizer.Vocab {
		return &tokenizer.Vocab{Model: "llama", Tokens: []string{"<unk>", "<s>", "</s>", "▁a"},
			Scores: []float32{0, 0, 0, -1},
			Types:  []int32{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl, tokenizer.TypeNormal},
			BOS:    1, EOS: 2, UNK: 0, PAD: tokenizer.NoToken, EOT: tokenizer.NoToken, AddBOS: add}
	}
	for _, c := range []struct {
		name string
		v    *tokenizer.Vocab
		want int32
	}{
		{"llama-bpe, no add_bos_token", bpe(nil), 3},
		{"llama-bpe, add_bos_token false", bpe(&f), -1},
		{"llama-bpe, add_bos_token true", bpe(&tr), 3},
		{"spm, no add_bos_token", spm(nil), 1},
		{"spm, add_bos_token false", spm(&f), -1},
	} {
		tok, err := tokenizer.New(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ids, err := tok.Encode("He", true, false)
		if err != nil {
			t.Fatalf("%s: encode: %v", c.name, err)
		}
		encodeBOS := int32(-1)
		if len(ids) > 0 && ids[0] == c.v.BOS {
			encodeBOS = ids[0]
		}
		if got := chunkBOS(tok); got != c.want || got != encodeBOS {
			t.Errorf("%s: chunkBOS %d, encode's BOS %d, want %d for both", c.name, got, encodeBOS, c.want)
		}
	}
}
