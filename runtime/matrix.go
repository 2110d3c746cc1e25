package runtime

import (
	"errors"
	"fmt"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// Matrix is one 2-D weight tensor of a GGUF file, ne = [K, M] (GGUF order:
// M rows of K inputs). It keeps the stored form (packed I2_S bytes, F16 bits,
// Q8_0 blocks) and multiplies with ggml's per-type arithmetic. The data is
// used in place, not copied (viewF32, viewU16): a Matrix built from a
// mapped file reads the file's pages.
type Matrix struct {
	Type gguf.Type // F32, F16, BF16, Q8_0, I2_S, TQ1_0, TQ2_0, Q6_K, Q4_K, IQ1_BN or IQ2_BN
	K, M int       // ne[0] (inputs per row), ne[1] (rows)
	// Scale is the per-tensor weight scale of an I2_S tensor (the float32 at
	// byte K·M/4); 0 for other types.
	Scale float32

	f32  []float32 // F32
	u16  []uint16  // F16, BF16 bits
	raw  []byte    // I2_S packed codes (kPad·M/4 bytes), Q8_0/TQ*_0/Q*_K blocks
	rowB int       // bytes per row of raw
	// kPad is an I2_S matrix's packed row length: K, or K rounded up to
	// 128 with zero weights for a TL1/TL2/ARM tensor whose K is not a
	// multiple of 128 (newRepackedMatrix; the activation is padded with
	// zeros, which changes neither its int8 scale nor a dot product).
	kPad int

	// kern is the type's row of the runtime's type table (weighttypes.go).
	kern *weightKernel

	// I2_S: per-row pair code sums and code-3 flags for the batched
	// kernel (i2sPairCodes), computed on the first MatMul.
	pairOnce  sync.Once
	pairCodes []uint16
	code3     []bool
}

// NewMatrix wraps the data of a 2-D tensor of type typ with ne = [k, m].
// The type's row of the runtime's type table (weightKernels, weighttypes.go;
// each kernel file registers its type) checks the shape and keeps the data.
// Supported types: F32, F16, BF16, Q8_0 (k % 32 == 0), I2_S (x86 layout,
// QK 128: k % 128 == 0, as bitnet.cpp's kernel requires; §3.1 of the
// conversion spec), the Q8_K-activation types TQ1_0, TQ2_0, Q6_K and
// Q4_K (k % 256 == 0; tq.go, q6k.go, q4k.go), IQ1_BN and IQ2_BN
// (k % 64 == 0, k ≥ 512, as ik_llama.cpp multiplies them; iqbn.go). data must hold at least
// gguf.NBytes(typ, ne) bytes; the I2_S scale is read from byte k·m/4. The Matrix keeps (views) data: it must
// not change while the Matrix is used. Errors name the problem; the caller
// adds the tensor name.
func NewMatrix(typ gguf.Type, k, m int, data []byte) (*Matrix, error) {
	if k <= 0 || m <= 0 {
		return nil, fmt.Errorf("bad shape [%d, %d]", k, m)
	}
	if err := notMainline(typ); err != nil {
		return nil, err
	}
	need, err := gguf.NBytes(typ, []uint64{uint64(k), uint64(m)})
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) < need {
		return nil, fmt.Errorf("%s [%d, %d] needs %d bytes, have %d", typ, k, m, need, len(data))
	}
	kern, ok := weightKernels[typ]
	if !ok {
		return nil, unsupportedType(typ)
	}
	w := &Matrix{Type: typ, K: k, M: m}
	alt, err := kern.setup(w, data, int(need))
	if err != nil {
		return nil, err
	}
	if alt != nil {
		w = alt
	}
	w.kern = kern
	return w, nil
}

