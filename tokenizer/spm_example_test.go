package tokenizer_test

import (
	"fmt"
	"log"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// Build the GGUF vocabulary of a Hugging Face checkpoint that ships a
// SentencePiece tokenizer.model; vocab_size 512 comes from its config.json.
func ExampleLoadSentencePiece() {
	v, warnings, err := tokenizer.LoadSentencePiece("../testdata/golden/tiny-bitnet/hf", 512)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Model, v.Pre, len(v.Tokens), len(warnings))
	fmt.Println(v.Tokens[:4], v.Types[:4])
	fmt.Println("bos", v.BOS, "eos", v.EOS, "add_bos", *v.AddBOS)
	for _, kv := range v.KVs()[6:] {
		fmt.Println(kv.Key, "=", kv.Value)
	}
	// Output:
	// llama default 512 0
	// [<unk> <s> </s> <0x00>] [2 3 3 6]
	// bos 1 eos 2 add_bos true
	// tokenizer.ggml.eos_token_id = 2
	// tokenizer.ggml.add_bos_token = true
	// tokenizer.ggml.add_eos_token = false
}

// Tokenize with the vocabulary stored in a GGUF file, as the runtime does.
func ExampleFromGGUF() {
	f, err := reader.Open("../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.New(v) // "llama" → *tokenizer.SPM
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
	// [1 413 480 414 271 417 313 269 421 427]
	// "Hello world"
}

// Special-token text is split off only with parseSpecial; Piece renders
// single tokens the way llama-tokenize prints them.
func ExampleSPM_Encode() {
	v, _, err := tokenizer.LoadSentencePiece("../testdata/golden/tiny-bitnet/hf", 512)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.NewSPM(v)
	if err != nil {
		log.Fatal(err)
	}
	plain, _ := tok.Encode("</s>", false, false)
	special, _ := tok.Encode("</s>", false, true)
	fmt.Println(plain, special)
	for _, id := range plain {
		p, _ := tok.Piece(id, true)
		fmt.Printf("%q ", p)
	}
	fmt.Println()
	// Output:
	// [376 430 420 474] [2]
	// " <" "/" "s" ">"
}
