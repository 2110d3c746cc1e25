//go:build !purego

// NEON kernels for arm64, written by hand: each computes exactly what its
// pure-Go reference in ref.go computes (see the comment of each TEXT). The
// Go assembler has no mnemonics for SMLAL, SADALP, FCVTL, the vector FADD/
// FMUL/FADDP and UMAXV, so those are WORD encodings with the instruction in
// the comment (each checked against GNU as when written).
//
// Registers: R0-R5 and V0-V31 only (no callee-saved registers in ABI0).

#include "textflag.h"

// func dotI2SNEON(row []byte, q []int8) int32
//
// dotI2SRef's arithmetic: for each 32-byte block the four 2-bit fields of
// the 32 code bytes (0…3, as signed bytes) are multiplied with the matching
// activation bytes by SMLAL/SMLAL2 into 32 int16 accumulators, one per byte
// position (wrapping, like the reference's int16 lanes); after each group of
// up to 32 blocks ADDP adds positions 2l and 2l+1 (still wrapping in 16
// bits: that is lane l of bitnet.cpp's kernel) and SADALP widens the lanes
// into four int32 sums.
TEXT ·dotI2SNEON(SB), NOSPLIT, $0-52
	MOVD row_base+0(FP), R0
	MOVD row_len+8(FP), R2
	MOVD q_base+24(FP), R1
	LSR  $5, R2, R2 // blocks of 32 bytes
	VMOVI $3, V31.B16
	VEOR V28.B16, V28.B16, V28.B16 // int32 sums

group:
	CBZ  R2, done
	MOVD $32, R3
	CMP  R3, R2
	CSEL LT, R2, R3, R3 // R3 = min(R2, 32) blocks in this group
	SUB  R3, R2, R2
	VEOR V24.B16, V24.B16, V24.B16 // int16 sums, byte positions 0-7
	VEOR V25.B16, V25.B16, V25.B16 // 8-15
	VEOR V26.B16, V26.B16, V26.B16 // 16-23
	VEOR V27.B16, V27.B16, V27.B16 // 24-31

block:
	VLD1.P 32(R0), [V0.B16, V1.B16]
	VLD1.P 64(R1), [V8.B16, V9.B16, V10.B16, V11.B16]
	VLD1.P 64(R1), [V12.B16, V13.B16, V14.B16, V15.B16]

	// bits 7-6: elements j (activations 0-31)
	VUSHR $6, V0.B16, V2.B16
	VUSHR $6, V1.B16, V3.B16
	WORD $0x0e288058 // smlal v24.8h, v2.8b, v8.8b
	WORD $0x4e288059 // smlal2 v25.8h, v2.16b, v8.16b
	WORD $0x0e29807a // smlal v26.8h, v3.8b, v9.8b
	WORD $0x4e29807b // smlal2 v27.8h, v3.16b, v9.16b

	// bits 5-4: elements j+32
	VUSHR $4, V0.B16, V2.B16
	VUSHR $4, V1.B16, V3.B16
	VAND  V31.B16, V2.B16, V2.B16
	VAND  V31.B16, V3.B16, V3.B16
	WORD $0x0e2a8058 // smlal v24.8h, v2.8b, v10.8b
	WORD $0x4e2a8059 // smlal2 v25.8h, v2.16b, v10.16b
	WORD $0x0e2b807a // smlal v26.8h, v3.8b, v11.8b
	WORD $0x4e2b807b // smlal2 v27.8h, v3.16b, v11.16b

	// bits 3-2: elements j+64
	VUSHR $2, V0.B16, V2.B16
	VUSHR $2, V1.B16, V3.B16
	VAND  V31.B16, V2.B16, V2.B16
	VAND  V31.B16, V3.B16, V3.B16
	WORD $0x0e2c8058 // smlal v24.8h, v2.8b, v12.8b
	WORD $0x4e2c8059 // smlal2 v25.8h, v2.16b, v12.16b
	WORD $0x0e2d807a // smlal v26.8h, v3.8b, v13.8b
	WORD $0x4e2d807b // smlal2 v27.8h, v3.16b, v13.16b

	// bits 1-0: elements j+96
	VAND  V31.B16, V0.B16, V2.B16
	VAND  V31.B16, V1.B16, V3.B16
	WORD $0x0e2e8058 // smlal v24.8h, v2.8b, v14.8b
	WORD $0x4e2e8059 // smlal2 v25.8h, v2.16b, v14.16b
	WORD $0x0e2f807a // smlal v26.8h, v3.8b, v15.8b
	WORD $0x4e2f807b // smlal2 v27.8h, v3.16b, v15.16b

	SUBS $1, R3, R3
	BNE  block

	VADDP V25.H8, V24.H8, V24.H8 // lanes 0-7: positions (0,1) … (14,15), wrapping
	VADDP V27.H8, V26.H8, V26.H8 // lanes 8-15
	WORD $0x4e606b1c // sadalp v28.4s, v24.8h
	WORD $0x4e606b5c // sadalp v28.4s, v26.8h
	B    group

done:
	VADDV V28.S4, V28
	VMOV  V28.S[0], R4
	MOVW  R4, ret+48(FP)
	RET

// func dotF16NEON(w []uint16, x []float32) float32
//
// dotF16BodyRef over len(w) elements (a multiple of 32): accumulator j of
// the reference is V24+2j (lanes 0-3) and V25+2j (lanes 4-7); each step
// widens eight F16 weights with FCVTL/FCVTL2 (exact), multiplies (FMUL,
// rounded) and adds (FADD, rounded): no fused multiply-add. The reduction
// is reduce8x4's: acc0+acc2, acc1+acc3, their sum, lanes l and l+4, then
// FADDP twice for (t0+t1)+(t2+t3).
TEXT ·dotF16NEON(SB), NOSPLIT, $0-52
	MOVD w_base+0(FP), R0
	MOVD w_len+8(FP), R2
	MOVD x_base+24(FP), R1
	LSR  $5, R2, R2
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16

loop:
	CBZ    R2, reduce
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R1), [V20.S4, V21.S4, V22.S4, V23.S4]
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786a // fcvtl v10.4s, v3.4h
	WORD $0x4e21786b // fcvtl2 v11.4s, v3.8h
	WORD $0x6e30dc84 // fmul v4.4s, v4.4s, v16.4s
	WORD $0x6e31dca5 // fmul v5.4s, v5.4s, v17.4s
	WORD $0x6e32dcc6 // fmul v6.4s, v6.4s, v18.4s
	WORD $0x6e33dce7 // fmul v7.4s, v7.4s, v19.4s
	WORD $0x6e34dd08 // fmul v8.4s, v8.4s, v20.4s
	WORD $0x6e35dd29 // fmul v9.4s, v9.4s, v21.4s
	WORD $0x6e36dd4a // fmul v10.4s, v10.4s, v22.4s
	WORD $0x6e37dd6b // fmul v11.4s, v11.4s, v23.4s
	WORD $0x4e24d718 // fadd v24.4s, v24.4s, v4.4s
	WORD $0x4e25d739 // fadd v25.4s, v25.4s, v5.4s
	WORD $0x4e26d75a // fadd v26.4s, v26.4s, v6.4s
	WORD $0x4e27d77b // fadd v27.4s, v27.4s, v7.4s
	WORD $0x4e28d79c // fadd v28.4s, v28.4s, v8.4s
	WORD $0x4e29d7bd // fadd v29.4s, v29.4s, v9.4s
	WORD $0x4e2ad7de // fadd v30.4s, v30.4s, v10.4s
	WORD $0x4e2bd7ff // fadd v31.4s, v31.4s, v11.4s
	SUB    $1, R2, R2
	B      loop