// Activation is one token's input row prepared for a weight type (the
// "vec_dot_type" conversion of ggml): f32 as-is, F16-rounded for F16
// weights, Q8_0 blocks for Q8_0 weights, int8 with one scale and the sum for
// I2_S weights, Q8_K blocks (codes, scales, 16-element sums) for TQ1_0,
// TQ2_0, Q6_K and Q4_K weights.
type Activation struct {
	typ gguf.Type
	f   []float32 // F32/BF16: x; F16: x rounded to F16
	q   []int8    // I2_S, Q8_0, Q8_K codes
	d   []float32 // Q8_0, Q8_K block scales
	s   float32   // I2_S activation scale
	sum int32     // I2_S Σq
	// d64, minus64: Q8_K64 group scales and d·Σq (IQ1_BN, IQ2_BN; iqbn.go).
	d64, minus64 [q8K64Groups]float32
	// lut1 is the one-token I2_S table (buildI2SLUT1), scratch of MatVec.
	lut1 []int16

	// bsums are the Q8_K sums of 16 consecutive codes, lutTQ the TQ1_0 /
	// TQ2_0 tables (tq.go); inBatch (set by MatMul) skips the large TQ1_0
	// tables, which would cost hundreds of MB for a whole batch.
	bsums, lutTQ []int16
	inBatch      bool
	// q2p, q2sum: a Q2_0 activation's codes permuted for the row-range
	// kernel and their half sums (kernels.PermuteQ2_0; ternary_rows.go).
	q2p   []int8
	q2sum []int32
	// fmaAcc: the float accumulation of the AVX2 Q8_K kernels' blocks is
	// one fused multiply-add, as gcc (-ffp-contract=fast, mainline
	// llama.cpp's build) compiles it; clang (bitnet.cpp's build) rounds
	// the product first. Set from batchScratch.fmaAcc by matMul.
	fmaAcc bool
}

// Prepare converts x (len K) into the activation form w's dot product needs,
// reusing a's buffers. It panics if len(x) != w.K.
func (w *Matrix) Prepare(a *Activation, x []float32) {
	if len(x) != w.K {
		panic(fmt.Sprintf("runtime: activation length %d, matrix K %d", len(x), w.K))
	}
	a.typ = w.Type
	w.kern.prepare(w, a, x)
}

func resizeI8(b []int8, n int) []int8 {
	if cap(b) < n {
		return make([]int8, n)
	}
	return b[:n]
}

