package tokenizer_test

import (
	"fmt"
	"log"
	"testing/fstest"

	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// A byte-level BPE tokenizer.json with the Llama-3 split pattern becomes a
// gpt2/llama-bpe vocabulary, padded to the model's vocab_size, and the
// runtime tokenizer built from it encodes with BOS and merges.
func ExampleLoadTokenizerJSONFS() {
	fsys := fstest.MapFS{
		"tokenizer.json": {Data: []byte(`{
  "added_tokens": [{"id": 12, "content": "<|begin_of_text|>", "special": true}],
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"type": "ByteLevel", "use_regex": false}]},
  "model": {"type": "BPE",
    "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7, "ll": 8, "He": 9, "Hell": 10, "Hello": 11},
    "merges": ["l l", "H e", ["He", "ll"], "Hell o"]}}`)},
		"tokenizer_config.json": {Data: []byte(`{"bos_token": "<|begin_of_text|>"}`)},
	}
	v, warnings, err := tokenizer.LoadTokenizerJSONFS(fsys, tokenizer.JSONOptions{VocabSize: 14})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Model, v.Pre, len(v.Tokens), v.Tokens[13], v.BOS, v.Merges, len(warnings))

	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	ids, err := tok.Encode("Hello world", true, false)
	if err != nil {
		log.Fatal(err)
	}
	text, err := tok.Decode(ids)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ids)
	fmt.Printf("%q\n", text)
	// Output:
	// gpt2 llama-bpe 14 [PAD13] 12 [l l H e He ll Hell o] 0
	// [12 11 4 5 3 6 2 7]
	// "<|begin_of_text|>Hello world"
}
