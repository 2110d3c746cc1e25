// Package codegen is the `bitnet-convert codegen` command: it writes
// include/bitnet-lut-kernels.h and include/kernel_config.ini for bitnet.cpp's
// TL1 (ARM) or TL2 (x86) lookup-table kernels.
//
//	bitnet-convert codegen [--arch tl1|tl2] (--model NAME | --from-config DIR)
//	                       [--BM a,b,… --BK … --bm …] [--outdir DIR]
//
// --arch defaults to the host as bitnet.cpp's setup_env.py decides: tl1 on
// arm64, tl2 everywhere else. --model takes a preset name (package presets);
// presets with a setup_env.py kernel table use it, the others (2B-4T,
// Falcon3, embedding models) derive their shapes from the preset's config
// like --from-config. --from-config DIR reads DIR/config.json. Without
// --BM/--BK/--bm the preset's values or format.ConfigFor's choice are used;
// with them, all three must be given, one comma-separated value per shape
// (spaces allowed). Every rule is checked before anything is written; every
// violation is reported and the exit code is 2.
package codegen
