// Package format is the one place where the ternary GGUF weight layouts of
// every BitNet runtime are written down: each type is one small file behind
// the Format interface (type id, row-length rule, size, pack codes + scales →
// bytes, unpack → codes + scales, a scale as stored), and one row of the type
// table (specs in table.go: --outtype name, ggml type, runtime family,
// general.file_type and its ftype name, scale storage, quantization-version
// flag, parallel rows). Everything else derives from that table: convert's
// outtype list, parser and type policy, the --help lists and messages of
// hf2gguf/requant/verify, verify's scale tolerances (ScaleTolerance),
// requant's -v scale log, bench's ftype names. The gguf type traits (id,
// block elements, block bytes) stay in gguf/types.go (Spec.Block reads them).
//
//	file        type          id   block / row              scale                     runtime
//	i2s.go      I2_S x86      36   128 codes → 32 B         f32 per tensor, then pad   bitnet.cpp x86
//	i2s.go      I2_S arm      36   64 codes → 16 B          f32 per tensor             bitnet.cpp ARM (≥ 112f853)
//	i2s.go      I2_S x86-1x4  36   4 rows × 1 column → 1 B  f32 per tensor             bitnet.cpp x86 w/o ACT_PARALLEL
//	tl1.go      TL1           38   kernel tiling            f32 per tensor             bitnet.cpp ARM LUT
//	tl2.go      TL2           39   kernel tiling            f32 per tensor             bitnet.cpp x86 LUT
//	tq1_0.go    TQ1_0         34   256 → 54 B (base 3)      f16 per 256-block          llama.cpp
//	tq2_0.go    TQ2_0         35   256 → 66 B               f16 per 256-block          llama.cpp
//	q2_0.go     Q2_0          42   64 → 18 B (d first)      f16 per 64-block           llama.cpp (mainline)
//	q2_0_g128.go Q2_0_g128    42   128 → 34 B (read only)   f16 per 128-block          PrismML fork (legacy)
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
//  1. Add the ggml type id to gguf/types.go (a Type constant and its
//     typeTraits row; rowMetaSize if rows carry a prefix) and the llama
//     ftype (a FileType constant).
//  2. Write <type>.go here: a type implementing Format (Name, Type,
//     ScaleGroup, StoredScale, Check, Bytes, Encode, Decode, Scales), and
//     RuntimeChecker when the target runtime refuses shapes the layout can
//     hold. Reuse pack2 for a 2-bit interleave. Doc comments name the
//     upstream file and function. Add the row to specs (table.go); the
//     outtype, its policy, help texts and messages follow.
//  3. Tests here: the layout against hand-made or reference bytes
//     (<type>_test.go), and the format in the lists of format_test.go (all,
//     the scale round trip) that FuzzDecode and the round trips walk;
//     table_test.go checks the row against the Format (its RuntimeList
//     line names the outtypes per runtime).
//  4. The runtime: one file runtime/<type>.go with the kernel and its
//     registerWeightKernel row (activation form, dot product, get_rows),
//     and runtime/<type>_test.go against hand-computed values.
//  5. Docs: the table above and README's output-type lists (and its "which
//     file for which runtime" table when the type opens a new route).
//
// That is all Q2_0 took: `git show --stat` of its commit lists README.md,
// format/{doc.go, format_test.go, q2_0.go, q2_0_test.go, table.go,
// table_test.go}, gguf/types.go and runtime/{q2_0.go, q2_0_test.go}.
package format
