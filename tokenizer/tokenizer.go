package tokenizer

import "fmt"

// Tokenizer encodes text to token ids and back with a GGUF vocabulary, as
// llama.cpp's llama_tokenize / llama_token_to_piece do.
type Tokenizer interface {
	// Encode tokenizes text. With addSpecial, BOS (and EOS) are added as the
	// vocabulary's add_bos/add_eos flags say. parseSpecial makes the text of
	// control/user-defined tokens map to their ids instead of being split.
	Encode(text string, addSpecial, parseSpecial bool) ([]int32, error)
	// Decode concatenates the pieces of ids as text.
	Decode(ids []int32) (string, error)
	// Vocab returns the vocabulary the tokenizer was built from.
	Vocab() *Vocab
	// AddsBOS reports whether Encode with addSpecial puts BOS first: the
	// one add-BOS rule (Vocab.AddsBOS), which perplexity also follows for
	// the BOS it puts at the start of every chunk.
	AddsBOS() bool
}

// builders maps tokenizer.ggml.model values to constructors; each
// implementation file registers itself in an init function.
var builders = map[string]func(*Vocab) (Tokenizer, error){}

// New returns the tokenizer for v.Model ("llama" or "gpt2"). An unknown model
// is an error naming it. On error the returned interface is nil itself, not
// an interface holding a nil *SPM or *BPE, so callers may test tok == nil.
func New(v *Vocab) (Tokenizer, error) {
	b, ok := builders[v.Model]
	if !ok {
		return nil, fmt.Errorf("tokenizer model %q is not supported (supported: llama, gpt2)", v.Model)
	}
	tok, err := b(v)
	if err != nil {
		return nil, err
	}
	return tok, nil
}
