package runtime

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// llama-perplexity's batches (bitnet.cpp c82b5e66 with its llama.cpp fork
// 406a5036, examples/perplexity/perplexity.cpp, function perplexity, and
// src/llama.cpp, llama_decode_internal): with -b B ≥ -c C it puts
// n_seq = B/C chunks into one llama_decode call, chunk s in KV cells
// s·C … s·C+C−1 of one cache; with B < C it feeds each chunk in calls of
// B tokens. llama_decode cuts a call into physical batches (ubatches) of
// min(-ub, max(32, B)) consecutive tokens. What a ubatch computes depends on
// its size only through ggml_compute_forward_mul_mat (ggml/src/ggml.c),
// which offers each product to llamafile_sgemm (ggml/src/llamafile/
// sgemm.cpp) first: tinyBLAS takes it when src1 has at least two
// contiguous rows, the weight is F32 or F16 and src1 F32, and K is a
// multiple of 8 (AVX2). In the bitnet graph that is
//   - kq·V (the softmax probabilities, float32, times the F16 V cache,
//     K = the padded cell count) for a ubatch of ≥ 2 tokens: the
//     probabilities are not rounded to F16 and the products are summed
//     in tinyBLAS's order instead of ggml_vec_dot_f16's;
//   - an F16 or F32 LM head for a ubatch with ≥ 2 output rows (the rows
//     llama-perplexity asks logits for: positions ≥ C/2), with the f32
//     hidden state;
//   - F32 projections (an all-F32 file) for a ubatch of ≥ 2 tokens.
// K·q is not: q is a permuted view, so it is rounded to F16 and takes
// ggml_vec_dot_f16 as for one token; I2_S, TQ and K-quant products never
// go to tinyBLAS and keep their one-token sums. A Q8_0 LM head (bitnet.cpp's
// converter writes token_embd in Q8_0 when the hidden size is not a
// multiple of 256, and the head is tied to it) does go to tinyBLAS, as
// tinyBLAS_Q0_AVX, with the rows quantized to Q8_0 as for one token; on
// AVX2 without VNNI its order is ggml_vec_dot_q8_0_q8_0's (ggml-quants.c):
// per 32-block eight int32 lanes of four products (_mm256_maddubs_epi16,
// _mm256_madd_epi16), converted to float and fused-multiply-added with the
// float32 product of the two block scales, then hsum, which is
// hsum_float_8. So the one-token Q8_0 head is already the batched one.
// The cell a token sits in matters too: ggml_vec_soft_max_f32 sums the
// exponentials in groups of eight cells, tinyBLAS's lanes are the cell
// index mod 8 and ggml_vec_dot_f16's accumulators the index mod 32, while
// the other chunks' cells of the cache are masked to exact zeros.

// ubatchArith is the arithmetic a Session uses for the rows it evaluates
// next (Session.ub); the zero value is the one-token path.
type ubatchArith struct {
	// kqvTiny: the probabilities multiply V as tinyBLAS does (f32, eight
	// lanes by cell index mod 8, kernels.TinyBLASDotsOffF16), for a
	// ubatch of ≥ 2 tokens.
	kqvTiny bool
	// headTiny: an F16/F32 LM head (K a multiple of 8) takes the f32
	// hidden rows through tinyBLAS (kernels.TinyBLASDotsF16/F32).
	headTiny bool
	// f32Tiny: F32 projections (K a multiple of 8) take tinyBLAS.
	f32Tiny bool
	// cellOff is the KV cell of the chunk's position 0 in llama.cpp's
	// cache; only cellOff mod 32 changes a number.
	cellOff int
}

// packRows returns the rows (each k long) one after another in one slice:
// the layout the tinyBLAS kernels read activations in (row t at t·k).
func packRows(rows [][]float32, k int) []float32 {
	buf := make([]float32, len(rows)*k)
	for t, r := range rows {
		copy(buf[t*k:(t+1)*k], r)
	}
	return buf
}

// headBlockRows is how many rows of the LM head one worker takes at a time
// in headTinyBLASBitnet: 64 F16 rows of the large shape (K 1536) are
// 192 KiB, which stay in the L2 cache while every group of eight hidden
// rows passes over them.
const headBlockRows = 64