func resizeF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Row returns output row r (0 ≤ r < M) for the prepared activation a,
// with the arithmetic of the type's row of the runtime's type table:
//   - F32, F16: ggml's AVX2 vec_dot_f32 / vec_dot_f16 summation order
//     (dot.go);
//   - BF16: exact products summed in float64, rounded once;
//   - Q8_0: Σ_blocks float32(d_w·d_x)·sumi (ggml_vec_dot_q8_0_q8_0, AVX2 order);
//   - I2_S: float32(float32(sumi − Σq)/s)·scale, sumi = Σ code·q exact
//     (ggml_vec_dot_i2_i8_s with bitnet.cpp's epilogue);
//   - TQ1_0, TQ2_0, Q6_K, Q4_K: ggml's AVX2 vec_dot_*_q8_K (tq.go, q6k.go,
//     q4k.go);
//   - IQ1_BN, IQ2_BN: ik_llama.cpp's Q8_K64 kernels (iqbn.go).
func (w *Matrix) Row(r int, a *Activation) float32 {
	if a.typ != w.Type {
		panic("runtime: activation prepared for another weight type")
	}
	return w.kern.row(w, r, a)
}

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0 for one row (blocks of 34 bytes: f16 d,
// 32 int8) in the AVX2 order of the reference (ggml-quants.c, 406a5036):
// eight float lanes, lane i taking the exact integer sum of bytes 4i…4i+3 of
// each block times float32(d_w·d_x) in a fused multiply-add, then the lanes
// reduced as (l0+l4)+(l2+l6) plus (l1+l5)+(l3+l7). kernels.AccQ8_0
// computes the lanes (AVX2 + FMA assembly where the CPU has them).
func dotQ8_0(row []byte, q []int8, d []float32) float32 {
	var acc [8]float32
	kernels.AccQ8_0(&acc, row[:len(d)*34], q, d)
	return sumExp8(acc[:])
}

// dotI2S returns Σ code_k·q_k over one packed I2_S row with the integer
// arithmetic of bitnet.cpp's AVX2 ggml_vec_dot_i2_i8_s (int16 lanes that
// wrap); internal/kernels.DotI2S has the layout, the assembly and the pure-Go
// reference.
func dotI2S(row []byte, q []int8) int32 { return kernels.DotI2S(row, q) }

// i2sOut is bitnet.cpp's epilogue of the I2_S dot product:
// float32(float32(sumi − Σq)/s)·scale, each step rounded to float32.
func i2sOut(sumi int32, a *Activation, scale float32) float32 {
	v := float32(sumi) - float32(a.sum)
	v = v / a.s
	return v * scale
}

// MatVec computes dst[r] = Row(r) for every row of w on the token row x,
// splitting the rows over threads goroutines (threads ≤ 1 runs inline). The
// result does not depend on threads. a is scratch (may be nil). It panics if
// len(dst) != w.M or len(x) != w.K.
func (w *Matrix) MatVec(dst, x []float32, a *Activation, threads int) {
	if len(dst) != w.M {
		panic(fmt.Sprintf("runtime: MatVec dst length %d, matrix M %d", len(dst), w.M))
	}
	if a == nil {
		a = new(Activation)
	}
	w.Prepare(a, x)
	w.matVecPrepared(dst, a, threads)
}

// lut1MinRows is the smallest I2_S matrix (in rows) for which MatVec builds
// the one-token table: below it the table costs more than it saves.
const lut1MinRows = 256

// matVecPrepared is MatVec after Prepare. I2_S rows go through the
// one-token table kernel unless DotI2S runs in assembly, which streams
// the packed rows faster (docs/performance.md).
func (w *Matrix) matVecPrepared(dst []float32, a *Activation, threads int) {
	if w.Type == gguf.TypeI2S && kernels.Accelerated() {
		// Row's I2_S case, a whole range of rows per kernel call
		// (DotI2SRows has i2sOut's epilogue).
		q, sumf := a.q[:w.kPad], float32(a.sum)
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			kernels.DotI2SRows(dst[lo:hi], w.raw[lo*w.rowB:hi*w.rowB], q, sumf, a.s, w.Scale)
		})
		return
	}
	if w.Type == gguf.TypeF16 {
		// Row's F16 case (dotF16ggml), a range of rows per call.
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			kernels.DotF16Rows(dst[lo:hi], w.u16[lo*w.K:hi*w.K], a.f)
		})
		return
	}
	if w.Type == gguf.TypeI2S && w.M >= lut1MinRows {
		w.matVecI2S(dst, a, threads)
		return
	}
	if w.matVecTernary(dst, a, threads) {
		return
	}
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst[r] = w.Row(r, a)
		}
	})
}

// matVecI2S runs one prepared token through the one-token table kernel
// (dotI2SLUT1Rows: dotI2S's sums, one table read per packed byte).
func (w *Matrix) matVecI2S(dst []float32, a *Activation, threads int) {
	nb := w.kPad / 128
	if cap(a.lut1) < nb*i2sLUT1PerBlock {
		a.lut1 = make([]int16, nb*i2sLUT1PerBlock)
	}
	lut := a.lut1[:nb*i2sLUT1PerBlock]
	parallel.ForHot(nb, threads, func(lo, hi int) {
		buildI2SLUT1(lut[lo*i2sLUT1PerBlock:hi*i2sLUT1PerBlock], a.q[lo*128:hi*128])
	})
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		var sums [i2sRowTile]int32
		for r0 := lo; r0 < hi; r0 += i2sRowTile {
			r1 := min(r0+i2sRowTile, hi)
			dotI2SLUT1Rows(w.raw[r0*w.rowB:r1*w.rowB], w.rowB, lut, sums[:r1-r0])
			for r := r0; r < r1; r++ {
				dst[r] = i2sOut(sums[r-r0], a, w.Scale)
			}
		}
	})
}

