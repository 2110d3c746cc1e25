package convert

import "github.com/bitnet-convert/bitnet-convert/gguf"

// DecodeFloats widens a float tensor's data of type typ (F32, F16, BF16,
// Q8_0, Q6_K) into dst (len = its element count), as requant reads it.
// Other types are an error naming the type.
func DecodeFloats(dst []float32, typ gguf.Type, data []byte) error {
	return decodeFloats(dst, typ, data)
}

// EncodeFloats stores x in typ (F32, F16, BF16, Q8_0 or Q6_K, ggml's
// reference quantizers) into dst (exactly gguf.NBytes long), as requant
// retypes a tensor. F16 fails on values beyond its range; other types are
// an error naming the type.
func EncodeFloats(dst []byte, typ gguf.Type, x []float32) error {
	return encodeFloats(dst, typ, x)
}
