package kernels

// Integer cores of the ternary weight types the runtime reads besides I2_S:
// mainline llama.cpp's TQ1_0, TQ2_0 (with Q8_K activations) and Q2_0 (with
// Q8_0 activations), and ik_llama.cpp's IQ1_BN, IQ2_BN (with Q8_K64
// activations). Each function returns exact integer sums (int32, wrapping
// as Go's int32 addition wraps, which no real row reaches); the caller
// applies the scales in its reference's float order (runtime/tq.go,
// runtime/q2_0.go, runtime/iqbn.go), so the float results do not depend on
// the kernel. The pure-Go references are in ternary_ref.go.

// TernaryAccelerated reports whether SumsQ2_0, SumsIQ2BN, SumsIQ1BN,
// LanesTQ2_0 and LanesTQ1_0 run in assembly on this machine (amd64 with
// AVX2; not with the purego tag, not on arm64 yet). Callers with a faster
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
