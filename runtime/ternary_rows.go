package runtime

import (
	"sync"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// The row-range kernels of the ternary types (internal/kernels
// ternary_rows.go): MatVec and MatMul multiply a whole range of rows per
// kernel call, on the worker team, instead of one Row call per row. Each
// result equals Row's, bit for bit (the kernels' tests pin them row for
// row): TQ1_0/TQ2_0 through AccTQ*_0Rows (when the activation has no
// pure-Go tables, i.e. where the lanes run in assembly), Q2_0 through
// DotQ2_0Rows (the Q8_0 activation permuted once per token and matrix),
// IQ2_BN through DotIQ2BNRows.

// ternaryRowTile is the number of rows MatMul multiplies with every token
// of a batch before the next rows: 16 rows of the 2B-4T ffn_down (6912
// inputs, at most 1.9 KB per row) stay in L1 for all tokens.
const ternaryRowTile = 16

// ternaryRowsReady reports whether w's type has a row-range kernel for the
// prepared activation a, preparing what the kernel reads besides a's
// quantized form (Q2_0's permuted codes).
func (w *Matrix) ternaryRowsReady(a *Activation) bool {
	switch w.Type {
	case gguf.TypeTQ1_0, gguf.TypeTQ2_0:
		return len(a.lutTQ) == 0
	case gguf.TypeQ2_0:
		a.q2p = resizeI8(a.q2p, len(a.q))
		if cap(a.q2sum) < len(a.q)/32 {
			a.q2sum = make([]int32, len(a.q)/32)
		}
		a.q2sum = a.q2sum[:len(a.q)/32]
		kernels.PermuteQ2_0(a.q2p, a.q2sum, a.q)
		return true
	case gguf.TypeIQ2BN:
		return true
	}
	return false
}

// ternaryRows writes rows lo…hi−1 of w times a (ternaryRowsReady) into
// dst[lo:hi].
func (w *Matrix) ternaryRows(dst []float32, a *Activation, lo, hi int) {
	rows := w.raw[lo*w.rowB : hi*w.rowB]
	switch w.Type {
	case gguf.TypeTQ2_0:
		kernels.AccTQ2_0Rows(dst[lo:hi], rows, w.rowB, a.q, a.bsums, a.d, a.fmaAcc)
	case gguf.TypeTQ1_0:
		kernels.AccTQ1_0Rows(dst[lo:hi], rows, w.rowB, a.q, a.bsums, a.d, a.fmaAcc)
	case gguf.TypeQ2_0:
		kernels.DotQ2_0Rows(dst[lo:hi], rows, w.rowB, a.q2p, a.q2sum, a.d)
	case gguf.TypeIQ2BN:
		kernels.DotIQ2BNRows(dst[lo:hi], rows, w.rowB, a.q, &a.d64, &a.minus64)
	default:
		panic("runtime: no row-range kernel for " + w.Type.String())
	}
}

// matVecTernary is matVecPrepared for a type with a row-range kernel: one
// kernel call per worker range. It reports false (nothing done) for other
// types.
func (w *Matrix) matVecTernary(dst []float32, a *Activation, threads int) bool {
	if !w.ternaryRowsReady(a) {
		return false
	}
	parallel.ForHot(w.M, threads, func(lo, hi int) { w.ternaryRows(dst, a, lo, hi) })
	return true
}

// matMulTernary is matMul's product for a type with a row-range kernel
// (acts prepared): for each tile of ternaryRowTile rows, every token
// through the kernel, so a tile is read from memory once for the batch.
// It reports false (nothing done) for other types.
func (w *Matrix) matMulTernary(dst [][]float32, acts []Activation, threads int) bool {
	switch w.Type {
	case gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ2_0, gguf.TypeIQ2BN:
	default:
		return false
	}
	if w.Type != gguf.TypeQ2_0 {
		for t := range acts {
			if !w.ternaryRowsReady(&acts[t]) {
				return false
			}
		}
	}
	if w.Type == gguf.TypeIQ2BN && len(acts) >= 8 && kernels.IQ2BNBatch8() {
		w.matMulIQ2BN8(dst, acts, threads)
		return true
	}
	if w.Type == gguf.TypeQ2_0 {
		parallel.ForHot(len(acts), threads, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				w.ternaryRowsReady(&acts[t])
			}
		})
	}
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		for r0 := lo; r0 < hi; r0 += ternaryRowTile {
			r1 := min(r0+ternaryRowTile, hi)
			for t := range acts {
				w.ternaryRows(dst[t], &acts[t], r0, r1)
			}
		}
	})
	return true
}

// iq2bnPack holds matMulIQ2BN8's packed activations between calls.
var iq2bnPack sync.Pool

// matMulIQ2BN8 is matMulTernary for IQ2_BN on a CPU with the eight-token
// kernel (kernels.IQ2BNBatch8): the tokens in groups of eight, each
// group's codes packed one after another, through
// kernels.DotIQ2BNRowsBatch, which decodes each block of a tile's rows
// once for the eight; the last len(acts) mod 8 tokens take the one-token
// kernel. Every result is the one-token kernel's (the kernels' tests pin
// it).
func (w *Matrix) matMulIQ2BN8(dst [][]float32, acts []Activation, threads int) {
	groups := len(acts) / 8
	k := w.K
	need := groups * 8 * k
	buf, _ := iq2bnPack.Get().(*[]int8)
	if buf == nil || cap(*buf) < need {
		b := make([]int8, need)
		buf = &b
	}
	defer iq2bnPack.Put(buf)
	q := (*buf)[:need]
	d := make([][4]float32, groups*8)
	minus := make([][4]float32, groups*8)
	for t := range groups * 8 {
		copy(q[t*k:(t+1)*k], acts[t].q[:k])
		d[t], minus[t] = acts[t].d64, acts[t].minus64
	}
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		var tmp [ternaryRowTile * 8]float32
		for r0 := lo; r0 < hi; r0 += ternaryRowTile {
			r1 := min(r0+ternaryRowTile, hi)
			rows := w.raw[r0*w.rowB : r1*w.rowB]
			for g := range groups {
				out := tmp[:8*(r1-r0)]
				kernels.DotIQ2BNRowsBatch(out, rows, w.rowB, q[g*8*k:(g+1)*8*k], d[g*8:g*8+8], minus[g*8:g*8+8])
				for i, v := range out {
					dst[g*8+i%8][r0+i/8] = v
				}
			}
			for t := groups * 8; t < len(acts); t++ {
				w.ternaryRows(dst[t], &acts[t], r0, r1)
			}
		}
	})
}
