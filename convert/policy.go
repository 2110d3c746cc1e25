package convert

import (
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// typePolicy is the output ggml type per (outtype, tensor class). Norms and
// other 1-D tensors are F32 in every outtype. With i2_s / tl1 / tl2 the token
// embedding and an untied head are F16: bitnet.cpp's llama-quantize would
// store a tied token_embd as Q8_0 when hidden % 256 ≠ 0; we keep F16 (see
// README). Spec conversion.md §2.5.
var typePolicy = map[OutType]map[tensormap.Class]gguf.Type{
	OutI2S:   {tensormap.Projection: gguf.TypeI2S, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTL1:   {tensormap.Projection: gguf.TypeTL1, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTL2:   {tensormap.Projection: gguf.TypeTL2, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTQ1_0: {tensormap.Projection: gguf.TypeTQ1_0, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTQ2_0: {tensormap.Projection: gguf.TypeTQ2_0, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutIQ1BN: {tensormap.Projection: gguf.TypeIQ1BN, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutIQ2BN: {tensormap.Projection: gguf.TypeIQ2BN, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutF32:   {tensormap.Projection: gguf.TypeF32, tensormap.Embedding: gguf.TypeF32, tensormap.Output: gguf.TypeF32, tensormap.Norm: gguf.TypeF32},
	OutF16:   {tensormap.Projection: gguf.TypeF16, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutBF16:  {tensormap.Projection: gguf.TypeBF16, tensormap.Embedding: gguf.TypeBF16, tensormap.Output: gguf.TypeBF16, tensormap.Norm: gguf.TypeF32},
}

// fileTypes is general.file_type per outtype (llama ftype; I2_S is 40).
var fileTypes = map[OutType]gguf.FileType{
	OutI2S:   gguf.FileTypeMostlyI2S,
	OutTL1:   gguf.FileTypeMostlyTL1,
	OutTL2:   gguf.FileTypeMostlyTL2,
	OutTQ1_0: gguf.FileTypeMostlyTQ1_0,
	OutTQ2_0: gguf.FileTypeMostlyTQ2_0,
	OutIQ1BN: gguf.FileTypeMostlyIQ1BN,
	OutIQ2BN: gguf.FileTypeMostlyIQ2BN,
	OutF32:   gguf.FileTypeAllF32,
	OutF16:   gguf.FileTypeMostlyF16,
	OutBF16:  gguf.FileTypeMostlyBF16,
}

// quantizationVersion marks files whose ternary tensors went through the
// quantizer (llama-quantize writes general.quantization_version = 2 for I2_S;
// bitnet.cpp's TL files carry none).
var quantizationVersion = map[OutType]bool{OutI2S: true, OutTQ1_0: true, OutTQ2_0: true, OutIQ1BN: true, OutIQ2BN: true}

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
