// Minimal stand-in for bitnet.cpp's include/ggml-bitnet.h (and the few ggml.h
// pieces it needs), written for bitnet-convert's codegen tests. It declares
// exactly what the generated bitnet-lut-kernels.h uses: the TL ggml types,
// struct ggml_tensor's type/ne/data/extra fields, bitnet_tensor_extra and the
// dispatch prototypes of GGML_BITNET_ARM_TL1 / GGML_BITNET_X86_TL2.
#pragma once

#include <stdint.h>
#include <stddef.h>

#define GGML_API

enum ggml_type {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_I2_S = 36,
    GGML_TYPE_TL1 = 38,
    GGML_TYPE_TL2 = 39,
};

struct ggml_tensor {
    enum ggml_type type;
    int64_t ne[4];
    size_t nb[4];
    void * data;
    void * extra;
};

typedef float bitnet_float_type;

#ifdef __cplusplus
extern "C" {
#endif

struct bitnet_tensor_extra {
    int lut_scales_size;
    int BK;
    int n_tile_num;
    uint8_t * qweights;
    bitnet_float_type * scales;
};

GGML_API void ggml_bitnet_transform_tensor(struct ggml_tensor * tensor);

#if defined(GGML_BITNET_ARM_TL1)
GGML_API void ggml_qgemm_lut(int m, int k, void * A, void * LUT, void * Scales, void * LUT_Scales, void * C);
GGML_API void ggml_preprocessor(int m, int k, void * B, void * LUT_Scales, void * QLUT);
#endif
#if defined(GGML_BITNET_X86_TL2)
GGML_API void ggml_qgemm_lut(int bs, int m, int k, int BK, void * A, void * sign, void * LUT, void * Scales, void * LUT_Scales, void * C);
GGML_API void ggml_preprocessor(int bs, int m, int three_k, int two_k, void * B, void * LUT_Scales, void * Three_QLUT, void * Two_QLUT);
#endif

#ifdef __cplusplus
}
#endif