// tinyHead writes to dst[t][r] tinyBLAS<8>'s dot of the F16 or F32 row r
// of out (K a multiple of 8) with row t of xs (len(dst) rows of K,
// packed), the rows taken in blocks of headBlockRows by the workers.
func tinyHead(out *Matrix, dst [][]float32, xs []float32, threads int) {
	k, nt := out.K, len(dst)
	blocks := (out.M + headBlockRows - 1) / headBlockRows
	parallel.ForHot(blocks, max(threads, 1), func(lo, hi int) {
		var d [8]float32
		for b := lo; b < hi; b++ {
			r0, r1 := b*headBlockRows, min((b+1)*headBlockRows, out.M)
			for t0 := 0; t0 < nt; t0 += len(d) {
				dt := d[:min(len(d), nt-t0)]
				x := xs[t0*k:]
				for r := r0; r < r1; r++ {
					if out.Type == gguf.TypeF32 {
						kernels.TinyBLASDotsF32(dt, out.f32[r*k:(r+1)*k], x, k)
					} else {
						kernels.TinyBLASDotsF16(dt, out.u16[r*k:(r+1)*k], x, k)
					}
					for i, v := range dt {
						dst[t0+i][r] = v
					}
				}
			}
		}
	})
}

// headTinyBLASBitnet is the batched LM head of bitnet.cpp's fork: an F16
// or F32 output matrix (K a multiple of 8) times the f32 hidden rows by
// tinyBLAS. It reports false (nothing computed) for any other head.
func (s *Session) headTinyBLASBitnet(dst, hidden [][]float32) bool {
	out := s.m.output
	if out.K%8 != 0 || (out.Type != gguf.TypeF16 && out.Type != gguf.TypeF32) {
		return false
	}
	tinyHead(out, dst, packRows(hidden, out.K), s.m.opts.Threads)
	return true
}

// PerplexityBatching is llama-perplexity's batching (-b, -ub) for
// PerplexityBatched.
type PerplexityBatching struct {
	// Batch is -b, the logical batch (llama-perplexity's default 2048):
	// Batch ≥ nCtx evaluates Batch/nCtx chunks together in one cache, and
	// then must be a multiple of nCtx; Batch < nCtx feeds each chunk in
	// pieces of Batch tokens.
	Batch int
	// UBatch is -ub, the physical batch (default 512): the most tokens
	// llama_decode computes at once.
	UBatch int
}

// OneToken is the batching that gives the one-token arithmetic (-b 1
// -ub 1): every token is its own llama_decode call.
var OneToken = PerplexityBatching{Batch: 1, UBatch: 1}

// Check returns an error naming -b or -ub when the batching is one
// llama-perplexity refuses (its GGML_ASSERT(n_batch < n_ctx || n_batch %
// n_ctx == 0)) or not positive.
func (b PerplexityBatching) Check(nCtx int) error {
	switch {
	case b.Batch < 1:
		return fmt.Errorf("-b %d: the batch size must be ≥ 1", b.Batch)
	case b.UBatch < 1:
		return fmt.Errorf("-ub %d: the physical batch size must be ≥ 1", b.UBatch)
	case b.Batch >= nCtx && b.Batch%nCtx != 0:
		return fmt.Errorf("-b %d: a batch of at least one chunk must be a multiple of -c %d (llama-perplexity asserts this too)", b.Batch, nCtx)
	}
	return nil
}

// pplSegment is a run of positions [lo, hi) of one chunk that lie in one
// ubatch, with that ubatch's arithmetic.
type pplSegment struct {
	lo, hi int
	ub     ubatchArith
}

// pplPlan returns, for each of the nSeqBatch chunks of one llama_decode
// group, the segments llama-perplexity's batches cut it into, in position
// order (see the comment at the top of this file). b must pass Check.
// Positions from nCtx/2 on have logits, or every position when allOut
// (the --kl-divergence run, which decodes with logits_all).
func pplPlan(nCtx, nSeqBatch int, b PerplexityBatching, allOut bool) [][]pplSegment {
	nSeq := max(1, b.Batch/nCtx)
	nKV := nSeq * nCtx
	nBatch := min(b.Batch, nKV)
	// llama_new_context_with_model: n_batch ≤ n_ctx (padded to 32) and
	// ≥ GGML_KQ_MASK_PAD (32), n_ubatch = min(n_batch, -ub).
	ctxBatch := max(min((nKV+31)&^31, nBatch), 32)
	nUB := min(ctxBatch, b.UBatch)
	first := nCtx / 2
	plan := make([][]pplSegment, nSeqBatch)
	type tok struct{ seq, pos int }
	var call []tok
	for start := 0; start < nCtx; start += nBatch {
		size := min(nCtx-start, nBatch)
		call = call[:0]
		for s := 0; s < nSeqBatch; s++ {
			for k := 0; k < size; k++ {
				call = append(call, tok{s, start + k})
			}
		}
		for u := 0; u < len(call); u += nUB {
			ubt := call[u:min(u+nUB, len(call))]
			nOut := 0
			for _, t := range ubt {
				if allOut || t.pos >= first {
					nOut++
				}
			}
			for i := 0; i < len(ubt); {
				j := i
				for j < len(ubt) && ubt[j].seq == ubt[i].seq {
					j++
				}
				s := ubt[i].seq
				plan[s] = append(plan[s], pplSegment{lo: ubt[i].pos, hi: ubt[j-1].pos + 1, ub: ubatchArith{
					kqvTiny:  len(ubt) >= 2,
					headTiny: nOut >= 2,
					f32Tiny:  len(ubt) >= 2,
					cellOff:  s * nCtx,
				}})
				i = j
			}
		}
	}
	// Merge neighbours of the same arithmetic: one EvalBatch call each.
	for s, segs := range plan {
		out := segs[:0]
		for _, g := range segs {
			if n := len(out); n > 0 && out[n-1].ub == g.ub && out[n-1].hi == g.lo {
				out[n-1].hi = g.hi
				continue
			}
			out = append(out, g)
		}
		plan[s] = out
	}
	return plan
}