reduce:
	WORD $0x4e3cd718 // fadd v24.4s, v24.4s, v28.4s
	WORD $0x4e3ed75a // fadd v26.4s, v26.4s, v30.4s
	WORD $0x4e3ad718 // fadd v24.4s, v24.4s, v26.4s
	WORD $0x4e3dd739 // fadd v25.4s, v25.4s, v29.4s
	WORD $0x4e3fd77b // fadd v27.4s, v27.4s, v31.4s
	WORD $0x4e3bd739 // fadd v25.4s, v25.4s, v27.4s
	WORD $0x4e39d718 // fadd v24.4s, v24.4s, v25.4s
	WORD $0x6e38d718 // faddp v24.4s, v24.4s, v24.4s
	WORD $0x7e30db18 // faddp s24, v24.2s
	FMOVS F24, ret+48(FP)
	RET

// func absMaxBitsNEON(x []float32) uint32
//
// absMaxBitsRef over len(x) elements (a multiple of 32): the sign bit
// cleared by a left then a right shift, unsigned maxima, UMAXV.
TEXT ·absMaxBitsNEON(SB), NOSPLIT, $0-28
	MOVD x_base+0(FP), R0
	MOVD x_len+8(FP), R2
	LSR  $5, R2, R2
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16

amloop:
	CBZ    R2, amreduce
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VSHL   $1, V0.S4, V0.S4
	VSHL   $1, V1.S4, V1.S4
	VSHL   $1, V2.S4, V2.S4
	VSHL   $1, V3.S4, V3.S4
	VSHL   $1, V4.S4, V4.S4
	VSHL   $1, V5.S4, V5.S4
	VSHL   $1, V6.S4, V6.S4
	VSHL   $1, V7.S4, V7.S4
	VUMAX  V0.S4, V24.S4, V24.S4
	VUMAX  V1.S4, V25.S4, V25.S4
	VUMAX  V2.S4, V26.S4, V26.S4
	VUMAX  V3.S4, V27.S4, V27.S4
	VUMAX  V4.S4, V24.S4, V24.S4
	VUMAX  V5.S4, V25.S4, V25.S4
	VUMAX  V6.S4, V26.S4, V26.S4
	VUMAX  V7.S4, V27.S4, V27.S4
	SUB    $1, R2, R2
	B      amloop

amreduce:
	VUMAX V25.S4, V24.S4, V24.S4
	VUMAX V27.S4, V26.S4, V26.S4
	VUMAX V26.S4, V24.S4, V24.S4
	VUSHR $1, V24.S4, V24.S4
	WORD $0x6eb0ab18 // umaxv s24, v24.4s
	VMOV  V24.S[0], R4
	MOVW  R4, ret+24(FP)
	RET

// func quantI8SNEON(dst []int8, x []float32, scale float32) int32
//
// quantI8SRef over len(x) elements (a multiple of 16, all finite): FMUL by
// the scale (rounded to float32), FRINTN (nearest, ties to even), FMIN/FMAX
// clamp to [−128, 127], FCVTZS (exact on integral values), the int32 codes
// summed lane-wise and narrowed to bytes by XTN/XTN2 (in range, so no
// truncation).
TEXT ·quantI8SNEON(SB), NOSPLIT, $0-60
	MOVD  dst_base+0(FP), R0
	MOVD  x_base+24(FP), R1
	MOVD  x_len+32(FP), R2
	LSR   $4, R2, R2
	FMOVS scale+48(FP), F31
	VDUP  V31.S[0], V31.S4
	MOVW  $0x42fe0000, R5 // 127.0
	VDUP  R5, V29.S4
	MOVW  $0xc3000000, R5 // -128.0
	VDUP  R5, V30.S4
	VEOR  V28.B16, V28.B16, V28.B16

qloop:
	CBZ    R2, qdone
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x6e3fdc00 // fmul v0.4s, v0.4s, v31.4s
	WORD $0x6e3fdc21 // fmul v1.4s, v1.4s, v31.4s
	WORD $0x6e3fdc42 // fmul v2.4s, v2.4s, v31.4s
	WORD $0x6e3fdc63 // fmul v3.4s, v3.4s, v31.4s
	WORD $0x4e218800 // frintn v0.4s, v0.4s
	WORD $0x4e218821 // frintn v1.4s, v1.4s
	WORD $0x4e218842 // frintn v2.4s, v2.4s
	WORD $0x4e218863 // frintn v3.4s, v3.4s
	WORD $0x4ebdf400 // fmin v0.4s, v0.4s, v29.4s
	WORD $0x4ebdf421 // fmin v1.4s, v1.4s, v29.4s
	WORD $0x4ebdf442 // fmin v2.4s, v2.4s, v29.4s
	WORD $0x4ebdf463 // fmin v3.4s, v3.4s, v29.4s
	WORD $0x4e3ef400 // fmax v0.4s, v0.4s, v30.4s
	WORD $0x4e3ef421 // fmax v1.4s, v1.4s, v30.4s
	WORD $0x4e3ef442 // fmax v2.4s, v2.4s, v30.4s
	WORD $0x4e3ef463 // fmax v3.4s, v3.4s, v30.4s
	WORD $0x4ea1b800 // fcvtzs v0.4s, v0.4s
	WORD $0x4ea1b821 // fcvtzs v1.4s, v1.4s
	WORD $0x4ea1b842 // fcvtzs v2.4s, v2.4s
	WORD $0x4ea1b863 // fcvtzs v3.4s, v3.4s
	VADD   V0.S4, V28.S4, V28.S4
	VADD   V1.S4, V28.S4, V28.S4
	VADD   V2.S4, V28.S4, V28.S4
	VADD   V3.S4, V28.S4, V28.S4
	WORD $0x0e612804 // xtn v4.4h, v0.4s
	WORD $0x4e612824 // xtn2 v4.8h, v1.4s
	WORD $0x0e612845 // xtn v5.4h, v2.4s
	WORD $0x4e612865 // xtn2 v5.8h, v3.4s
	WORD $0x0e212886 // xtn v6.8b, v4.8h
	WORD $0x4e2128a6 // xtn2 v6.16b, v5.8h
	VST1.P [V6.B16], 16(R0)
	SUB    $1, R2, R2
	B      qloop

qdone:
	VADDV V28.S4, V28
	VMOV  V28.S[0], R4
	MOVW  R4, ret+56(FP)
	RET

// func dotI2SRowsNEON(dst []float32, rows []byte, rowB int, q []int8, sumf, s, scale float32)
//
// dotI2SRowsRef: dotI2SNEON's sums over each of len(dst) consecutive rows
// of rowB bytes (R0 runs through all of them; q is re-read from its start
// for every row), then the epilogue in scalar float32 as the AVX2 kernel
// does it: SCVTF (exact below 2^24, rounded to nearest even above, as
// Go's float32(int32)), FSUB sumf, FDIV s, FMUL scale, each rounded once.
TEXT ·dotI2SRowsNEON(SB), NOSPLIT, $0-92
	MOVD  dst_base+0(FP), R8
	MOVD  dst_len+8(FP), R9
	MOVD  rows_base+24(FP), R0
	MOVD  rowB+48(FP), R7
	MOVD  q_base+56(FP), R6
	FMOVS sumf+80(FP), F29
	FMOVS s+84(FP), F30
	FMOVS scale+88(FP), F31
	LSR   $5, R7, R7 // blocks per row
	VMOVI $3, V23.B16

rrow:
	CBZ  R9, rdone
	MOVD R6, R1
	MOVD R7, R2
	VEOR V28.B16, V28.B16, V28.B16 // int32 sums of this row

