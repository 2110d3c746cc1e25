package format

// NormInEpsilonSuffix is the KV ({arch}.attention.norm_in_rms_epsilon, f32)
// holding the eps of the per-projection input RMSNorms
// ("blk.N.<proj>_norm_in.weight") of a causal model: transformers'
// quantization_config.rms_norm_eps for use_rms_norm checkpoints, 1e-8 for
// BitNet Distillation's (formats-2026.md §3). bitnet.cpp's embedding models
// carry no such key: their *_norm_in use {arch}.attention.layer_norm_rms_epsilon,
// which is what a reader should fall back to when the key is absent. It is
// this project's key; no other runtime reads it.
const NormInEpsilonSuffix = ".attention.norm_in_rms_epsilon"