// MatMul multiplies w with a batch of token rows: dst[t] = W·xs[t]. Each
// token row is quantized on its own (one activation scale per token, as in
// bitnet.cpp) and every dot product keeps its summation order, so every
// dst[t] equals MatVec on xs[t] alone, bit for bit, whatever the batch size
// or thread count. Each weight row is read once for the whole batch: I2_S
// rows go through the four-token lookup kernel (dotI2SLUT), F16 rows are
// widened once for all tokens.
func (w *Matrix) MatMul(dst, xs [][]float32, threads int) {
	w.matMul(dst, xs, new(batchScratch), threads)
}

// batchScratch is MatMul's reusable memory: one Activation per token, the
// I2_S lookup tables, per-worker widened F16 rows.
type batchScratch struct {
	acts []Activation
	lut  []uint64
	qs   [][]int8
	// xt holds the token rows packed for kernels.DotI2SBatch, one
	// I2SBatchLen block per group of I2SBatchTokens tokens.
	xt   []int8
	rowf [][]float32

	// fmaAcc is copied into every Activation (Activation.fmaAcc).
	fmaAcc bool
	// tinyF32 makes F32 weights (K a multiple of 8) take llamafile's
	// tinyBLAS order, as a llama_decode ubatch of ≥ 2 tokens does in
	// bitnet.cpp's fork (ppl_batch.go), even for one row.
	tinyF32 bool
}

func (w *Matrix) matMul(dst, xs [][]float32, sc *batchScratch, threads int) {
	n := len(xs)
	if len(dst) != n {
		panic("runtime: MatMul batch length mismatch")
	}
	for t := range xs {
		if len(dst[t]) != w.M || len(xs[t]) != w.K {
			panic(fmt.Sprintf("runtime: MatMul row %d: dst length %d, x length %d, matrix [%d, %d]", t, len(dst[t]), len(xs[t]), w.K, w.M))
		}
	}
	if n == 0 {
		return
	}
	if sc.tinyF32 && w.Type == gguf.TypeF32 && w.K%8 == 0 {
		// tinyBLAS's order (ppl_batch.go), eight rows of xs per call.
		x := packRows(xs, w.K)
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			var d [8]float32
			for r := lo; r < hi; r++ {
				row := w.f32[r*w.K : (r+1)*w.K]
				for t0 := 0; t0 < n; t0 += len(d) {
					dt := d[:min(len(d), n-t0)]
					kernels.TinyBLASDotsF32(dt, row, x[t0*w.K:], w.K)
					for i, v := range dt {
						dst[t0+i][r] = v
					}
				}
			}
		})
		return
	}
	if cap(sc.acts) < n {
		sc.acts = append(sc.acts[:cap(sc.acts)], make([]Activation, n-cap(sc.acts))...)
	}
	acts := sc.acts[:n]
	parallel.ForHot(n, threads, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			acts[t].inBatch = n > 1
			acts[t].fmaAcc = sc.fmaAcc
			w.Prepare(&acts[t], xs[t])
		}
	})
	switch {
	case n == 1:
		w.matVecPrepared(dst[0], &acts[0], threads)
	case w.Type == gguf.TypeI2S:
		w.matMulI2S(dst, acts, sc, threads)
	case w.Type == gguf.TypeF16 && kernels.Accelerated():
		// With the assembly DotF16 the stored row is read directly (the
		// same products in the same order as dotF16Wide), a few rows
		// at a time so they stay in L1 for every token.
		const tile = 4
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			for r0 := lo; r0 < hi; r0 += tile {
				r1 := min(r0+tile, hi)
				for t := range acts {
					x, d := acts[t].f, dst[t]
					for r := r0; r < r1; r++ {
						d[r] = dotF16ggml(w.u16[r*w.K:(r+1)*w.K], x)
					}
				}
			}
		})
	case w.Type == gguf.TypeF16:
		if len(sc.rowf) < max(threads, 1) {
			sc.rowf = make([][]float32, max(threads, 1))
		}
		parallel.RangeHot(w.M, threads, func(worker, lo, hi int) {
			rf := resizeF32(sc.rowf[worker], w.K)
			sc.rowf[worker] = rf
			for r := lo; r < hi; r++ {
				for i, h := range w.u16[r*w.K : (r+1)*w.K] {
					rf[i] = f16Table[h]
				}
				for t := range acts {
					dst[t][r] = dotF16Wide(rf, acts[t].f)
				}
			}
		})
	case w.matMulTernary(dst, acts, threads):
		// TQ1_0, TQ2_0, Q2_0, IQ2_BN: done by the row-range kernels
		// (ternary_rows.go).
	default:
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				for t := range acts {
					dst[t][r] = w.Row(r, &acts[t])
				}
			}
		})
	}
}