rgroup:
	CBZ  R2, rrowend
	MOVD $32, R3
	CMP  R3, R2
	CSEL LT, R2, R3, R3 // R3 = min(R2, 32) blocks in this group
	SUB  R3, R2, R2
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16

rblock:
	VLD1.P 32(R0), [V0.B16, V1.B16]
	VLD1.P 64(R1), [V8.B16, V9.B16, V10.B16, V11.B16]
	VLD1.P 64(R1), [V12.B16, V13.B16, V14.B16, V15.B16]
	VUSHR $6, V0.B16, V2.B16
	VUSHR $6, V1.B16, V3.B16
	WORD $0x0e288058 // smlal v24.8h, v2.8b, v8.8b
	WORD $0x4e288059 // smlal2 v25.8h, v2.16b, v8.16b
	WORD $0x0e29807a // smlal v26.8h, v3.8b, v9.8b
	WORD $0x4e29807b // smlal2 v27.8h, v3.16b, v9.16b
	VUSHR $4, V0.B16, V2.B16
	VUSHR $4, V1.B16, V3.B16
	VAND  V23.B16, V2.B16, V2.B16
	VAND  V23.B16, V3.B16, V3.B16
	WORD $0x0e2a8058 // smlal v24.8h, v2.8b, v10.8b
	WORD $0x4e2a8059 // smlal2 v25.8h, v2.16b, v10.16b
	WORD $0x0e2b807a // smlal v26.8h, v3.8b, v11.8b
	WORD $0x4e2b807b // smlal2 v27.8h, v3.16b, v11.16b
	VUSHR $2, V0.B16, V2.B16
	VUSHR $2, V1.B16, V3.B16
	VAND  V23.B16, V2.B16, V2.B16
	VAND  V23.B16, V3.B16, V3.B16
	WORD $0x0e2c8058 // smlal v24.8h, v2.8b, v12.8b
	WORD $0x4e2c8059 // smlal2 v25.8h, v2.16b, v12.16b
	WORD $0x0e2d807a // smlal v26.8h, v3.8b, v13.8b
	WORD $0x4e2d807b // smlal2 v27.8h, v3.16b, v13.16b
	VAND  V23.B16, V0.B16, V2.B16
	VAND  V23.B16, V1.B16, V3.B16
	WORD $0x0e2e8058 // smlal v24.8h, v2.8b, v14.8b
	WORD $0x4e2e8059 // smlal2 v25.8h, v2.16b, v14.16b
	WORD $0x0e2f807a // smlal v26.8h, v3.8b, v15.8b
	WORD $0x4e2f807b // smlal2 v27.8h, v3.16b, v15.16b
	SUBS $1, R3, R3
	BNE  rblock

	VADDP V25.H8, V24.H8, V24.H8
	VADDP V27.H8, V26.H8, V26.H8
	WORD $0x4e606b1c // sadalp v28.4s, v24.8h
	WORD $0x4e606b5c // sadalp v28.4s, v26.8h
	B    rgroup

rrowend:
	VADDV  V28.S4, V28
	VMOV   V28.S[0], R4
	SCVTFWS R4, F0
	FSUBS  F29, F0, F0
	FDIVS  F30, F0, F0
	FMULS  F31, F0, F0
	FMOVS  F0, (R8)
	ADD    $4, R8, R8
	SUB    $1, R9, R9
	B      rrow

rdone:
	RET

// func dotF16RowsNEON(dst []float32, w []uint16, x []float32)
//
// dotF16RowsRef: dotF16NEON's steps and reduction for each of len(dst)
// consecutive rows of len(x) weights (a multiple of 32; R0 runs through
// all rows, x is re-read from its start for every row).
TEXT ·dotF16RowsNEON(SB), NOSPLIT, $0-72
	MOVD dst_base+0(FP), R8
	MOVD dst_len+8(FP), R9
	MOVD w_base+24(FP), R0
	MOVD x_base+48(FP), R6
	MOVD x_len+56(FP), R7
	LSR  $5, R7, R7

frow:
	CBZ  R9, fdone
	MOVD R6, R1
	MOVD R7, R2
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16

floop:
	CBZ    R2, freduce
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R1), [V20.S4, V21.S4, V22.S4, V23.S4]
	WORD $0x0e217804 // fcvtl v4.4s, v0.4h
	WORD $0x4e217805 // fcvtl2 v5.4s, v0.8h
	WORD $0x0e217826 // fcvtl v6.4s, v1.4h
	WORD $0x4e217827 // fcvtl2 v7.4s, v1.8h
	WORD $0x0e217848 // fcvtl v8.4s, v2.4h
	WORD $0x4e217849 // fcvtl2 v9.4s, v2.8h
	WORD $0x0e21786a // fcvtl v10.4s, v3.4h
	WORD $0x4e21786b // fcvtl2 v11.4s, v3.8h
	WORD $0x6e30dc84 // fmul v4.4s, v4.4s, v16.4s
	WORD $0x6e31dca5 // fmul v5.4s, v5.4s, v17.4s
	WORD $0x6e32dcc6 // fmul v6.4s, v6.4s, v18.4s
	WORD $0x6e33dce7 // fmul v7.4s, v7.4s, v19.4s
	WORD $0x6e34dd08 // fmul v8.4s, v8.4s, v20.4s
	WORD $0x6e35dd29 // fmul v9.4s, v9.4s, v21.4s
	WORD $0x6e36dd4a // fmul v10.4s, v10.4s, v22.4s
	WORD $0x6e37dd6b // fmul v11.4s, v11.4s, v23.4s
	WORD $0x4e24d718 // fadd v24.4s, v24.4s, v4.4s
	WORD $0x4e25d739 // fadd v25.4s, v25.4s, v5.4s
	WORD $0x4e26d75a // fadd v26.4s, v26.4s, v6.4s
	WORD $0x4e27d77b // fadd v27.4s, v27.4s, v7.4s
	WORD $0x4e28d79c // fadd v28.4s, v28.4s, v8.4s
	WORD $0x4e29d7bd // fadd v29.4s, v29.4s, v9.4s
	WORD $0x4e2ad7de // fadd v30.4s, v30.4s, v10.4s
	WORD $0x4e2bd7ff // fadd v31.4s, v31.4s, v11.4s
	SUB    $1, R2, R2
	B      floop

freduce:
	WORD $0x4e3cd718 // fadd v24.4s, v24.4s, v28.4s
	WORD $0x4e3ed75a // fadd v26.4s, v26.4s, v30.4s
	WORD $0x4e3ad718 // fadd v24.4s, v24.4s, v26.4s
	WORD $0x4e3dd739 // fadd v25.4s, v25.4s, v29.4s
	WORD $0x4e3fd77b // fadd v27.4s, v27.4s, v31.4s
	WORD $0x4e3bd739 // fadd v25.4s, v25.4s, v27.4s
	WORD $0x4e39d718 // fadd v24.4s, v24.4s, v25.4s
	WORD $0x6e38d718 // faddp v24.4s, v24.4s, v24.4s
	WORD $0x7e30db18 // faddp s24, v24.2s
	FMOVS F24, (R8)
	ADD   $4, R8, R8
	SUB   $1, R9, R9
	B     frow

fdone:
	RET

// The kernels of the other ternary and quantized types (references:
// ternary_ref.go). Codes are isolated as bytes (2-bit fields by shifts and
// masks; base-3 digits as described at sumsIQ1BNNEON) and multiplied with
// the signed activation bytes by SMULL/SMLAL (or SMLSL) into int16 lanes,
// one per byte position, whose sums stay far inside ±32767 (bounds at
// each kernel), so they are exact; ADDP/SADDLP/SADALP then add positions
// into the reference's int32 sums. Sums of int32 lanes wrap as the
// reference's int32 additions do.

