// Package modelfile explains why a GGUF file cannot be run: a vocab-only
// file (hf2gguf --vocab-only, llama.cpp's ggml-vocab-*.gguf) has a tokenizer
// and hyper-parameters but no tensors, and the runtime's "tensor
// token_embd.weight: missing" would not say so.
package modelfile

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// Explain returns err unchanged unless path is a GGUF file with no tensors,
// in which case it returns a one-line error saying the file is vocab-only
// and what works on it. cmd names the command for the message.
func Explain(cmd, path string, err error) error {
	if err == nil {
		return nil
	}
	f, oerr := reader.Open(path)
	if oerr != nil {
		return err
	}
	defer f.Close()
	if len(f.Tensors) != 0 {
		return err
	}
	return fmt.Errorf("%s is a vocab-only GGUF (tokenizer and hyper-parameters, no tensors): %s needs a converted model; `bitnet-convert tokenize -m %s` works on it", path, cmd, path)
}
