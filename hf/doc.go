// Package hf reads a Hugging Face checkpoint directory (config.json plus one or
// more *.safetensors files) tensor by tensor, without loading the model into
// memory, and writes safetensors files for tests and the dummy-model
// generator.
//
// Conventions:
//   - Shapes are in HF (PyTorch) order, e.g. [out_features, in_features] for a
//     linear weight; a 0-d tensor has Shape [] and one element. Reversing to
//     GGUF ne order is the caller's job.
//   - The input directory is only read. Shard files are memory-mapped lazily
//     on first Read and stay mapped until Close; TensorData.Release drops the
//     pages of one tensor so resident memory does not grow with the model.
//   - No alignment is assumed for safetensors data (the JSON header may have
//     any length), and all offsets are 64-bit.
//   - Errors name the file and, where there is one, the tensor or config key.
//
// The safetensors header is parsed here rather than with
// github.com/nlpodyssey/safetensors, whose ReadMetadata wants the whole file
// in one buffer: Open reads only the 8-byte length and the JSON header of each
// shard (bounded by MaxHeaderBytes before allocation), and validation errors
// name the file and tensor.
package hf