// func q2NEON(row []byte, q []int8, sums []int32, d []float32) float32
//
// Q2_0 blocks (18 bytes: f16 d_x, qs[16]). LD4 de-interleaves the 64
// activation bytes so that V4+e byte j is q[4j+e], the weight of qs[j]
// bits 2e-2e+1; the codes minus one (−1…2) times q go to int16 lanes by
// SMULL/SMLAL (bytes 0-7: half 0, SMULL2/SMLAL2 bytes 8-15: half 1; four
// products of at most 256 per lane), ADDP, SADDLP and ADDP leave S_0 and
// S_1 in lanes 0 and 1. With d nil they are stored to sums (sumsQ2_0Ref);
// otherwise dotQ2_0Ref's float steps follow in scalar FMADDs (fused, each
// rounded once): sumi = fma(0, d[2i], S_0), sumi = fma(sumi, d[2i+1],
// S_1), sumf = fma(sumf, d_x, sumi), and sumf is returned (0 with d nil).
TEXT ·q2NEON(SB), NOSPLIT, $0-100
	MOVD  row_base+0(FP), R0
	MOVD  row_len+8(FP), R2
	MOVD  q_base+24(FP), R1
	MOVD  sums_base+48(FP), R3
	MOVD  d_base+72(FP), R7
	VMOVI $3, V31.B16
	VMOVI $1, V30.B16
	VEOR  V21.B16, V21.B16, V21.B16 // sumf
	VEOR  V20.B16, V20.B16, V20.B16 // +0.0

q2loop:
	ADD    $2, R0, R4
	VLD1   (R4), [V0.B16]
	VLD4.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	VAND   V31.B16, V0.B16, V1.B16
	VSUB   V30.B16, V1.B16, V1.B16
	WORD $0x0e24c030 // smull v16.8h, v1.8b, v4.8b
	WORD $0x4e24c031 // smull2 v17.8h, v1.16b, v4.16b
	VUSHR  $2, V0.B16, V1.B16
	VAND   V31.B16, V1.B16, V1.B16
	VSUB   V30.B16, V1.B16, V1.B16
	WORD $0x0e258030 // smlal v16.8h, v1.8b, v5.8b
	WORD $0x4e258031 // smlal2 v17.8h, v1.16b, v5.16b
	VUSHR  $4, V0.B16, V1.B16
	VAND   V31.B16, V1.B16, V1.B16
	VSUB   V30.B16, V1.B16, V1.B16
	WORD $0x0e268030 // smlal v16.8h, v1.8b, v6.8b
	WORD $0x4e268031 // smlal2 v17.8h, v1.16b, v6.16b
	VUSHR  $6, V0.B16, V1.B16
	VSUB   V30.B16, V1.B16, V1.B16
	WORD $0x0e278030 // smlal v16.8h, v1.8b, v7.8b
	WORD $0x4e278031 // smlal2 v17.8h, v1.16b, v7.16b
	VADDP  V17.H8, V16.H8, V16.H8
	WORD $0x4e602a10 // saddlp v16.4s, v16.8h
	VADDP  V16.S4, V16.S4, V16.S4 // S_0, S_1 in lanes 0, 1
	CBNZ   R7, q2dot
	VMOV   V16.D[0], R5
	MOVD.P R5, 8(R3)
	B      q2next

q2dot:
	VMOV    V16.S[0], R5
	SCVTFWS R5, F1
	VMOV    V16.S[1], R5
	SCVTFWS R5, F2
	FMOVS   (R7), F3
	FMOVS   4(R7), F4
	ADD     $8, R7, R7
	WORD $0x1f015065 // fmadd s5, s3, s1, s20
	WORD $0x1f021485 // fmadd s5, s4, s2, s5
	MOVHU   (R0), R5
	FMOVS   R5, F6
	WORD $0x0e2178c6 // fcvtl v6.4s, v6.4h
	WORD $0x1f0554d5 // fmadd s21, s6, s5, s21

q2next:
	ADD  $18, R0, R0
	SUBS $18, R2, R2
	BNE  q2loop
	FMOVS F21, ret+96(FP)
	RET

// func sumsIQ2BNNEON(s *[4]int32, blocks []byte, q []int8)
//
// sumsIQ2BNRef: per 16-byte block, codes (c >> 2i) & 3 of byte j belong to
// weight j + 16i, i.e. to the contiguous activation bytes q[16i…16i+15];
// SMULL/SMLAL put Σ_i code·q of byte position j in int16 lane j (at most
// 4·384), SADALP adds pairs of positions into int32 (V28: positions 0-7,
// V29: 8-15) and the final ADDP gives group g = positions 4g…4g+3.
TEXT ·sumsIQ2BNNEON(SB), NOSPLIT, $0-56
	MOVD  s+0(FP), R3
	MOVD  blocks_base+8(FP), R0
	MOVD  blocks_len+16(FP), R2
	MOVD  q_base+32(FP), R1
	VMOVI $3, V31.B16
	VEOR  V28.B16, V28.B16, V28.B16
	VEOR  V29.B16, V29.B16, V29.B16

iq2loop:
	VLD1.P 16(R0), [V0.B16]
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	VAND   V31.B16, V0.B16, V1.B16
	WORD $0x0e24c030 // smull v16.8h, v1.8b, v4.8b
	WORD $0x4e24c031 // smull2 v17.8h, v1.16b, v4.16b
	VUSHR  $2, V0.B16, V1.B16
	VAND   V31.B16, V1.B16, V1.B16
	WORD $0x0e258030 // smlal v16.8h, v1.8b, v5.8b
	WORD $0x4e258031 // smlal2 v17.8h, v1.16b, v5.16b
	VUSHR  $4, V0.B16, V1.B16
	VAND   V31.B16, V1.B16, V1.B16
	WORD $0x0e268030 // smlal v16.8h, v1.8b, v6.8b
	WORD $0x4e268031 // smlal2 v17.8h, v1.16b, v6.16b
	VUSHR  $6, V0.B16, V1.B16
	WORD $0x0e278030 // smlal v16.8h, v1.8b, v7.8b
	WORD $0x4e278031 // smlal2 v17.8h, v1.16b, v7.16b
	WORD $0x4e606a1c // sadalp v28.4s, v16.8h
	WORD $0x4e606a3d // sadalp v29.4s, v17.8h
	SUBS   $16, R2, R2
	BNE    iq2loop
	VADDP  V29.S4, V28.S4, V28.S4
	VST1   [V28.S4], (R3)
	RET

// func sumsIQ1BNNEON(s *[4]int32, blocks []byte, q []int8)
//
// sumsIQ1BNRef: per 13-byte block, bytes 0-7 and 5-12 are loaded into V0
// (bytes 0-7 and 8-15; never past the block). For each 16-weight group
// i16, TBL (iq1Index) puts under weight p the byte holding its digit and
// MUL (iq1Mul) multiplies it by 3^(4−j) modulo 256, j the digit's place;
// the digit ((v·3^k) mod 256)·3 >> 8 of that product x is 0, 1 or 2 as x
// is ≤ 85, ≤ 170 or above, so −digit is the sum of the two CMHI masks
// (x > 85, x > 170: −1 each). SMLSL subtracts −digit·q, adding digit·q to
// int16 lane p (four products of at most 256 per block), SADALP widens
// pairs into int32 and the final ADDP gives group (p mod 16)/4.
TEXT ·sumsIQ1BNNEON(SB), NOSPLIT, $0-56
	MOVD  s+0(FP), R3
	MOVD  blocks_base+8(FP), R0
	MOVD  blocks_len+16(FP), R2
	MOVD  q_base+32(FP), R1
	MOVD  $iq1Index<>(SB), R4
	VLD1  (R4), [V16.B16, V17.B16, V18.B16, V19.B16]
	MOVD  $iq1Mul<>(SB), R4
	VLD1  (R4), [V20.B16, V21.B16, V22.B16, V23.B16]
	VMOVI $85, V30.B16
	VMOVI $170, V31.B16
	VEOR  V26.B16, V26.B16, V26.B16
	VEOR  V27.B16, V27.B16, V27.B16

