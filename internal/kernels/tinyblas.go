package kernels

import "fmt"

// tinyBLAS's order (llamafile's tinyBLAS<8> on AVX2 + FMA, in bitnet.cpp's
// llama.cpp fork ggml/src/llamafile/sgemm.cpp, tinyBLAS::gemm and hsum):
// one output of a K-long dot has one 8-lane float32 accumulator; the
// elements go to lane (index mod 8) in ascending order, each by one fused
// multiply-add (F16 weights widened exactly first), and the lanes are
// added as hsum does: (l4+l0, l5+l1, l6+l2, l7+l3) = (a0, a1, a2, a3),
// then (a0+a2) + (a1+a3). The functions below give these bits with the
// amd64 assembly (tinyblas_amd64.s, AVX2 + F16C + FMA) or the pure-Go
// references (tinyblas_ref.go) alike.

// TinyBLASDotsF16 writes to dst[i] tinyBLAS<8>'s dot of the F16 row w
// (IEEE binary16 bits, K = len(w), a multiple of 8) with the f32 row
// x[i·xs : i·xs+K], for i < len(dst): an F16 weight row times several
// activation rows, as ggml's F16 LM head over a batch of two or more rows
// takes it. It panics if K is not a multiple of 8, xs < 0, or x is too
// short.
func TinyBLASDotsF16(dst []float32, w []uint16, x []float32, xs int) {
	checkTinyDots(len(dst), len(w), len(x), xs)
	tinyDotsF16(dst, w, x, xs)
}

// TinyBLASDotsF32 is TinyBLASDotsF16 with an F32 weight row: ggml's F32
// matrix products of a batch of two or more rows.
func TinyBLASDotsF32(dst []float32, w []float32, x []float32, xs int) {
	checkTinyDots(len(dst), len(w), len(x), xs)
	tinyDotsF32(dst, w, x, xs)
}

func checkTinyDots(n, k, nx, xs int) {
	if k%8 != 0 || xs < 0 || (n > 0 && (n-1)*xs+k > nx) {
		panic(fmt.Sprintf("kernels: TinyBLASDots: K %d (a multiple of 8?), %d rows at stride %d need %d activations, have %d", k, n, xs, (n-1)*xs+k, nx))
	}
}

// TinyBLASDotsOffF16 writes to dst[i] tinyBLAS<8>'s dot of the F16 row
// w[i·wr : i·wr+n] with x (n = len(x), any length), element j of the
// product sitting at index off+j (off ≥ 0): it goes to lane (off+j) mod 8,
// and the off elements before it count as zeros (they leave every lane as
// it is). This is ggml's softmax-probabilities × V product in one
// llama_decode of two or more tokens, the chunk's cells starting at cell
// off of the cache and the V cache's rows (one per head dimension,
// stride wr) multiplied by one probability row. It panics if off or wr is
// negative or w is too short.
func TinyBLASDotsOffF16(dst []float32, w []uint16, wr int, x []float32, off int) {
	n := len(x)
	if off < 0 || wr < 0 || (len(dst) > 0 && (len(dst)-1)*wr+n > len(w)) {
		panic(fmt.Sprintf("kernels: TinyBLASDotsOffF16: offset %d, %d rows at stride %d need %d weights, have %d", off, len(dst), wr, (len(dst)-1)*wr+n, len(w)))
	}
	head := min((8-off&7)&7, n)
	body := (n - head) &^ 7
	var lanes [64]float32
	for r0 := 0; r0 < len(dst); r0 += 8 {
		nr := min(8, len(dst)-r0)
		l := lanes[:8*nr]
		clear(l)
		for i := 0; i < nr; i++ {
			wi := w[(r0+i)*wr:]
			li := l[8*i : 8*i+8]
			for j := 0; j < head; j++ {
				li[(off+j)&7] = fmaFast(li[(off+j)&7], f16Table[wi[j]], x[j])
			}
		}
		if body > 0 {
			tinyLanesF16(l, w[r0*wr+head:], wr, x[head:head+body], nr)
		}
		for i := 0; i < nr; i++ {
			wi := w[(r0+i)*wr:]
			li := (*[8]float32)(l[8*i : 8*i+8])
			for j := head + body; j < n; j++ {
				li[j-head-body] = fmaFast(li[j-head-body], f16Table[wi[j]], x[j])
			}
			dst[r0+i] = TinyBLASHsum(li)
		}
	}
}

// TinyBLASHsum is tinyBLAS's hsum of one 8-lane accumulator on AVX:
// (l4+l0, l5+l1, l6+l2, l7+l3) = (a0, a1, a2, a3), then (a0+a2) + (a1+a3),
// each addition rounded to float32.
func TinyBLASHsum(l *[8]float32) float32 {
	a0, a1, a2, a3 := l[4]+l[0], l[5]+l[1], l[6]+l[2], l[7]+l[3]
	return (a0 + a2) + (a1 + a3)
}