// i2sAsmRowTile is the number of weight rows matMulI2SAsm multiplies with
// one token before the next: 16 rows of the largest presets' 4096 inputs
// (16 KiB) and one token's activations stay in L1 for all of them.
const i2sAsmRowTile = 16

// matMulI2S runs the prepared token activations through the assembly
// DotI2S when there is one (matMulI2SAsm), else in groups of i2sLanes
// through the pure-Go dotI2SLUT; a row the table kernel refuses (code 3)
// takes dotI2S. Both give dotI2S's sums.
func (w *Matrix) matMulI2S(dst [][]float32, acts []Activation, sc *batchScratch, threads int) {
	if useI2SBatch && len(acts) >= kernels.I2SBatchTokens {
		w.matMulI2SBatch(dst, acts, sc, threads)
		return
	}
	if kernels.Accelerated() {
		w.matMulI2SAsm(dst, acts, threads)
		return
	}
	n := len(acts)
	groups := (n + i2sLanes - 1) / i2sLanes
	per := w.kPad / 128 * i2sLUTPerBlock
	if cap(sc.lut) < groups*per {
		sc.lut = make([]uint64, groups*per)
	}
	lut := sc.lut[:groups*per]
	if cap(sc.qs) < n {
		sc.qs = make([][]int8, n)
	}
	qs := sc.qs[:n]
	for t := range acts {
		qs[t] = acts[t].q
	}
	parallel.ForHot(groups, threads, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			buildI2SLUT(lut[g*per:(g+1)*per], qs[g*i2sLanes:min(n, (g+1)*i2sLanes)], w.kPad)
		}
	})
	groupsK := i2sPairGroups(w.rowB)
	w.pairOnce.Do(func() {
		w.pairCodes = make([]uint16, w.M*groupsK*16)
		w.code3 = make([]bool, w.M)
		parallel.ForHot(w.M, threads, func(lo, hi int) {
			i2sPairCodes(w.raw[lo*w.rowB:hi*w.rowB], w.rowB, w.pairCodes[lo*groupsK*16:hi*groupsK*16], w.code3[lo:hi])
		})
	})
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		var sums [i2sRowTile][i2sLanes]int32
		for r0 := lo; r0 < hi; {
			if w.code3[r0] {
				// A row holding code 3 could overflow the table's lanes.
				row := w.raw[r0*w.rowB : (r0+1)*w.rowB]
				for t := range acts {
					dst[t][r0] = i2sOut(dotI2S(row, acts[t].q), &acts[t], w.Scale)
				}
				r0++
				continue
			}
			r1 := r0 + 1
			for r1 < hi && r1 < r0+i2sRowTile && !w.code3[r1] {
				r1++
			}
			tile := w.raw[r0*w.rowB : r1*w.rowB]
			codes := w.pairCodes[r0*groupsK*16 : r1*groupsK*16]
			for g := 0; g < groups; g++ {
				t0, t1 := g*i2sLanes, min(n, (g+1)*i2sLanes)
				dotI2SLUTRows(tile, w.rowB, lut[g*per:(g+1)*per], codes, sums[:r1-r0])
				for r := r0; r < r1; r++ {
					for t := t0; t < t1; t++ {
						dst[t][r] = i2sOut(sums[r-r0][t-t0], &acts[t], w.Scale)
					}
				}
			}
			r0 = r1
		}
	})
}

