// Package tokenizer turns Hugging Face tokenizers (SentencePiece
// tokenizer.model, tokenizer.json) into GGUF vocabularies (Vocab) and
// tokenizes text with a GGUF vocabulary the way llama.cpp does (SentencePiece
// "llama" with byte fallback, byte-level BPE "gpt2").
package tokenizer