iq1loop:
	MOVD   (R0), R4
	MOVD   5(R0), R5
	VMOV   R4, V0.D[0]
	VMOV   R5, V0.D[1]
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR   V24.B16, V24.B16, V24.B16
	VEOR   V25.B16, V25.B16, V25.B16
	WORD $0x4e100001 // tbl v1.16b, {v0.16b}, v16.16b
	WORD $0x4e349c21 // mul v1.16b, v1.16b, v20.16b
	WORD $0x6e3e3422 // cmhi v2.16b, v1.16b, v30.16b
	WORD $0x6e3f3423 // cmhi v3.16b, v1.16b, v31.16b
	VADD   V3.B16, V2.B16, V2.B16
	WORD $0x0e24a058 // smlsl v24.8h, v2.8b, v4.8b
	WORD $0x4e24a059 // smlsl2 v25.8h, v2.16b, v4.16b
	WORD $0x4e110001 // tbl v1.16b, {v0.16b}, v17.16b
	WORD $0x4e359c21 // mul v1.16b, v1.16b, v21.16b
	WORD $0x6e3e3422 // cmhi v2.16b, v1.16b, v30.16b
	WORD $0x6e3f3423 // cmhi v3.16b, v1.16b, v31.16b
	VADD   V3.B16, V2.B16, V2.B16
	WORD $0x0e25a058 // smlsl v24.8h, v2.8b, v5.8b
	WORD $0x4e25a059 // smlsl2 v25.8h, v2.16b, v5.16b
	WORD $0x4e120001 // tbl v1.16b, {v0.16b}, v18.16b
	WORD $0x4e369c21 // mul v1.16b, v1.16b, v22.16b
	WORD $0x6e3e3422 // cmhi v2.16b, v1.16b, v30.16b
	WORD $0x6e3f3423 // cmhi v3.16b, v1.16b, v31.16b
	VADD   V3.B16, V2.B16, V2.B16
	WORD $0x0e26a058 // smlsl v24.8h, v2.8b, v6.8b
	WORD $0x4e26a059 // smlsl2 v25.8h, v2.16b, v6.16b
	WORD $0x4e130001 // tbl v1.16b, {v0.16b}, v19.16b
	WORD $0x4e379c21 // mul v1.16b, v1.16b, v23.16b
	WORD $0x6e3e3422 // cmhi v2.16b, v1.16b, v30.16b
	WORD $0x6e3f3423 // cmhi v3.16b, v1.16b, v31.16b
	VADD   V3.B16, V2.B16, V2.B16
	WORD $0x0e27a058 // smlsl v24.8h, v2.8b, v7.8b
	WORD $0x4e27a059 // smlsl2 v25.8h, v2.16b, v7.16b
	WORD $0x4e606b1a // sadalp v26.4s, v24.8h
	WORD $0x4e606b3b // sadalp v27.4s, v25.8h
	ADD    $13, R0, R0
	SUBS   $13, R2, R2
	BNE    iq1loop
	VADDP  V27.S4, V26.S4, V26.S4
	VST1   [V26.S4], (R3)
	RET

DATA iq1Index<>+0(SB)/8, $0x0101010000000000
DATA iq1Index<>+8(SB)/8, $0x0f02020202020101
DATA iq1Index<>+16(SB)/8, $0x0404040303030303
DATA iq1Index<>+24(SB)/8, $0x0f05050505050404
DATA iq1Index<>+32(SB)/8, $0x0707070606060606
DATA iq1Index<>+40(SB)/8, $0x0f0b0b0b0b0b0707
DATA iq1Index<>+48(SB)/8, $0x0d0d0d0c0c0c0c0c
DATA iq1Index<>+56(SB)/8, $0x0f0e0e0e0e0e0d0d
GLOBL iq1Index<>(SB), RODATA|NOPTR, $64
DATA iq1Mul<>+0(SB)/8, $0x091b510103091b51
DATA iq1Mul<>+8(SB)/8, $0x510103091b510103
DATA iq1Mul<>+16(SB)/8, $0x091b510103091b51
DATA iq1Mul<>+24(SB)/8, $0x1b0103091b510103
DATA iq1Mul<>+32(SB)/8, $0x091b510103091b51
DATA iq1Mul<>+40(SB)/8, $0x090103091b510103
DATA iq1Mul<>+48(SB)/8, $0x091b510103091b51
DATA iq1Mul<>+56(SB)/8, $0x030103091b510103
GLOBL iq1Mul<>(SB), RODATA|NOPTR, $64

// func tq2NEON(row []byte, q []int8, lanes []int32, acc *[8]float32, bsums []int16, d []float32, mode int)
//
// TQ2_0 blocks (66 bytes: qs[64], f16 d_x). For half h and field l, the
// codes (qs[32h+m] >> 2l) & 3 meet q[128h + 32l + m] in int16 lane m
// (V20: m 0-7, V21: 8-15, V22: 16-23, V23: 24-31; eight products of at
// most 384 per lane); three ADDPs add positions 4L…4L+3 into lane L (at
// most 12288) and SXTL widens the eight lanes to int32: lanesTQ2_0Ref.
// Mode 0 stores them to lanes. Modes 1 and 2 do accTQRef's epilogue
// instead (unfused and fused): s_L = lane_L − (bsums[2L] + bsums[2L+1])
// (SADDLP of the block's 16 bsums), SCVTF, e = d[b]·f16(d_x) in scalar
// FMULS, then acc_L + float32(s_L·e) (FMUL, FADD) or fma(acc_L, s_L, e)
// (FMLA); acc is loaded before the first block and stored after the last.
TEXT ·tq2NEON(SB), NOSPLIT, $0-136
	MOVD  row_base+0(FP), R0
	MOVD  row_len+8(FP), R2
	MOVD  q_base+24(FP), R1
	MOVD  lanes_base+48(FP), R3
	MOVD  acc+72(FP), R11
	MOVD  bsums_base+80(FP), R9
	MOVD  d_base+104(FP), R10
	MOVD  mode+128(FP), R8
	CBZ   R8, tq2NEONstart
	VLD1  (R11), [V26.S4, V27.S4]

tq2NEONstart:
	VMOVI $3, V31.B16

