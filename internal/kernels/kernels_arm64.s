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
