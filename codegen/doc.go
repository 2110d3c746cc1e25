// Package codegen generates bitnet.cpp's shape-specialised lookup-table
// kernels: include/bitnet-lut-kernels.h and include/kernel_config.ini for TL1
// (ARM) or TL2 (x86 AVX2), replacing utils/codegen_tl{1,2}.py of
// microsoft/BitNet (spec codegen.md).
//
// Conventions:
//   - A Kernel is one weight shape [M, K] (HF [out, in]; ggml ne[1], ne[0])
//     with its tiling BM (rows per tile), BK (K columns per block) and Bm
//     (rows per compute block). Lists are in the model's shape order.
//   - kernel_config.ini is byte-identical to the reference generators' output
//     (Python ConfigParser, lower-case keys: "bm" = BM, "bmm" = bm).
//   - The header is our own C++ from text/template. It exports the API that
//     ggml-bitnet-lut.cpp calls (ggml_preprocessor, ggml_qgemm_lut,
//     ggml_bitnet_transform_tensor, is_type_supported), reads weights in the
//     layouts of quantize.TransformTL1 / TransformTL2 and computes spec §4's
//     arithmetic exactly; the TL2 kernels handle any batch size (the
//     reference's are wrong above 1, quirk 8). The header's own comment states
//     the calling contract.
//
// Validation (Validate) checks every rule of spec §2.1 and §2.2 — including
// BM % bm, TL1 BK % (256/bm) and K % 16, BK ≤ 256, TL2 BK % 24 and
// two_k ≤ 256, and positivity — before anything is rendered or written, and
// reports every violation, each naming the kernel index, M, K, the value and
// the rule.
//
// Shapes from a config.json (ShapesFromConfig) are, in this order and
// de-duplicated: q [heads·head_dim, hidden], k and v [kv_heads·head_dim,
// hidden], o [hidden, heads·head_dim], gate and up [intermediate, hidden],
// down [hidden, intermediate]; head_dim is config head_dim when present and
// not null, else hidden/heads.
//
// Tiling rule of ConfigFor (used by `codegen --from-config` and by the
// converter when no kernel_config.ini is given):
//   - bm = 32;
//   - BM = the largest multiple of 32 up to 256 that divides M;
//   - TL1: BK = the largest multiple of 16 up to 128 that divides K;
//   - TL2: BK = 96 if K % 96 is a multiple of 32 (setup_env.py's choice),
//     else the largest multiple of 24 up to 240 with K % BK a multiple of 32
//     (at most 256), else the shape is unsupported (e.g. K = 5460, BR-25).
//
// A shape with no valid tiling is reported by name with the reason.
package codegen
