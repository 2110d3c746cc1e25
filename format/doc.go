// Package format is the one place where the ternary GGUF weight layouts of
// every BitNet runtime are written down: each type is one small file behind
// the Format interface (type id, row-length rule, size, pack codes + scales →
// bytes, unpack → codes + scales, a scale as stored), and the type table
// (Lookup, ForType) maps --outtype names and ggml type ids to them.
//
//	file        type          id   block / row              scale                     runtime
//	i2s.go      I2_S x86      36   128 codes → 32 B         f32 per tensor, then pad   bitnet.cpp x86
//	i2s.go      I2_S arm      36   64 codes → 16 B          f32 per tensor             bitnet.cpp ARM (≥ 112f853)
//	i2s.go      I2_S x86-1x4  36   4 rows × 1 column → 1 B  f32 per tensor             bitnet.cpp x86 w/o ACT_PARALLEL
//	tl1.go      TL1           38   kernel tiling            f32 per tensor             bitnet.cpp ARM LUT
//	tl2.go      TL2           39   kernel tiling            f32 per tensor             bitnet.cpp x86 LUT
//	tq1_0.go    TQ1_0         34   256 → 54 B (base 3)      f16 per 256-block          llama.cpp
//	tq2_0.go    TQ2_0         35   256 → 66 B               f16 per 256-block          llama.cpp
//	iq1_bn.go   IQ1_BN       134   row: f16 + 64 → 13 B     f16 per row                ik_llama.cpp
//	iq2_bn.go   IQ2_BN       135   row: f32 + 64 → 16 B     f32 per row                ik_llama.cpp
//
// The 2-bit layouts (I2_S x86/arm, TQ2_0, IQ2_BN) share one interleave
// (pack2.go): only the group width and the slot order differ. Sources of the
// facts (read, not copied): microsoft/BitNet src/ggml-bitnet-mad.cpp
// quantize_i2_s at 16da220; ggml-org/llama.cpp ggml/src/ggml-quants.c
// quantize_row_tq{1,2}_0_ref and dequantize_row_tq{1,2}_0;
// ikawrakow/ik_llama.cpp ggml/src/iqk/iqk_quantize.cpp
// IQ1BNQuantizer::quantize_one_row_{1,2}bn and dequantize_row_iq{1,2}_bn;
// bitnet.cpp's utils/convert-hf-to-gguf-bitnet.py preprocess_weights_tl{1,2}.
// Every layout is checked byte for byte against those tools' own files in
// golden_test.go.
//
// Codes are the ternary values −1, 0, +1 in HF row-major order ([out, in] =
// [M, K]; GGUF ne = [K, M]). Scales are float32, one per scale group
// (ScaleGroup: the whole tensor, a row, or a 256-block). Regroup converts
// scales between granularities the way ggml's quantizers see dequantized
// ternary weights (a group's scale is its max |w|; an all-zero group has
// scale 0), so converting between any two formats keeps every code, and the
// scales only lose what the target stores (f16 for TQ and IQ1_BN).
//
// The TL1/TL2 tiling model lives here too (kernel.go, kernelconfig.go,
// derive.go): the Kernel list, kernel_config.ini read and write, the BM/BK/bm
// rules (Validate), their derivation from shapes (ConfigFor) and the lookup
// (LookupKernel). The codegen package keeps only the C++ kernel templates.
//
// # Adding a format
//
//  1. Add the ggml type id to gguf/types.go (typeTraits; rowMetaSize if rows
//     carry a prefix) and, if it has one, the llama ftype.
//  2. Write <type>.go here: a type implementing Format (Name, Type,
//     ScaleGroup, Check, Bytes, Encode, Decode), and RuntimeChecker when the
//     target runtime refuses shapes the layout can hold. Reuse pack2 for a
//     2-bit interleave. Doc comments name the upstream file and function.
//  3. Add a row to specs (format.go) with its --outtype name, runtime family
//     and file type, and a case to ForType.
//  4. If the runtime needs another arch name, extend TargetArch (target.go).
//  5. Add the outtype to convert (OutType, typePolicy, fileTypes,
//     quantizationVersion in convert/policy.go); hf2gguf, requant, verify and
//     inspect then handle it through this package.
//  6. Copy a file made by the reference tool into testdata/golden/ (say where
//     from in testdata/README.md) and add it to golden_test.go; the round trip
//     in roundtrip_test.go and FuzzDecode cover the rest. Add the type to
//     README's "which file for which runtime" table.
package format
