// Package quantize holds the pure ternary math of BitNet b1.58 conversion:
// abs-mean ternarization (BitnetModel.weight_quant in bitnet.cpp's
// utils/convert-hf-to-gguf-bitnet.py), unpacking of pre-quantized uint8
// checkpoints, ggml's reference Q8_0 and Q6_K quantizers (for token_embd and
// the head), and half-float conversions (bf16, f16) with an f16 range check.
// The ternary GGUF layouts (I2_S, TL1, TL2, TQ*_0, IQ*_BN) live in the format
// package.
//
// Conventions:
//   - Tensors are flat slices in HF row-major order ([out, in], element
//     r·K + c) unless a function says otherwise.
//   - Ternary codes are int8 values in {-1, 0, +1}; 2-bit codes on disk are
//     code = t + 1 ∈ {0, 1, 2}.
//   - All arithmetic that the reference does in float32 is done in float32
//     here, and rounding is half to even (torch.round, math.RoundToEven).
//   - When a slice is written in place it is called dst. A length mismatch
//     between arguments is a programmer error and panics with a message
//     prefixed "quantize: "; data errors are returned as error values.
package quantize
