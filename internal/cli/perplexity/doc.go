// Package perplexity is the `bitnet-convert perplexity` command: the
// perplexity of a text file under a GGUF model, scored one token per call
// the way the golden README describes llama-perplexity's scoring.
package perplexity
