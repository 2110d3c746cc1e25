package runtime

import (
	"fmt"
	"math"
)

// PerplexityResult is the outcome of Perplexity.
type PerplexityResult struct {
	PPL    float64 // exp(mean NLL)
	NLL    float64 // mean negative log-likelihood (nats per token)
	Tokens int     // number of scored tokens
	Chunks int     // number of chunks evaluated
	// PPLErr is the uncertainty llama-perplexity prints after "+/-":
	// PPL·√(var(NLL)/(Tokens−1)) with var = mean(NLL²) − mean(NLL)²
	// (llama.cpp tools/perplexity/perplexity.cpp, function perplexity). It
	// is 0 when fewer than two tokens were scored or the variance is not
	// positive.
	PPLErr float64
	// NLL2 is the mean of the squared per-token NLL.
	NLL2 float64
}

// ChunkProgress is reported after each chunk by PerplexityProgress: the
// running perplexity over every token scored so far, as llama-perplexity
// prints it ("[Chunk]PPL,").
type ChunkProgress struct {
	Chunk  int     // 1-based number of the chunk just finished
	Chunks int     // chunks to evaluate in all
	PPL    float64 // exp(mean NLL) over all chunks so far
	Tokens int     // tokens scored so far
}

// Perplexity scores ids (already tokenized, with BOS) the way
// llama-perplexity does: ids is cut into
// consecutive chunks of nCtx tokens (at most chunks of them; chunks ≤ 0
// means all whole chunks), each chunk's first token is replaced by bos when
// bos ≥ 0, the chunk runs on an empty KV cache as one EvalBatch (the same
// logits as one token per Eval call), and positions nCtx/2 …
// nCtx−2 are scored with the log-probability of the next token (log-softmax
// in float64). Errors: nCtx < 4, fewer than nCtx ids, a token id outside the
// vocabulary.
func Perplexity(m *Model, ids []int32, nCtx, chunks int, bos int32) (PerplexityResult, error) {
	return PerplexityProgress(m, ids, nCtx, chunks, bos, nil)
}

// PerplexityProgress is Perplexity calling progress (when not nil) after
// every chunk with the running perplexity.
func PerplexityProgress(m *Model, ids []int32, nCtx, chunks int, bos int32, progress func(ChunkProgress)) (PerplexityResult, error) {
	n, err := PerplexityChunks(len(ids), nCtx, chunks)
	if err != nil {
		return PerplexityResult{}, err
	}
	return perplexity(m, ids, nCtx, n, bos, progress, nil)
}

// PerplexityChunks is the number of chunks Perplexity scores for nIDs
// tokens: every whole chunk of nCtx, at most chunks when chunks > 0.
// Errors: nCtx < 4, fewer than nCtx tokens.
func PerplexityChunks(nIDs, nCtx, chunks int) (int, error) {
	if nCtx < 4 {
		return 0, fmt.Errorf("context %d is too small (need ≥ 4)", nCtx)
	}
	n := nIDs / nCtx
	if n == 0 {
		return 0, fmt.Errorf("%d tokens is less than one chunk of %d (use a longer text or a smaller context)", nIDs, nCtx)
	}
	if chunks > 0 && chunks < n {
		n = chunks
	}
	return n, nil
}

// perplexity scores n chunks; scored, when set, gets each chunk's scored
// rows (positions nCtx/2 … nCtx−2) and their next tokens before they are
// summed, and may stop the run with an error.
func perplexity(m *Model, ids []int32, nCtx, n int, bos int32, progress func(ChunkProgress), scored func(c int, rows [][]float32, next []int32) error) (PerplexityResult, error) {
	var acc pplSums
	s := m.NewSession(nCtx)
	first := nCtx / 2
	chunk := make([]int32, nCtx)
	for c := 0; c < n; c++ {
		copy(chunk, ids[c*nCtx:(c+1)*nCtx])
		if bos >= 0 {
			chunk[0] = bos
		}
		s.Reset()
		rows, err := s.EvalBatch(chunk[:nCtx-1], first)
		if err != nil {
			return acc.res, fmt.Errorf("chunk %d: %w", c, err)
		}
		if err := acc.add(c, first, rows, chunk[first+1:], scored); err != nil {
			return acc.res, err
		}
		if progress != nil {
			progress(acc.progress(c+1, n))
		}
	}
	return acc.finish(n), nil
}

// pplSums accumulates the scored tokens of a perplexity run.
type pplSums struct {
	res       PerplexityResult
	nll, nll2 float64
}

// add checks and scores chunk c's rows (the logits of positions first …
// nCtx−2) against next (the tokens at positions first+1 …), after passing
// them to scored when set.
func (a *pplSums) add(c, first int, rows [][]float32, next []int32, scored func(c int, rows [][]float32, next []int32) error) error {
	if len(next) < len(rows) {
		return fmt.Errorf("chunk %d: %d rows of logits for %d next tokens", c, len(rows), len(next))
	}
	for i, logits := range rows {
		if t := next[i]; t < 0 || int(t) >= len(logits) {
			return fmt.Errorf("chunk %d position %d: token id %d is outside the vocabulary", c, first+i+1, t)
		}
	}
	if scored != nil {
		if err := scored(c, rows, next); err != nil {
			return fmt.Errorf("chunk %d: %w", c, err)
		}
	}
	for i, logits := range rows {
		v := -LogSoftmax(logits, int(next[i]))
		a.nll += v
		a.nll2 += v * v
		a.res.Tokens++
	}
	return nil
}

// progress is the running perplexity after chunk (1-based) of n.
func (a *pplSums) progress(chunk, n int) ChunkProgress {
	return ChunkProgress{Chunk: chunk, Chunks: n, PPL: math.Exp(a.nll / float64(a.res.Tokens)), Tokens: a.res.Tokens}
}

// finish returns the result of n chunks.
func (a *pplSums) finish(n int) PerplexityResult {
	res := a.res
	res.Chunks = n
	res.NLL = a.nll / float64(res.Tokens)
	res.NLL2 = a.nll2 / float64(res.Tokens)
	res.PPL = math.Exp(res.NLL)
	if v := res.NLL2 - res.NLL*res.NLL; v > 0 && res.Tokens > 1 {
		res.PPLErr = res.PPL * math.Sqrt(v/float64(res.Tokens-1))
	}
	return res
}

// LogSoftmax returns log(softmax(logits)[tok]) as llama-perplexity computes
// it: max in float32, Σ exp(l − max) in float64, l[tok] − max − log(Σ).
func LogSoftmax(logits []float32, tok int) float64 {
	mx := logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range logits {
		sum += float64(float32(math.Exp(float64(v - mx))))
	}
	return float64(logits[tok]-mx) - math.Log(sum)
}
