package tokenizer

import (
	"encoding/json"
	"testing"
	"testing/fstest"
)

// FuzzTokenizerJSON feeds arbitrary bytes as tokenizer.json: the loader
// returns an error or a consistent vocabulary, never panics, and a gpt2
// result either builds a tokenizer that round-trips text or is rejected by
// NewBPE with an error.
func FuzzTokenizerJSON(f *testing.F) {
	pre, _ := json.Marshal(map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]string{"Regex": llama3SplitJSON}},
		map[string]any{"type": "ByteLevel", "use_regex": false},
	}})
	vocab := `"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġa": 4`
	f.Add([]byte(tinyByteLevel(string(pre), vocab, `{"id": 5, "content": "<s>", "special": true}`, "BPE")), 6)
	f.Add([]byte(tinyByteLevel(string(pre), vocab, "", "BPE")), 0)
	f.Add([]byte(tinyByteLevel(`{"type": "ByteLevel"}`, vocab, "", "BPE")), 3)
	f.Add([]byte(`{"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}]}, "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>", "vocab": {"<unk>": 0, "<0x41>": 1, "▁": 2, "a": 3, "▁a": 4}, "merges": [["▁", "a"]]}, "added_tokens": [{"id": 0, "content": "<unk>", "special": true}]}`), 8)
	f.Add([]byte(`{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}`), 0)
	f.Add([]byte(`{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 9}, "merges": ["a a", ["a", "b"]]}}`), 0)
	f.Add([]byte(`null`), 0)
	f.Add([]byte(`{"model": null}`), 1)
	side := fstest.MapFS{
		"tokenizer_config.json": {Data: []byte(`{"bos_token": "<s>", "eos_token": {"content": "a"}}`)},
		"config.json":           {Data: []byte(`{"pad_token_id": 1, "mask_token_id": -3}`)},
	}
	f.Fuzz(func(t *testing.T, data []byte, vocabSize int) {
		vocabSize %= 1 << 12
		if vocabSize < 0 {
			vocabSize = -vocabSize
		}
		fsys := fstest.MapFS{"tokenizer.json": {Data: data}}
		for k, v := range side {
			fsys[k] = v
		}
		v, _, err := LoadTokenizerJSONFS(fsys, JSONOptions{VocabSize: vocabSize})
		if err != nil {
			return
		}
		if len(v.Types) != len(v.Tokens) || (v.Scores != nil && len(v.Scores) != len(v.Tokens)) {
			t.Fatalf("lengths: %d tokens, %d types, %d scores", len(v.Tokens), len(v.Types), len(v.Scores))
		}
		if vocabSize > 0 && len(v.Tokens) != vocabSize {
			t.Fatalf("%d tokens, vocab_size %d", len(v.Tokens), vocabSize)
		}
		for _, id := range []int32{v.BOS, v.EOS, v.UNK, v.PAD, v.SEP, v.CLS, v.MASK, v.EOT} {
			if id < NoToken || id >= int32(len(v.Tokens)) {
				t.Fatalf("special id %d outside the vocabulary of %d", id, len(v.Tokens))
			}
		}
		if v.Model != "gpt2" {
			return
		}
		tok, err := NewBPE(v)
		if err != nil {
			return
		}
		const text = "ab a"
		ids, err := tok.Encode(text, false, false)
		if err != nil {
			return // incomplete byte alphabet
		}
		if _, err := tok.Decode(ids); err != nil {
			t.Fatal(err)
		}
	})
}
