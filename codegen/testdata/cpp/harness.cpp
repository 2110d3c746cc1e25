// Test harness for generated bitnet-lut-kernels.h (bitnet-convert codegen
// tests). Build with -DGGML_BITNET_X86_TL2 (and -mavx2) or
// -DGGML_BITNET_ARM_TL1, with the generated include/ and this directory on
// the include path. Usage: harness MANIFEST, where each manifest line is
//   M K bs weights.bin acts.bin out.bin
// weights.bin = the full GGUF tensor data of a TL1/TL2 tensor (ne = [K, M]),
// acts.bin = bs*K float32, out.bin receives bs*M float32. The harness drives
// the kernels exactly as ggml-bitnet-lut.cpp does: transform_tensor, then
// ggml_preprocessor, then ggml_qgemm_lut once per tile (TL2: triple part for
// every tile, then pair part for every tile).
#include "bitnet-lut-kernels.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<unsigned char> read_file(const char * path) {
    std::vector<unsigned char> buf;
    FILE * f = std::fopen(path, "rb");
    if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
    std::fseek(f, 0, SEEK_END);
    long n = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    buf.resize((size_t)n + 64);
    if (std::fread(buf.data(), 1, (size_t)n, f) != (size_t)n) { std::fprintf(stderr, "short read %s\n", path); std::exit(1); }
    std::fclose(f);
    return buf;
}

int main(int argc, char ** argv) {
    if (argc != 2) { std::fprintf(stderr, "usage: harness MANIFEST\n"); return 2; }
    FILE * man = std::fopen(argv[1], "r");
    if (!man) { std::fprintf(stderr, "cannot open %s\n", argv[1]); return 1; }
    int M, K, bs;
    char wpath[4096], apath[4096], opath[4096];
    while (std::fscanf(man, "%d %d %d %4095s %4095s %4095s", &M, &K, &bs, wpath, apath, opath) == 6) {
        std::vector<unsigned char> w = read_file(wpath);
        std::vector<unsigned char> a = read_file(apath);
        ggml_tensor t = {};
#if defined(GGML_BITNET_X86_TL2)
        t.type = GGML_TYPE_TL2;
#else
        t.type = GGML_TYPE_TL1;
#endif
        t.ne[0] = K; t.ne[1] = M; t.ne[2] = 1; t.ne[3] = 1;
        t.data = w.data();
        // Other types and unlisted shapes must be left alone (no extra, no crash).
        ggml_tensor other = t;
        other.type = GGML_TYPE_Q4_0;
        ggml_bitnet_transform_tensor(&other);
        ggml_tensor unlisted = t;
        unlisted.ne[1] = M + 1;
        ggml_bitnet_transform_tensor(&unlisted);
        if (other.extra || unlisted.extra) { std::fprintf(stderr, "transform accepted a Q4_0 or unlisted tensor\n"); return 1; }
        ggml_bitnet_transform_tensor(&t);
        if (!t.extra) { std::fprintf(stderr, "no kernel for M=%d K=%d\n", M, K); return 1; }
        bitnet_tensor_extra * e = (bitnet_tensor_extra *)t.extra;
        const int n_tile = e->n_tile_num;
        const int BM = M / n_tile;
        std::vector<float> C((size_t)bs * M);
        float * B = (float *)a.data();
#if defined(GGML_BITNET_X86_TL2)
        const int three_k = K / e->BK * e->BK, two_k = K - three_k;
        std::vector<float> ls(bs);
        std::vector<int16_t> q3((size_t)bs * three_k / 3 * 16 + 16), q2((size_t)bs * two_k / 2 * 16 + 16);
        ggml_preprocessor(bs, M, three_k, two_k, B, ls.data(), q3.data(), q2.data());
        uint8_t * A = e->qweights;
        uint8_t * sign = A + (size_t)three_k * M / 6;
        uint8_t * A2 = sign + (size_t)three_k * M / 24;
        for (int i = 0; i < n_tile; i++) {
            ggml_qgemm_lut(bs, M, K, three_k, A + (size_t)i * BM * three_k / 6, sign + (size_t)i * BM * three_k / 24,
                           q3.data(), e->scales, ls.data(), C.data() + (size_t)i * BM);
        }
        for (int i = 0; i < n_tile; i++) {
            ggml_qgemm_lut(bs, M, K, two_k, A2 + (size_t)i * BM * two_k / 4, nullptr, q2.data(), e->scales, ls.data(),
                           C.data() + (size_t)i * BM);
        }
#else
        if (bs != 1) { std::fprintf(stderr, "TL1 runs one activation row\n"); return 1; }
        float ls = 0;
        std::vector<int16_t> q((size_t)K / 2 * 16);
        ggml_preprocessor(M, K, B, &ls, q.data());
        for (int i = 0; i < n_tile; i++) {
            ggml_qgemm_lut(M, K, e->qweights + (size_t)i * ((size_t)M * K / 4) / n_tile, q.data(), e->scales, &ls,
                           C.data() + (size_t)i * BM);
        }
#endif
        FILE * o = std::fopen(opath, "wb");
        if (!o || std::fwrite(C.data(), sizeof(float), C.size(), o) != C.size()) { std::fprintf(stderr, "cannot write %s\n", opath); return 1; }
        std::fclose(o);
    }
    std::fclose(man);
    return 0;
}
