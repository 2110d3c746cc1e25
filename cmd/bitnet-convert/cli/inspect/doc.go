// Package inspect is the `bitnet-convert inspect FILE [--json]` command: it
// prints what a GGUF file holds — path, version, alignment, data offset, every
// metadata KV (arrays shortened to their count and first 8 items) and every
// tensor (name, type by name and ggml id such as I2_S(36), ne in GGUF order,
// offset relative to the data section, bytes, and for I2_S/TL1/TL2 the
// float32 per-tensor scale stored at gguf.ScaleOffset).
//
// It reads through gguf/reader, so every check of the reader applies: a
// damaged file fails with one line naming the file and what is wrong (BR-28).
package inspect