// PerplexityBatched is PerplexityProgress with llama-perplexity's batches:
// the chunks are evaluated in the groups and physical batches b makes
// (pplPlan), each row with the arithmetic bitnet.cpp's AVX2 build gives it
// there, so the figures are llama-perplexity's with the same -c, -b and
// -ub. OneToken gives PerplexityProgress's one-token arithmetic. Only the
// bitnet.cpp arithmetic (Options.Arith ArithBitnetCpp, not F32Attention)
// has batched rows; under another arithmetic b is checked and otherwise
// ignored. Errors: those of PerplexityProgress, and b failing Check.
func PerplexityBatched(m *Model, ids []int32, nCtx, chunks int, bos int32, b PerplexityBatching, progress func(ChunkProgress)) (PerplexityResult, error) {
	n, err := PerplexityChunks(len(ids), nCtx, chunks)
	if err != nil {
		return PerplexityResult{}, err
	}
	if err := b.Check(nCtx); err != nil {
		return PerplexityResult{}, err
	}
	return perplexityPlanned(m, ids, nCtx, n, bos, b, false, progress, nil)
}

// perplexityPlanned is perplexity with the chunks cut as b says (pplPlan;
// allOut as there).
func perplexityPlanned(m *Model, ids []int32, nCtx, n int, bos int32, b PerplexityBatching, allOut bool, progress func(ChunkProgress), scored func(c int, rows [][]float32, next []int32) error) (PerplexityResult, error) {
	if b == OneToken || m.opts.Arith != ArithBitnetCpp || m.opts.F32Attention {
		return perplexity(m, ids, nCtx, n, bos, progress, scored)
	}
	nSeq := max(1, b.Batch/nCtx)
	first := nCtx / 2
	var acc pplSums
	s := m.NewSession(nCtx)
	defer func() { s.ub = ubatchArith{} }()
	chunk := make([]int32, nCtx)
	var kept [][]float32
	for c0 := 0; c0 < n; c0 += nSeq {
		plan := pplPlan(nCtx, min(nSeq, n-c0), b, allOut)
		for q, segs := range plan {
			c := c0 + q
			copy(chunk, ids[c*nCtx:(c+1)*nCtx])
			if bos >= 0 {
				chunk[0] = bos
			}
			s.Reset()
			var rows [][]float32
			for _, g := range segs {
				// Position nCtx−1 is evaluated by llama-perplexity but
				// never scored; it changes no other row.
				hi := min(g.hi, nCtx-1)
				if g.lo >= hi {
					continue
				}
				s.ub = g.ub
				from := min(max(first-g.lo, 0), hi-g.lo)
				out, err := s.EvalBatch(chunk[g.lo:hi], from)
				if err != nil {
					return acc.res, fmt.Errorf("chunk %d: %w", c, err)
				}
				if len(segs) == 1 {
					rows = out
					break
				}
				for _, r := range out {
					if len(kept) <= len(rows) {
						kept = append(kept, make([]float32, len(r)))
					}
					copy(kept[len(rows)], r)
					rows = kept[:len(rows)+1]
				}
			}
			if err := acc.add(c, first, rows, chunk[first+1:], scored); err != nil {
				return acc.res, err
			}
			if progress != nil {
				progress(acc.progress(c+1, n))
			}
		}
	}
	return acc.finish(n), nil
}
