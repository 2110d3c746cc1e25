// Package presets holds the known BitNet b1.58 models as embedded TOML files
// (one per model, presets/*.toml): the Hugging Face repository, the model's
// config.json, whether the checkpoint ships packed ternary weights, which
// tokenizer family it uses and, where bitnet.cpp's setup_env.py has them, the
// TL1/TL2 kernel tilings it passes to codegen_tl{1,2}.py.
//
// Conventions:
//   - Kernel shapes are [M, K] = [output rows, input columns], i.e. HF
//     [out, in] order (ggml ne[1], ne[0]), in the reference's list order.
//   - BM is the rows per tile, BK the K columns per block, bm the rows of one
//     SIMD compute block (spec codegen.md §1.1).
//   - Config holds config.json as decoded from TOML: integers are int64,
//     reals float64, arrays []any, objects map[string]any. JSON null has no
//     TOML form, so a null-valued key is omitted from the table (a comment in
//     the .toml records it); readers must treat a missing key and a null key
//     the same way.
//   - Codegen is present only for the models that setup_env.py lists with their
//     own shape table (bitnet_b1_58-large, bitnet_b1_58-3B,
//     Llama3-8B-1.58-100B-tokens; spec codegen.md §1.2, §1.3). The reference
//     also maps BitNet-b1.58-2B-4T and Falcon3 onto the 3B / Llama3 tables,
//     which have the wrong shapes (quirk 12); for those callers derive the
//     shapes from Config instead.
package presets
