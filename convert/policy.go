package convert

import (
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// typePolicy is the output ggml type per (outtype, tensor class). Norms and
// other 1-D tensors are F32 in every outtype. With i2_s / tl1 / tl2 the token
// embedding and an untied head are F16: bitnet.cpp's llama-quantize would
// store a tied token_embd as Q8_0 when hidden % 256 ≠ 0; we keep F16 (see
// README). Spec conversion.md §2.5.
var typePolicy = map[OutType]map[tensormap.Class]gguf.Type{
	OutI2S:  {tensormap.Projection: gguf.TypeI2S, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTL1:  {tensormap.Projection: gguf.TypeTL1, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutTL2:  {tensormap.Projection: gguf.TypeTL2, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutF32:  {tensormap.Projection: gguf.TypeF32, tensormap.Embedding: gguf.TypeF32, tensormap.Output: gguf.TypeF32, tensormap.Norm: gguf.TypeF32},
	OutF16:  {tensormap.Projection: gguf.TypeF16, tensormap.Embedding: gguf.TypeF16, tensormap.Output: gguf.TypeF16, tensormap.Norm: gguf.TypeF32},
	OutBF16: {tensormap.Projection: gguf.TypeBF16, tensormap.Embedding: gguf.TypeBF16, tensormap.Output: gguf.TypeBF16, tensormap.Norm: gguf.TypeF32},
}

// fileTypes is general.file_type per outtype (llama ftype; I2_S is 40).
var fileTypes = map[OutType]gguf.FileType{
	OutI2S:  gguf.FileTypeMostlyI2S,
	OutTL1:  gguf.FileTypeMostlyTL1,
	OutTL2:  gguf.FileTypeMostlyTL2,
	OutF32:  gguf.FileTypeAllF32,
	OutF16:  gguf.FileTypeMostlyF16,
	OutBF16: gguf.FileTypeMostlyBF16,
}

// quantizationVersion marks files whose ternary tensors went through the
// quantizer (llama-quantize writes general.quantization_version = 2 for I2_S;
// bitnet.cpp's TL files carry none).
var quantizationVersion = map[OutType]bool{OutI2S: true}

// fallbackType is what a projection becomes with --allow-fallback when its row
// length does not fit the packing.
const fallbackType = gguf.TypeF16