tq2loop:
	VLD1 (R0), [V0.B16, V1.B16, V2.B16, V3.B16]
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VAND   V31.B16, V0.B16, V6.B16
	VAND   V31.B16, V1.B16, V7.B16
	WORD $0x0e24c0d4 // smull v20.8h, v6.8b, v4.8b
	WORD $0x4e24c0d5 // smull2 v21.8h, v6.16b, v4.16b
	WORD $0x0e25c0f6 // smull v22.8h, v7.8b, v5.8b
	WORD $0x4e25c0f7 // smull2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $2, V0.B16, V6.B16
	VUSHR  $2, V1.B16, V7.B16
	VAND   V31.B16, V6.B16, V6.B16
	VAND   V31.B16, V7.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $4, V0.B16, V6.B16
	VUSHR  $4, V1.B16, V7.B16
	VAND   V31.B16, V6.B16, V6.B16
	VAND   V31.B16, V7.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $6, V0.B16, V6.B16
	VUSHR  $6, V1.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VAND   V31.B16, V2.B16, V6.B16
	VAND   V31.B16, V3.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $2, V2.B16, V6.B16
	VUSHR  $2, V3.B16, V7.B16
	VAND   V31.B16, V6.B16, V6.B16
	VAND   V31.B16, V7.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $4, V2.B16, V6.B16
	VUSHR  $4, V3.B16, V7.B16
	VAND   V31.B16, V6.B16, V6.B16
	VAND   V31.B16, V7.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VLD1.P 32(R1), [V4.B16, V5.B16]
	VUSHR  $6, V2.B16, V6.B16
	VUSHR  $6, V3.B16, V7.B16
	WORD $0x0e2480d4 // smlal v20.8h, v6.8b, v4.8b
	WORD $0x4e2480d5 // smlal2 v21.8h, v6.16b, v4.16b
	WORD $0x0e2580f6 // smlal v22.8h, v7.8b, v5.8b
	WORD $0x4e2580f7 // smlal2 v23.8h, v7.16b, v5.16b
	VADDP  V21.H8, V20.H8, V20.H8
	VADDP  V23.H8, V22.H8, V22.H8
	VADDP  V22.H8, V20.H8, V20.H8 // lanes L0-L7 in int16
	WORD $0x0f10a690 // sxtl v16.4s, v20.4h
	WORD $0x4f10a691 // sxtl2 v17.4s, v20.8h
	CBNZ   R8, tq2acc
	VST1.P [V16.S4, V17.S4], 32(R3)
	B      tq2next

tq2acc:
	VLD1.P  32(R9), [V18.H8, V19.H8]
	WORD $0x4e602a52 // saddlp v18.4s, v18.8h
	WORD $0x4e602a73 // saddlp v19.4s, v19.8h
	VSUB    V18.S4, V16.S4, V16.S4
	VSUB    V19.S4, V17.S4, V17.S4
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	MOVHU   64(R0), R5
	FMOVS   R5, F18
	WORD $0x0e217a52 // fcvtl v18.4s, v18.4h
	FMOVS   (R10), F19
	ADD     $4, R10, R10
	FMULS   F18, F19, F18 // e = d[b]·d_x
	CMP     $1, R8
	BEQ     tq2mul
	WORD $0x4f92121a // fmla v26.4s, v16.4s, v18.s[0]
	WORD $0x4f92123b // fmla v27.4s, v17.4s, v18.s[0]
	B       tq2next

tq2mul:
	WORD $0x4f929210 // fmul v16.4s, v16.4s, v18.s[0]
	WORD $0x4f929231 // fmul v17.4s, v17.4s, v18.s[0]
	WORD $0x4e30d75a // fadd v26.4s, v26.4s, v16.4s
	WORD $0x4e31d77b // fadd v27.4s, v27.4s, v17.4s

tq2next:
	ADD  $66, R0, R0
	SUBS $66, R2, R2
	BNE  tq2loop
	CBZ  R8, tq2done
	VST1 [V26.S4, V27.S4], (R11)

tq2done:
	RET

// func tq1NEON(row []byte, q []int8, lanes []int32, acc *[8]float32, bsums []int16, d []float32, mode int)
//
// tq2NEON for TQ1_0 blocks (54 bytes: qs[48], qh[4], f16 d_x;
// lanesTQ1_0Ref). The block's weights in order are sixteen chunks of 16:
// chunk 2n is digit n of qs[0…15], chunk 2n+1 digit n of qs[16…31] (n <
// 5), chunk 10+n digit n of qs[32…47], chunk 15 digit p/4 of qh[p mod 4]
// at position p (qh repeated by DUP, multipliers 1, 3, 9, 27 from
// tq1QhMul). Digit n of v comes from x = v·3^n mod 256 (MUL by 3 per
// step) as in sumsIQ1BNNEON: −digit = CMHI(x, 85) + CMHI(x, 170), and
// SMLSL adds digit·q. Even chunks are positions 0-15 of their 32 (V20,
// V21), odd ones 16-31 (V22, V23); eight products of at most 256 per lane.
TEXT ·tq1NEON(SB), NOSPLIT, $0-136
	MOVD  row_base+0(FP), R0
	MOVD  row_len+8(FP), R2
	MOVD  q_base+24(FP), R1
	MOVD  lanes_base+48(FP), R3
	MOVD  acc+72(FP), R11
	MOVD  bsums_base+80(FP), R9
	MOVD  d_base+104(FP), R10
	MOVD  mode+128(FP), R8
	CBZ   R8, tq1NEONstart
	VLD1  (R11), [V26.S4, V27.S4]

tq1NEONstart:
	MOVD  $tq1QhMul<>(SB), R4
	VLD1  (R4), [V31.B16]
	VMOVI $85, V28.B16
	VMOVI $170, V29.B16
	VMOVI $3, V30.B16

