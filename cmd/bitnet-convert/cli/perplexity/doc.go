// Package perplexity is the `bitnet-convert perplexity` command: the
// perplexity of a text file under a GGUF model, each chunk run as one batch
// (the same logits as one token per call) and scored the way the golden
// README describes llama-perplexity's scoring.
package perplexity