// matMulI2SAsm is matMulI2S with the assembly kernels: for each tile of
// i2sAsmRowTile rows, the tokens four at a time (DotI2S4, one read of a
// row for four tokens) against every row of the tile, the last one to
// three tokens with DotI2S. Both give dotI2S's sums.
func (w *Matrix) matMulI2SAsm(dst [][]float32, acts []Activation, threads int) {
	n4 := len(acts) &^ 3
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		for r0 := lo; r0 < hi; r0 += i2sAsmRowTile {
			r1 := min(r0+i2sAsmRowTile, hi)
			for t := 0; t < n4; t += 4 {
				a := acts[t : t+4 : t+4]
				for r := r0; r < r1; r++ {
					s := kernels.DotI2S4(w.raw[r*w.rowB:(r+1)*w.rowB], a[0].q, a[1].q, a[2].q, a[3].q)
					for k := range a {
						dst[t+k][r] = i2sOut(s[k], &a[k], w.Scale)
					}
				}
			}
			for t := n4; t < len(acts); t++ {
				a, d := &acts[t], dst[t]
				for r := r0; r < r1; r++ {
					d[r] = i2sOut(kernels.DotI2S(w.raw[r*w.rowB:(r+1)*w.rowB], a.q), a, w.Scale)
				}
			}
		}
	})
}

// i2sBatchTileBytes bounds the weight bytes matMulI2SBatch multiplies
// with every group of tokens before the next rows: they stay in L2 (1 MiB
// on Zen 5) while each group's packed activations (8·K bytes) stay in L1
// or L2, so the activations, read once per row, are not streamed from L3.
// (A variable so BenchmarkMatMulI2SPrompt can compare tile sizes.)
var i2sBatchTileBytes = 192 << 10

// useI2SBatch selects matMulI2SBatch for batches of at least
// kernels.I2SBatchTokens tokens (tests and benchmarks switch it off).
var useI2SBatch = kernels.I2SBatchAccelerated()

