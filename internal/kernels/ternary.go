package kernels

// Dot-product kernels of the weight types the runtime reads besides I2_S
// and F16: mainline llama.cpp's TQ1_0, TQ2_0 (with Q8_K activations) and
// Q2_0 (with Q8_0 activations), ik_llama.cpp's IQ1_BN, IQ2_BN (with Q8_K64
// activations), and the Q8_0 and Q6_K types of quantized output heads.
// The Sums* and Lanes* functions return exact integer sums (int32,
// wrapping as Go's int32 addition wraps, which no real row reaches) for a
// caller that applies the scales itself (runtime/iqbn.go); DotQ2_0 and the
// Acc* functions also do the reference's float steps, in its order. The
// pure-Go twins are in ternary_ref.go.

// TernaryAccelerated reports whether SumsQ2_0, SumsIQ2BN, SumsIQ1BN,
// LanesTQ2_0 and LanesTQ1_0 run in assembly on this machine (amd64 with
// AVX2, where DotQ2_0 and the Acc* functions also need FMA; arm64 with
// NEON, always; never with the purego tag). Callers with a faster
// pure-Go method of their own (the runtime's TQ lookup tables) use it
// otherwise; the sums are the same either way.
func TernaryAccelerated() bool { return ternaryAccelerated() }

// Block sizes in bytes and in weights of the types below (ggml-common.h
// block_q2_0, block_tq1_0, block_tq2_0; ik_llama.cpp's block_iq1_bn,
// block_iq2_bn).
const (
	q2_0Bytes  = 18 // f16 d, qs[16]
	tq1Bytes   = 54 // qs[48], qh[4], f16 d
	tq2Bytes   = 66 // qs[64], f16 d
	iq1bnBytes = 13 // ql[12], extra
	iq2bnBytes = 16 // qs[16]
)

// SumsQ2_0 writes, for the Q2_0 blocks of row (18 bytes each: an f16 scale,
// then 16 bytes whose byte j holds the 2-bit codes c of weights 4j…4j+3 in
// bits 0-1, 2-3, 4-5, 6-7; ggml-common.h block_q2_0), sums[2i+k] = Σ
// (c − 1)·q over the 32 weights of block i's half k, q the int8 codes of
// the Q8_0 activation: the integer sums of mainline llama.cpp's
// ggml_vec_dot_q2_0_q8_0_generic (ggml/src/ggml-cpu/quants.c). It panics if
// len(row) is not a multiple of 18, len(sums) < 2·blocks or len(q) <
// 64·blocks.
func SumsQ2_0(sums []int32, row []byte, q []int8) {
	nb := len(row) / q2_0Bytes
	if len(row)%q2_0Bytes != 0 || len(sums) < 2*nb || len(q) < 64*nb {
		panic("kernels: SumsQ2_0 length mismatch")
	}
	if nb > 0 {
		sumsQ2_0(sums, row, q)
	}
}

// SumsIQ2BN returns the four Q8_K64 group sums Σ c·q (codes c ∈ 0…3 as
// stored, not c − 1) of the IQ2_BN blocks (16 bytes per 64 weights: byte j
// of block b holds the codes of weights 64b + j + 16i in bits 2i) against
// the int8 codes q, group g holding the weights e with (e mod 16)/4 = g:
// the exact lane sums of ik_llama.cpp's mul_mat_iq2bn_q8_K64
// (ggml/src/iqk/iqk_gemm_1bit.cpp, AVX2). It panics if len(blocks) is not a
// multiple of 16 or len(q) < 4·len(blocks).
func SumsIQ2BN(blocks []byte, q []int8) (s [4]int32) {
	if len(blocks)%iq2bnBytes != 0 || len(q) < 4*len(blocks) {
		panic("kernels: SumsIQ2BN length mismatch")
	}
	if len(blocks) > 0 {
		sumsIQ2BN(&s, blocks, q)
	}
	return s
}

// SumsIQ1BN returns the four Q8_K64 group sums Σ c·q (base-3 digits c ∈
// 0…2) of the IQ1_BN blocks (13 bytes per 64 weights; format.IQ1BN: for
// each 16-weight group i16, byte 3·i16 + k holds weights 16·i16 + 5k + j,
// j < 5, digit j = ((v·3^(4−j)) mod 256)·3 >> 8, and digit i16 of byte 12
// weight 16·i16 + 15) against the int8 codes q, group g holding the
// weights e with (e mod 16)/4 = g: the exact lane sums of ik_llama.cpp's
// mul_mat_iq1bn_q8_K64 (ggml/src/iqk/iqk_gemm_1bit.cpp, AVX2). It panics
// if len(blocks) is not a multiple of 13 or len(q) < 64·blocks.
func SumsIQ1BN(blocks []byte, q []int8) (s [4]int32) {
	nb := len(blocks) / iq1bnBytes
	if len(blocks)%iq1bnBytes != 0 || len(q) < 64*nb {
		panic("kernels: SumsIQ1BN length mismatch")
	}
	if nb > 0 {
		sumsIQ1BN(&s, blocks, q)
	}
	return s
}

