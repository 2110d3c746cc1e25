// Package tokenize is the `bitnet-convert tokenize` command: tokenize a
// prompt with the vocabulary stored in a GGUF file, the way llama.cpp's
// llama-tokenize does, to check what the runtime will see.
//
// It follows the cli/cli layout: TokenizeOptions holds the parsed flags,
// NewCmdTokenize only parses them, and tokenizeRun does the work.
package tokenize
