package tokenizer

import (
	"slices"
	"testing"
)

func TestBPEVectors(t *testing.T) {
	for _, tc := range []struct{ model, vectors string }{
		{"llama3", "ggml-vocab-llama-bpe.gguf"},
		{"qwen3", "ggml-vocab-qwen2.gguf"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			v, _ := realVocab(t, tc.model)
			tok, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range readVectors(t, tc.vectors) {
				got, err := tok.Encode(c.in, false, false)
				if err != nil {
					t.Fatalf("input %d %q: %v", i, c.in, err)
				}
				if !slices.Equal(got, c.ids) {
					t.Errorf("input %d %q:\n got %v\nwant %v", i, c.in, got, c.ids)
				}
			}
		})
	}
}