// LanesTQ2_0 writes, for each TQ2_0 block b of row (66 bytes: byte 32h + m
// of qs[64] holds the codes c of weights 128h + 32l + m in bits 2l, then
// an f16 scale; ggml-common.h block_tq2_0), the eight integer lanes
// lanes[8b+L] = Σ c·q over the weights i of the block with (i mod 32)/4 =
// L, q the block's 256 Q8_K codes: the lanes of ggml_vec_dot_tq2_0_q8_K's
// AVX2 branch before it subtracts the Q8_K bsums (ggml/src/ggml-quants.c
// of bitnet.cpp's llama.cpp fork 406a5036, as in mainline). It panics if
// len(row) is not a multiple of 66, len(lanes) < 8·blocks or len(q) <
// 256·blocks.
func LanesTQ2_0(lanes []int32, row []byte, q []int8) {
	nb := len(row) / tq2Bytes
	if len(row)%tq2Bytes != 0 || len(lanes) < 8*nb || len(q) < 256*nb {
		panic("kernels: LanesTQ2_0 length mismatch")
	}
	if nb > 0 {
		lanesTQ2_0(lanes, row, q)
	}
}

// LanesTQ1_0 is LanesTQ2_0 for TQ1_0 blocks (54 bytes; format.TQ1_0: qs[m]
// holds weights m + 32n, qs[32+m] weights 160 + m + 16n, qh[j] weights
// 240 + j + 4n, digit n of byte v being ((v·3^n) mod 256)·3 >> 8, then an
// f16 scale): lanes[8b+L] = Σ digit·q over the block's weights i with
// (i mod 32)/4 = L, the lanes of ggml_vec_dot_tq1_0_q8_K's AVX2 branch
// before the bsums. It panics if len(row) is not a multiple of 54,
// len(lanes) < 8·blocks or len(q) < 256·blocks.
func LanesTQ1_0(lanes []int32, row []byte, q []int8) {
	nb := len(row) / tq1Bytes
	if len(row)%tq1Bytes != 0 || len(lanes) < 8*nb || len(q) < 256*nb {
		panic("kernels: LanesTQ1_0 length mismatch")
	}
	if nb > 0 {
		lanesTQ1_0(lanes, row, q)
	}
}

// DotQ2_0 returns one Q2_0 row (len(row) a multiple of 18, SumsQ2_0's
// layout, f16 scale d_x first in each block) times a Q8_0 activation
// (codes q, f16-widened block scales d) as mainline llama.cpp's
// ggml_vec_dot_q2_0_q8_0_generic (ggml/src/ggml-cpu/quants.c) computes it
// in its reference build (gcc -ffp-contract=fast, so each a += b·c is one
// fused multiply-add): per block i, with S_k the SumsQ2_0 sums, sumi =
// fma(0, d[2i], S_0), sumi = fma(sumi, d[2i+1], S_1), sumf = fma(sumf,
// d_x, sumi), in ascending block order, each rounded to float32 (FMA32).
// It panics if len(row) is not a multiple of 18, len(q) < 64·blocks or
// len(d) < 2·blocks.
func DotQ2_0(row []byte, q []int8, d []float32) float32 {
	nb := len(row) / q2_0Bytes
	if len(row)%q2_0Bytes != 0 || len(q) < 64*nb || len(d) < 2*nb {
		panic("kernels: DotQ2_0 length mismatch")
	}
	if nb == 0 {
		return 0
	}
	return dotQ2_0(row, q, d)
}