tq1loop:
	VLD1   (R0), [V0.B16, V1.B16, V2.B16]
	MOVWU  48(R0), R4
	VDUP   R4, V3.S4
	VEOR   V20.B16, V20.B16, V20.B16
	VEOR   V21.B16, V21.B16, V21.B16
	VEOR   V22.B16, V22.B16, V22.B16
	VEOR   V23.B16, V23.B16, V23.B16
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	WORD $0x6e3c340c // cmhi v12.16b, v0.16b, v28.16b
	WORD $0x6e3d340d // cmhi v13.16b, v0.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e24a194 // smlsl v20.8h, v12.8b, v4.8b
	WORD $0x4e24a195 // smlsl2 v21.8h, v12.16b, v4.16b
	WORD $0x6e3c342c // cmhi v12.16b, v1.16b, v28.16b
	WORD $0x6e3d342d // cmhi v13.16b, v1.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e25a196 // smlsl v22.8h, v12.8b, v5.8b
	WORD $0x4e25a197 // smlsl2 v23.8h, v12.16b, v5.16b
	WORD $0x4e3e9c08 // mul v8.16b, v0.16b, v30.16b
	WORD $0x4e3e9c29 // mul v9.16b, v1.16b, v30.16b
	WORD $0x6e3c350c // cmhi v12.16b, v8.16b, v28.16b
	WORD $0x6e3d350d // cmhi v13.16b, v8.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e26a194 // smlsl v20.8h, v12.8b, v6.8b
	WORD $0x4e26a195 // smlsl2 v21.8h, v12.16b, v6.16b
	WORD $0x6e3c352c // cmhi v12.16b, v9.16b, v28.16b
	WORD $0x6e3d352d // cmhi v13.16b, v9.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e27a196 // smlsl v22.8h, v12.8b, v7.8b
	WORD $0x4e27a197 // smlsl2 v23.8h, v12.16b, v7.16b
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	WORD $0x4e3e9d08 // mul v8.16b, v8.16b, v30.16b
	WORD $0x4e3e9d29 // mul v9.16b, v9.16b, v30.16b
	WORD $0x6e3c350c // cmhi v12.16b, v8.16b, v28.16b
	WORD $0x6e3d350d // cmhi v13.16b, v8.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e24a194 // smlsl v20.8h, v12.8b, v4.8b
	WORD $0x4e24a195 // smlsl2 v21.8h, v12.16b, v4.16b
	WORD $0x6e3c352c // cmhi v12.16b, v9.16b, v28.16b
	WORD $0x6e3d352d // cmhi v13.16b, v9.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e25a196 // smlsl v22.8h, v12.8b, v5.8b
	WORD $0x4e25a197 // smlsl2 v23.8h, v12.16b, v5.16b
	WORD $0x4e3e9d08 // mul v8.16b, v8.16b, v30.16b
	WORD $0x4e3e9d29 // mul v9.16b, v9.16b, v30.16b
	WORD $0x6e3c350c // cmhi v12.16b, v8.16b, v28.16b
	WORD $0x6e3d350d // cmhi v13.16b, v8.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e26a194 // smlsl v20.8h, v12.8b, v6.8b
	WORD $0x4e26a195 // smlsl2 v21.8h, v12.16b, v6.16b
	WORD $0x6e3c352c // cmhi v12.16b, v9.16b, v28.16b
	WORD $0x6e3d352d // cmhi v13.16b, v9.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e27a196 // smlsl v22.8h, v12.8b, v7.8b
	WORD $0x4e27a197 // smlsl2 v23.8h, v12.16b, v7.16b
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	WORD $0x4e3e9d08 // mul v8.16b, v8.16b, v30.16b
	WORD $0x4e3e9d29 // mul v9.16b, v9.16b, v30.16b
	WORD $0x6e3c350c // cmhi v12.16b, v8.16b, v28.16b
	WORD $0x6e3d350d // cmhi v13.16b, v8.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e24a194 // smlsl v20.8h, v12.8b, v4.8b
	WORD $0x4e24a195 // smlsl2 v21.8h, v12.16b, v4.16b
	WORD $0x6e3c352c // cmhi v12.16b, v9.16b, v28.16b
	WORD $0x6e3d352d // cmhi v13.16b, v9.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e25a196 // smlsl v22.8h, v12.8b, v5.8b
	WORD $0x4e25a197 // smlsl2 v23.8h, v12.16b, v5.16b
	WORD $0x6e3c344c // cmhi v12.16b, v2.16b, v28.16b
	WORD $0x6e3d344d // cmhi v13.16b, v2.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e26a194 // smlsl v20.8h, v12.8b, v6.8b
	WORD $0x4e26a195 // smlsl2 v21.8h, v12.16b, v6.16b
	WORD $0x4e3e9c4a // mul v10.16b, v2.16b, v30.16b
	WORD $0x6e3c354c // cmhi v12.16b, v10.16b, v28.16b
	WORD $0x6e3d354d // cmhi v13.16b, v10.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e27a196 // smlsl v22.8h, v12.8b, v7.8b
	WORD $0x4e27a197 // smlsl2 v23.8h, v12.16b, v7.16b
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16]
	WORD $0x4e3e9d4a // mul v10.16b, v10.16b, v30.16b
	WORD $0x6e3c354c // cmhi v12.16b, v10.16b, v28.16b
	WORD $0x6e3d354d // cmhi v13.16b, v10.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e24a194 // smlsl v20.8h, v12.8b, v4.8b
	WORD $0x4e24a195 // smlsl2 v21.8h, v12.16b, v4.16b
	WORD $0x4e3e9d4a // mul v10.16b, v10.16b, v30.16b
	WORD $0x6e3c354c // cmhi v12.16b, v10.16b, v28.16b
	WORD $0x6e3d354d // cmhi v13.16b, v10.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e25a196 // smlsl v22.8h, v12.8b, v5.8b
	WORD $0x4e25a197 // smlsl2 v23.8h, v12.16b, v5.16b
	WORD $0x4e3e9d4a // mul v10.16b, v10.16b, v30.16b
	WORD $0x6e3c354c // cmhi v12.16b, v10.16b, v28.16b
	WORD $0x6e3d354d // cmhi v13.16b, v10.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e26a194 // smlsl v20.8h, v12.8b, v6.8b
	WORD $0x4e26a195 // smlsl2 v21.8h, v12.16b, v6.16b
	WORD $0x4e3f9c6b // mul v11.16b, v3.16b, v31.16b
	WORD $0x6e3c356c // cmhi v12.16b, v11.16b, v28.16b
	WORD $0x6e3d356d // cmhi v13.16b, v11.16b, v29.16b
	VADD   V13.B16, V12.B16, V12.B16
	WORD $0x0e27a196 // smlsl v22.8h, v12.8b, v7.8b
	WORD $0x4e27a197 // smlsl2 v23.8h, v12.16b, v7.16b
	VADDP  V21.H8, V20.H8, V20.H8
	VADDP  V23.H8, V22.H8, V22.H8
	VADDP  V22.H8, V20.H8, V20.H8 // lanes L0-L7 in int16
	WORD $0x0f10a690 // sxtl v16.4s, v20.4h
	WORD $0x4f10a691 // sxtl2 v17.4s, v20.8h
	CBNZ   R8, tq1acc
	VST1.P [V16.S4, V17.S4], 32(R3)
	B      tq1next

tq1acc:
	VLD1.P  32(R9), [V18.H8, V19.H8]
	WORD $0x4e602a52 // saddlp v18.4s, v18.8h
	WORD $0x4e602a73 // saddlp v19.4s, v19.8h
	VSUB    V18.S4, V16.S4, V16.S4
	VSUB    V19.S4, V17.S4, V17.S4
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	MOVHU   52(R0), R5
	FMOVS   R5, F18
	WORD $0x0e217a52 // fcvtl v18.4s, v18.4h
	FMOVS   (R10), F19
	ADD     $4, R10, R10
	FMULS   F18, F19, F18 // e = d[b]·d_x
	CMP     $1, R8
	BEQ     tq1mul
	WORD $0x4f92121a // fmla v26.4s, v16.4s, v18.s[0]
	WORD $0x4f92123b // fmla v27.4s, v17.4s, v18.s[0]
	B       tq1next

tq1mul:
	WORD $0x4f929210 // fmul v16.4s, v16.4s, v18.s[0]
	WORD $0x4f929231 // fmul v17.4s, v17.4s, v18.s[0]
	WORD $0x4e30d75a // fadd v26.4s, v26.4s, v16.4s
	WORD $0x4e31d77b // fadd v27.4s, v27.4s, v17.4s

tq1next:
	ADD  $54, R0, R0
	SUBS $54, R2, R2
	BNE  tq1loop
	CBZ  R8, tq1done
	VST1 [V26.S4, V27.S4], (R11)

tq1done:
	RET

DATA tq1QhMul<>+0(SB)/8, $0x0303030301010101
DATA tq1QhMul<>+8(SB)/8, $0x1b1b1b1b09090909
GLOBL tq1QhMul<>(SB), RODATA|NOPTR, $16

// func accQ8_0NEON(acc *[8]float32, row []byte, q []int8, d []float32)
//
// accQ8_0Ref: per 34-byte block, SMULL/SMULL2 multiply the 32 weight and
// activation bytes into int16 (exact: at most 2^14), SADDLP adds pairs
// into int32 and ADDP pairs of pairs, leaving Σ over bytes 4l…4l+3 in
// lane l (V16: l 0-3, V18: l 4-7); SCVTF, scale = f16(d_w)·d[b] (FMULS),
// and acc_l = fma(acc_l, scale, float32(sum_l)) by FMLA.
TEXT ·accQ8_0NEON(SB), NOSPLIT, $0-80
	MOVD acc+0(FP), R3
	MOVD row_base+8(FP), R0
	MOVD row_len+16(FP), R2
	MOVD q_base+32(FP), R1
	MOVD d_base+56(FP), R7
	VLD1 (R3), [V24.S4, V25.S4]

