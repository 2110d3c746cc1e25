// Package bench is the `bitnet-convert bench` command: llama-bench's
// prompt-processing (ppN) and text-generation (tgN) speed tests on a GGUF
// model in the pure-Go runtime, printed as llama-bench's markdown table
// (examples/llama-bench/llama-bench.cpp of bitnet.cpp's llama.cpp fork,
// markdown_printer), as JSON or as CSV (-o json|csv).
package bench
