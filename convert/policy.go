package convert

import (
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// floatPolicy is the output ggml type per (float outtype, tensor class).
// Norms and other 1-D tensors are F32 in every outtype.
var floatPolicy = map[OutType]map[tensormap.Class]gguf.Type{
	OutF32:  {tensormap.Projection: gguf.TypeF32, tensormap.Embedding: gguf.TypeF32, tensormap.Output: gguf.TypeF32, tensormap.Norm: gguf.TypeF32},
	OutF16:  {tensormap.Projection: gguf.TypeF16, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutBF16: {tensormap.Projection: gguf.TypeBF16, tensormap.Embedding: gguf.TypeBF16, tensormap.Output: gguf.TypeBF16, tensormap.Norm: gguf.TypeF32},
}

// floatFileTypes is general.file_type of the float outtypes.
var floatFileTypes = map[OutType]gguf.FileType{OutF32: gguf.FileTypeAllF32, OutF16: gguf.FileTypeMostlyF16, OutBF16: gguf.FileTypeMostlyBF16}

// typePolicy returns the output ggml type per tensor class for outtype o,
// and false for an unknown outtype. A ternary outtype (a row of format's
// type table) stores projections in its type, the token embedding and an
// untied head as F16 and norms as F32: bitnet.cpp's llama-quantize would
// store a tied token_embd as Q8_0 when hidden % 256 ≠ 0, mainline's
// llama-quantize picks Q6_K/Q4_K for Q2_0 and TQ; we keep F16 (see README), retypable with
// --token-embedding-type / --output-tensor-type. Spec conversion.md §2.5.
func typePolicy(o OutType) (map[tensormap.Class]gguf.Type, bool) {
	if s, ok := format.Lookup(string(o)); ok {
		return map[tensormap.Class]gguf.Type{tensormap.Projection: s.Type, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32}, true
	}
	p, ok := floatPolicy[o]
	return p, ok
}

// fileType is general.file_type for outtype o (the type table's llama
// ftype for a ternary outtype; I2_S is 40).
func fileType(o OutType) gguf.FileType {
	if s, ok := format.Lookup(string(o)); ok {
		return s.FileType
	}
	return floatFileTypes[o]
}

// quantizationVersion reports whether files of outtype o carry
// general.quantization_version (the type table's QuantVersion).
func quantizationVersion(o OutType) bool {
	s, ok := format.Lookup(string(o))
	return ok && s.QuantVersion
}

// floatTypes are the types --token-embedding-type and --output-tensor-type
// accept (as llama-quantize names them, case-insensitive).
var floatTypes = []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K}

// ParseFloatType parses a --token-embedding-type / --output-tensor-type
// value: F32, F16, BF16, Q8_0 or Q6_K.
func ParseFloatType(s string) (gguf.Type, error) {
	for _, t := range floatTypes {
		if strings.EqualFold(t.String(), s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("type %q is not supported (supported: F32, F16, BF16, Q8_0, Q6_K)", s)
}

// fallbackType is what a projection becomes with --allow-fallback when its row
// length does not fit the packing.
const fallbackType = gguf.TypeF16