q8loop:
	ADD    $2, R0, R4
	VLD1   (R4), [V0.B16, V1.B16]
	VLD1.P 32(R1), [V2.B16, V3.B16]
	WORD $0x0e22c010 // smull v16.8h, v0.8b, v2.8b
	WORD $0x4e22c011 // smull2 v17.8h, v0.16b, v2.16b
	WORD $0x0e23c032 // smull v18.8h, v1.8b, v3.8b
	WORD $0x4e23c033 // smull2 v19.8h, v1.16b, v3.16b
	WORD $0x4e602a10 // saddlp v16.4s, v16.8h
	WORD $0x4e602a31 // saddlp v17.4s, v17.8h
	WORD $0x4e602a52 // saddlp v18.4s, v18.8h
	WORD $0x4e602a73 // saddlp v19.4s, v19.8h
	VADDP  V17.S4, V16.S4, V16.S4
	VADDP  V19.S4, V18.S4, V18.S4
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	MOVHU  (R0), R5
	FMOVS  R5, F20
	WORD $0x0e217a94 // fcvtl v20.4s, v20.4h
	FMOVS  (R7), F21
	ADD    $4, R7, R7
	FMULS  F21, F20, F20
	WORD $0x4f941218 // fmla v24.4s, v16.4s, v20.s[0]
	WORD $0x4f941259 // fmla v25.4s, v18.4s, v20.s[0]
	ADD    $34, R0, R0
	SUBS   $34, R2, R2
	BNE    q8loop
	VST1   [V24.S4, V25.S4], (R3)
	RET

// func accQ6KNEON(acc *[8]float32, row []byte, q []int8, d []float32)
//
// accQ6KRef: per 210-byte block and half h, the 6-bit codes of chunk k
// (weights 128h + 32k + p) are put together from ql (low nibble, or high
// nibble by USHR 4) and qh (its 2-bit field moved to bits 4-5 by a shift
// and the 0x30 mask), minus 32 (−32…31); SMULL/SMULL2 multiply them with
// the activation bytes (at most 4096 in int16) and three ADDPs add
// positions 4L…4L+3 into int16 lane L (at most 16384). TBL (q6Scales) picks
// from the sign-extended int16 scales scale 2k for lanes 0-3 (p < 16) and
// 2k+1 for lanes 4-7, and SMLAL/SMLAL2 add lane·scale into the block's
// int32 lanes (V24, V25). Then SCVTF, e = d[b]·f16(d_x) and acc_l =
// fma(acc_l, e, float32(lane_l)) by FMLA.
TEXT ·accQ6KNEON(SB), NOSPLIT, $0-80
	MOVD  acc+0(FP), R3
	MOVD  row_base+8(FP), R0
	MOVD  row_len+16(FP), R2
	MOVD  q_base+32(FP), R1
	MOVD  d_base+56(FP), R7
	VLD1  (R3), [V26.S4, V27.S4]
	MOVD  $q6Scales<>(SB), R4
	VLD1  (R4), [V16.B16, V17.B16, V18.B16, V19.B16]
	VMOVI $0x0f, V20.B16
	VMOVI $0x30, V21.B16
	VMOVI $32, V22.B16

q6loop:
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	ADD    $0, R0, R4
	VLD1   (R4), [V0.B16, V1.B16, V2.B16, V3.B16]
	ADD    $128, R0, R4
	VLD1   (R4), [V4.B16, V5.B16]
	MOVD   192(R0), R5
	VMOV   R5, V6.D[0]
	WORD $0x0f08a4c6 // sxtl v6.8h, v6.8b
	VAND   V20.B16, V0.B16, V7.B16
	VAND   V20.B16, V1.B16, V8.B16
	VSHL   $4, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VSHL   $4, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1000d7 // tbl v23.16b, {v6.16b}, v16.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VAND   V20.B16, V2.B16, V7.B16
	VAND   V20.B16, V3.B16, V8.B16
	VSHL   $2, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VSHL   $2, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1100d7 // tbl v23.16b, {v6.16b}, v17.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VUSHR  $4, V0.B16, V7.B16
	VUSHR  $4, V1.B16, V8.B16
	VAND   V21.B16, V4.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VAND   V21.B16, V5.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1200d7 // tbl v23.16b, {v6.16b}, v18.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VUSHR  $4, V2.B16, V7.B16
	VUSHR  $4, V3.B16, V8.B16
	VUSHR  $2, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VUSHR  $2, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1300d7 // tbl v23.16b, {v6.16b}, v19.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	ADD    $64, R0, R4
	VLD1   (R4), [V0.B16, V1.B16, V2.B16, V3.B16]
	ADD    $160, R0, R4
	VLD1   (R4), [V4.B16, V5.B16]
	MOVD   200(R0), R5
	VMOV   R5, V6.D[0]
	WORD $0x0f08a4c6 // sxtl v6.8h, v6.8b
	VAND   V20.B16, V0.B16, V7.B16
	VAND   V20.B16, V1.B16, V8.B16
	VSHL   $4, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VSHL   $4, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1000d7 // tbl v23.16b, {v6.16b}, v16.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VAND   V20.B16, V2.B16, V7.B16
	VAND   V20.B16, V3.B16, V8.B16
	VSHL   $2, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VSHL   $2, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1100d7 // tbl v23.16b, {v6.16b}, v17.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VUSHR  $4, V0.B16, V7.B16
	VUSHR  $4, V1.B16, V8.B16
	VAND   V21.B16, V4.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VAND   V21.B16, V5.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1200d7 // tbl v23.16b, {v6.16b}, v18.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	VUSHR  $4, V2.B16, V7.B16
	VUSHR  $4, V3.B16, V8.B16
	VUSHR  $2, V4.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V7.B16, V7.B16
	VUSHR  $2, V5.B16, V15.B16
	VAND   V21.B16, V15.B16, V15.B16
	VORR   V15.B16, V8.B16, V8.B16
	VSUB   V22.B16, V7.B16, V7.B16
	VSUB   V22.B16, V8.B16, V8.B16
	VLD1.P 32(R1), [V9.B16, V10.B16]
	WORD $0x0e29c0eb // smull v11.8h, v7.8b, v9.8b
	WORD $0x4e29c0ec // smull2 v12.8h, v7.16b, v9.16b
	WORD $0x0e2ac10d // smull v13.8h, v8.8b, v10.8b
	WORD $0x4e2ac10e // smull2 v14.8h, v8.16b, v10.16b
	VADDP  V12.H8, V11.H8, V11.H8
	VADDP  V14.H8, V13.H8, V13.H8
	VADDP  V13.H8, V11.H8, V11.H8
	WORD $0x4e1300d7 // tbl v23.16b, {v6.16b}, v19.16b
	WORD $0x0e778178 // smlal v24.4s, v11.4h, v23.4h
	WORD $0x4e778179 // smlal2 v25.4s, v11.8h, v23.8h
	WORD $0x4e21db18 // scvtf v24.4s, v24.4s
	WORD $0x4e21db39 // scvtf v25.4s, v25.4s
	MOVHU  208(R0), R5
	FMOVS  R5, F28
	WORD $0x0e217b9c // fcvtl v28.4s, v28.4h
	FMOVS  (R7), F15
	ADD    $4, R7, R7
	FMULS  F15, F28, F28
	WORD $0x4f9c131a // fmla v26.4s, v24.4s, v28.s[0]
	WORD $0x4f9c133b // fmla v27.4s, v25.4s, v28.s[0]
	ADD    $210, R0, R0
	SUBS   $210, R2, R2
	BNE    q6loop
	VST1   [V26.S4, V27.S4], (R3)
	RET

DATA q6Scales<>+0(SB)/8, $0x0100010001000100
DATA q6Scales<>+8(SB)/8, $0x0302030203020302
DATA q6Scales<>+16(SB)/8, $0x0504050405040504
DATA q6Scales<>+24(SB)/8, $0x0706070607060706
DATA q6Scales<>+32(SB)/8, $0x0908090809080908
DATA q6Scales<>+40(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6Scales<>+48(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6Scales<>+56(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6Scales<>(SB), RODATA|NOPTR, $64