// matMulI2SBatch is matMulI2SAsm with the AVX-512 batched kernel: the
// tokens packed in groups of kernels.I2SBatchTokens (each weight row read
// once per group), the last len(acts) mod I2SBatchTokens tokens through
// DotI2S4 and DotI2S. Every kernel gives dotI2S's sums.
func (w *Matrix) matMulI2SBatch(dst [][]float32, acts []Activation, sc *batchScratch, threads int) {
	const T = kernels.I2SBatchTokens
	n := len(acts)
	groups := n / T
	per := kernels.I2SBatchLen(w.kPad)
	if cap(sc.xt) < groups*per {
		sc.xt = make([]int8, groups*per)
	}
	xt := sc.xt[:groups*per]
	parallel.ForHot(groups, threads, func(lo, hi int) {
		var qs [T][]int8
		for g := lo; g < hi; g++ {
			for k := range qs {
				qs[k] = acts[g*T+k].q
			}
			kernels.PackI2SBatch(xt[g*per:(g+1)*per], qs[:], w.kPad)
		}
	})
	rest := acts[groups*T:]
	n4 := len(rest) &^ 3
	tileRows := max(16, i2sBatchTileBytes/w.rowB&^15)
	nb := w.rowB / 32
	parallel.ForHot(w.M, threads, func(lo, hi int) {
		sums := make([]int32, min(tileRows, hi-lo)*T)
		for r0 := lo; r0 < hi; r0 += tileRows {
			r1 := min(r0+tileRows, hi)
			for g := 0; g < groups; g++ {
				// The row in segments whose packed activations fit in L1.
				clear(sums[:(r1-r0)*T])
				for b0 := 0; b0 < nb; b0 += kernels.I2SBatchSegment {
					seg := xt[g*per+b0/2*T*256 : (g+1)*per]
					kernels.DotI2SBatch(sums[:(r1-r0)*T], w.raw[r0*w.rowB+32*b0:r1*w.rowB], w.rowB, min(kernels.I2SBatchSegment, nb-b0), seg)
				}
				a := acts[g*T : (g+1)*T : (g+1)*T]
				for k := range a {
					i2sOutRows(dst[g*T+k][r0:r1], sums[k:], T, &a[k], w.Scale)
				}
			}
			for t := 0; t < n4; t += 4 {
				a := rest[t : t+4 : t+4]
				for r := r0; r < r1; r++ {
					s := kernels.DotI2S4(w.raw[r*w.rowB:(r+1)*w.rowB], a[0].q, a[1].q, a[2].q, a[3].q)
					for k := range a {
						dst[groups*T+t+k][r] = i2sOut(s[k], &a[k], w.Scale)
					}
				}
			}
			for t := n4; t < len(rest); t++ {
				a, d := &rest[t], dst[groups*T+t]
				for r := r0; r < r1; r++ {
					d[r] = i2sOut(kernels.DotI2S(w.raw[r*w.rowB:(r+1)*w.rowB], a.q), a, w.Scale)
				}
			}
		}
	})
}

// i2sOutRows is i2sOut for consecutive rows: d[i] from sums[i·stride].
func i2sOutRows(d []float32, sums []int32, stride int, a *Activation, scale float32) {
	sumf, s := float32(a.sum), a.s
	for i := range d {
		v := float32(sums[i*stride]) - sumf
		v = v / s
		d[i] = v * scale
	}
}

// notMainline refuses the mainline ggml types bitnet.cpp does not have
// (MXFP4, NVFP4, Q1_0): the file was made for llama.cpp, not for a BitNet
// runtime. Mainline ggml gives ids 39–41 to these types while bitnet.cpp
// gives 39 to TL2 (gguf.Type.IsMainlineOnly; ggml/src/ggml.c type_traits in
// ggml-org/llama.cpp).
//
// It also refuses the ids of the 2026 type-id map the runtime cannot
// compute (gguf/layouts.go): Prism's PQ2_0/PTQ1_0 (a Hadamard transform of
// the activations), Prism's legacy Q2_0_g128 (requant turns it into Q2_0),
// and an id whose data fits none of its documented layouts.
func notMainline(typ gguf.Type) error {
	switch {
	case typ.IsMainlineOnly():
		return fmt.Errorf("type %s (ggml id %d of mainline llama.cpp) is not a BitNet type this runtime runs (%s, TL1, TL2); run the file with llama.cpp", typ, typ.ID(), supportedTypes())
	case typ.NeedsHadamard():
		return errors.New(gguf.HadamardRefusal(typ))
	case typ == gguf.TypeQ2_0G128:
		return fmt.Errorf("type %s (id %d: PrismML's legacy Q2_0, 34 bytes per 128 weights, which mainline reads as 64-weight blocks) is not computed here; convert it losslessly with bitnet-convert requant FILE --outtype q2_0", typ, typ.ID())
	case typ.IsLayoutUnknown():
		return fmt.Errorf("%s: its data fits none of the documented layouts of id %d (bitnet-convert inspect names the sizes); nothing here computes it", typ, typ.ID())
	}
	return nil
}

// unsupportedType is NewMatrix's error for a type not in weightKernels.
func unsupportedType(typ gguf.Type) error {
	return fmt.Errorf("type %s is not supported by the runtime (supported: %s)", typ, supportedTypes())
}