// AccTQ2_0 adds the float lanes of ggml_vec_dot_tq2_0_q8_K's AVX2 branch
// (ggml/src/ggml-quants.c of bitnet.cpp's llama.cpp fork 406a5036, as in
// mainline) for the TQ2_0 blocks of row (LanesTQ2_0's layout, the f16 d_x
// last in each block) and a Q8_K activation (codes q, block scales d,
// bsums the sums of 16 consecutive codes) to acc: per block b, with
// lane_L from LanesTQ2_0, s_L = lane_L − bsums[16b+2L] − bsums[16b+2L+1]
// and e = d[b]·d_x (float32), acc_L = fma(acc_L, s_L, e) when fused (gcc
// contracting _mm256_add_ps(_mm256_mul_ps(…), sumf): mainline's build),
// else acc_L + float32(s_L·e) rounded twice (bitnet.cpp's clang build).
// The caller reduces acc (hsum_float_8). It panics if len(row) is not a
// multiple of 66, len(q) < 256·blocks, len(bsums) < 16·blocks or len(d) <
// blocks.
func AccTQ2_0(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused bool) {
	nb := len(row) / tq2Bytes
	if len(row)%tq2Bytes != 0 || len(q) < 256*nb || len(bsums) < 16*nb || len(d) < nb {
		panic("kernels: AccTQ2_0 length mismatch")
	}
	if nb > 0 {
		accTQ(acc, row, q, bsums, d, fused, false)
	}
}

// AccTQ1_0 is AccTQ2_0 for TQ1_0 blocks (LanesTQ1_0's layout, 54 bytes):
// ggml_vec_dot_tq1_0_q8_K's AVX2 lanes and accumulation. It panics if
// len(row) is not a multiple of 54, len(q) < 256·blocks, len(bsums) <
// 16·blocks or len(d) < blocks.
func AccTQ1_0(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused bool) {
	nb := len(row) / tq1Bytes
	if len(row)%tq1Bytes != 0 || len(q) < 256*nb || len(bsums) < 16*nb || len(d) < nb {
		panic("kernels: AccTQ1_0 length mismatch")
	}
	if nb > 0 {
		accTQ(acc, row, q, bsums, d, fused, true)
	}
}

// AccQ8_0 adds the float lanes of ggml_vec_dot_q8_0_q8_0's AVX2 branch
// (ggml/src/ggml-quants.c of bitnet.cpp's llama.cpp fork 406a5036) for the
// Q8_0 blocks of row (34 bytes: f16 d_w, 32 int8 weights; ggml-common.h
// block_q8_0) and a Q8_0 activation (codes q, block scales d) to acc: per
// block b, lane l takes the exact Σ w·q over bytes 4l…4l+3 and acc_l =
// fma(acc_l, d_w·d[b], float32(sum)) (the product rounded to float32). The
// caller reduces acc. It panics if len(row) is not a multiple of 34, len(q)
// < 32·blocks or len(d) < blocks.
func AccQ8_0(acc *[8]float32, row []byte, q []int8, d []float32) {
	nb := len(row) / q8_0Bytes
	if len(row)%q8_0Bytes != 0 || len(q) < 32*nb || len(d) < nb {
		panic("kernels: AccQ8_0 length mismatch")
	}
	if nb > 0 {
		accQ8_0(acc, row, q, d)
	}
}

// q8_0Bytes is sizeof(block_q8_0).
const q8_0Bytes = 34

// AccQ6K adds the float lanes of ggml_vec_dot_q6_K_q8_K's AVX2 branch
// (ggml/src/ggml-quants.c of bitnet.cpp's llama.cpp fork 406a5036) for the
// Q6_K blocks of row (210 bytes: ql[128] low nibbles, qh[64] high 2-bit
// fields, int8 scales[16], f16 d_x; ggml-common.h block_q6_K) and a Q8_K
// activation (codes q, block scales d) to acc: per block b and half h, the
// 6-bit code of weight 128h + 32k + p (k < 4, p < 32) is ql[64h + 32(k mod
// 2) + p] (low nibble for k < 2, high for k ≥ 2) | ((qh[32h + p] >> 2k) & 3)
// << 4; lane (p mod 32)/4 takes the exact Σ scale·(code − 32)·q, scale =
// scales[8h + 2k + p/16]; then acc_l = fma(acc_l, d[b]·d_x, float32(lane_l)).
// The caller reduces acc. It panics if len(row) is not a multiple of 210,
// len(q) < 256·blocks or len(d) < blocks.
func AccQ6K(acc *[8]float32, row []byte, q []int8, d []float32) {
	nb := len(row) / q6KBytes
	if len(row)%q6KBytes != 0 || len(q) < 256*nb || len(d) < nb {
		panic("kernels: AccQ6K length mismatch")
	}
	if nb > 0 {
		accQ6K(acc, row, q, d)
	}
}

// q6KBytes is sizeof(block_q6_K).
const q6KBytes = 210
