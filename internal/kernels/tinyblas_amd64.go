//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run tinyblas.go -out ../tinyblas_amd64.s -stubs ../tinyblas_stubs_amd64.go -pkg kernels"

// useTinyBLAS selects the tinyBLAS-order assembly (tinyblas_amd64.s): it
// needs AVX2, F16C (VCVTPH2PS) and FMA (VFMADD231PS). There is no AVX-512
// version: tinyBLAS's order has eight lanes per output, so a ZMM register
// could only keep the order by holding two outputs' lanes, its halves
// loaded from two activation (or weight) rows; not written yet.
var useTinyBLAS = useAVX2 && cpu.X86.HasFMA

func tinyDotsF16(dst []float32, w []uint16, x []float32, xs int) {
	if !useTinyBLAS {
		tinyDotsF16Ref(dst, w, x, xs)
		return
	}
	k := len(w)
	t := 0
	for ; t+8 <= len(dst); t += 8 {
		tinyDotsF16x8AVX2(dst[t:t+8], w, x[t*xs:], xs, k)
	}
	if t+4 <= len(dst) {
		tinyDotsF16x4AVX2(dst[t:t+4], w, x[t*xs:], xs, k)
		t += 4
	}
	for ; t < len(dst); t++ {
		tinyDotsF16x1AVX2(dst[t:t+1], w, x[t*xs:], xs, k)
	}
}

func tinyDotsF32(dst []float32, w []float32, x []float32, xs int) {
	if !useTinyBLAS {
		tinyDotsF32Ref(dst, w, x, xs)
		return
	}
	k := len(w)
	t := 0
	for ; t+8 <= len(dst); t += 8 {
		tinyDotsF32x8AVX2(dst[t:t+8], w, x[t*xs:], xs, k)
	}
	if t+4 <= len(dst) {
		tinyDotsF32x4AVX2(dst[t:t+4], w, x[t*xs:], xs, k)
		t += 4
	}
	for ; t < len(dst); t++ {
		tinyDotsF32x1AVX2(dst[t:t+1], w, x[t*xs:], xs, k)
	}
}

// tinyLanesF16 is tinyLanesF16Ref for nr ≤ 8 rows.
func tinyLanesF16(lanes []float32, w []uint16, wr int, x []float32, nr int) {
	if !useTinyBLAS {
		tinyLanesF16Ref(lanes, w, wr, x, nr)
		return
	}
	k := len(x)
	r := 0
	if nr == 8 {
		tinyLanesF16x8AVX2(lanes, w, wr, x, k)
		return
	}
	if nr >= 4 {
		tinyLanesF16x4AVX2(lanes, w, wr, x, k)
		r = 4
	}
	for ; r < nr; r++ {
		tinyLanesF16x1AVX2(lanes[8*r:], w[r*wr:], wr, x, k)
	}
}
