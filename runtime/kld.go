package runtime

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// KL-divergence base files are llama-perplexity's --kl-divergence-base
// format (ggml-org/llama.cpp tools/perplexity/perplexity.cpp, functions
// perplexity, log_softmax and kl_divergence), all little-endian:
//
//	"_logits_"                     8 bytes
//	n_ctx, n_vocab, n_chunk        3 × int32
//	tokens                         n_chunk·n_ctx × int32 (as tokenized, before the BOS replacement)
//	per chunk, per scored position (n_ctx − 1 − n_ctx/2 of them):
//	  scale, min_log_prob          2 × float32
//	  log-probs                    nv − 4 uint16, nv = 2·⌈n_vocab/2⌉ + 4:
//	                               round((l − min)/scale) for the logits l above
//	                               min = max(min l, max l − 16), else 0
//
// so log p ≈ scale·q + min_log_prob. A file is at most MaxKLBaseBytes.

// KLBaseMagic opens every KL-divergence base file.
const KLBaseMagic = "_logits_"

// MaxKLBaseBytes bounds the base file written and read (8 GiB): at 2 bytes
// per vocabulary entry per scored token a large vocabulary fills disks
// quickly (128256 ids × 64 scored tokens per chunk of 128 is 16 MiB a
// chunk); fewer chunks (--chunks) keep it smaller.
const MaxKLBaseBytes = 8 << 30

// klHeaderBytes is the magic and the three counts.
const klHeaderBytes = 8 + 3*4

// KLRowWords is nv, the uint16 words of one scored position (two float32
// in the first four words).
func KLRowWords(nVocab int) int { return 2*((nVocab+1)/2) + 4 }

// KLBaseSize is the size in bytes of a base file for n chunks of nCtx
// tokens over a vocabulary of nVocab.
func KLBaseSize(nCtx, nVocab, nChunk int) int64 {
	scored := int64(nCtx - 1 - nCtx/2)
	return klHeaderBytes + 4*int64(nChunk)*int64(nCtx) + 2*int64(nChunk)*scored*int64(KLRowWords(nVocab))
}

// KLBase is the header of a base file.
type KLBase struct {
	NCtx, NVocab, NChunk int
	Tokens               []int32 // NChunk·NCtx ids
}

// WriteKLBaseHeader writes the magic, the counts and the tokens.
func WriteKLBaseHeader(w io.Writer, b *KLBase) error {
	buf := make([]byte, klHeaderBytes, klHeaderBytes+4*len(b.Tokens))
	copy(buf, KLBaseMagic)
	binary.LittleEndian.PutUint32(buf[8:], uint32(b.NCtx))
	binary.LittleEndian.PutUint32(buf[12:], uint32(b.NVocab))
	binary.LittleEndian.PutUint32(buf[16:], uint32(b.NChunk))
	for _, t := range b.Tokens {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(t))
	}
	_, err := w.Write(buf)
	return err
}

// ErrKLBase marks a base file that is not one (wrapped with the reason).
var ErrKLBase = errors.New("not a KL-divergence base file")

// ReadKLBaseHeader reads the header of a base file of size bytes. Errors
// (wrapping ErrKLBase): a wrong magic, counts that are not positive, a
// size other than KLBaseSize of the counts (checked before the tokens are
// allocated), a size above MaxKLBaseBytes.
func ReadKLBaseHeader(r io.Reader, size int64) (*KLBase, error) {
	var h [klHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKLBase, err)
	}
	if string(h[:8]) != KLBaseMagic {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrKLBase, KLBaseMagic)
	}
	nCtx := int32(binary.LittleEndian.Uint32(h[8:]))
	nVocab := int32(binary.LittleEndian.Uint32(h[12:]))
	nChunk := int32(binary.LittleEndian.Uint32(h[16:]))
	if nCtx < 4 || nVocab < 1 || nChunk < 1 {
		return nil, fmt.Errorf("%w: n_ctx %d, n_vocab %d, n_chunk %d", ErrKLBase, nCtx, nVocab, nChunk)
	}
	want := KLBaseSize(int(nCtx), int(nVocab), int(nChunk))
	if want > MaxKLBaseBytes || want != size {
		return nil, fmt.Errorf("%w: %d bytes, but n_ctx %d, n_vocab %d and n_chunk %d need %d", ErrKLBase, size, nCtx, nVocab, nChunk, want)
	}
	b := &KLBase{NCtx: int(nCtx), NVocab: int(nVocab), NChunk: int(nChunk), Tokens: make([]int32, int(nCtx)*int(nChunk))}
	raw := make([]byte, 4*len(b.Tokens))
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("%w: tokens: %v", ErrKLBase, err)
	}
	for i := range b.Tokens {
		b.Tokens[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return b, nil
}

// EncodeLogProbs writes one scored position's row (len KLRowWords) for
// logits, as llama-perplexity's writing log_softmax: max and min in
// float32, min raised to max − 16, Σ expf(l − max) in float64, then
// scale = (max − min)/65535, min_log_prob = min − max − log Σ, and
// q = round-half-even((l − min)·(1/scale)) for l > min, else 0 (a row of
// equal logits is all zeros).
func EncodeLogProbs(dst []uint16, logits []float32) {
	mx, mn := logits[0], logits[0]
	for _, v := range logits[1:] {
		mx, mn = max(mx, v), min(mn, v)
	}
	mn = max(mn, mx-16)
	var sum float64
	for _, v := range logits {
		sum += float64(expf(v - mx))
	}
	lse := float32(math.Log(sum))
	minLog := mn - mx - lse
	scale := (mx - mn) / 65535
	putF32Words(dst[0:2], scale)
	putF32Words(dst[2:4], minLog)
	q := dst[4 : 4+len(logits)]
	clear(dst[4:])
	if scale == 0 {
		return
	}
	inv := 1 / scale
	for i, v := range logits {
		if v > mn {
			q[i] = uint16(int32(math.RoundToEven(float64(inv * (v - mn)))))
		}
	}
}

// putF32Words stores v in two uint16 words as its bytes lie in the file
// (little-endian: low half first).
func putF32Words(w []uint16, v float32) {
	b := math.Float32bits(v)
	w[0], w[1] = uint16(b), uint16(b>>16)
}

// expf is float32 exp, rounded once (glibc's expf is correctly rounded).
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// finiteRecord checks the float32 scale and min that open a base row
// (words 0–1 and 2–3, as putF32Words stores them): both must be finite and
// so must the largest log-probability they decode, scale·65535 + min.
// llama-perplexity's --kl-divergence (examples/perplexity/perplexity.cpp,
// kl_divergence) reads them unchecked and reports NaN or +Inf.
func finiteRecord(row []uint16) error {
	scale := math.Float32frombits(uint32(row[0]) | uint32(row[1])<<16)
	minLog := math.Float32frombits(uint32(row[2]) | uint32(row[3])<<16)
	for _, v := range []struct {
		name string
		x    float32
	}{{"scale", scale}, {"min", minLog}, {"scale·65535 + min", scale*65535 + minLog}} {
		if f := float64(v.x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("the record's %s %v is not finite", v.name, v.x)
		}
	}
	// Finite but no log-probabilities (defect H14: min 1e30 gave a mean
	// KLD of +Inf that was blamed on the model): the scale is not
	// negative and the largest value, a log-probability, is at most 0
	// (with room for float32 rounding).
	if scale < 0 || scale*65535+minLog > 1e-3 {
		return fmt.Errorf("the record's scale %v and min %v give log-probabilities up to %v, above 0", scale, minLog, scale*65535+minLog)
	}
	return nil
}

// KLDStats accumulates llama-perplexity's --kl-divergence sums
// (kl_divergence_result and the KLD-mode log_softmax): every value is the
// float32 or float64 the reference computes, in its order.
type KLDStats struct {
	SumNLL, SumNLL2, SumNLLBase, SumNLLBase2, SumNLLNLLBase float64
	SumKLD, SumKLD2                                         float64
	SumPDiff, SumPDiff2, SumPDiff4                          float64
	MaxPDiff                                                float32
	SameTop, Count                                          int
	// KLD and PDiff are the per-token values, in order.
	KLD, PDiff []float32
}

// Add scores one position: logits of the model, row the base's stored row
// (len KLRowWords(len(logits))), tok the next token.
func (s *KLDStats) Add(logits []float32, row []uint16, tok int) {
	mx, imax := logits[0], 0
	for i, v := range logits[1:] {
		if v > mx {
			mx, imax = v, i+1
		}
	}
	var sumExp float64
	for _, v := range logits {
		sumExp += float64(expf(v - mx))
	}
	lse := float32(math.Log(sumExp))
	scale := math.Float32frombits(uint32(row[0]) | uint32(row[1])<<16)
	minLog := math.Float32frombits(uint32(row[2]) | uint32(row[3])<<16)
	base := row[4:]
	nll := mx + lse - logits[tok]
	s.SumNLL += float64(nll)
	s.SumNLL2 += float64(nll * nll)
	nllBase := -(scale*float32(base[tok]) + minLog)
	s.SumNLLBase += float64(nllBase)
	s.SumNLLBase2 += float64(nllBase * nllBase)
	s.SumNLLNLLBase += float64(nll * nllBase)
	mx += lse
	var sum float64
	imaxBase := -1
	var pMax float32
	for i := range logits {
		pl := scale*float32(base[i]) + minLog
		if i == 0 || pl > pMax {
			pMax, imaxBase = pl, i
		}
		if pl > -16 {
			sum += float64(expf(pl) * (pl - logits[i] + mx))
		}
	}
	s.SumKLD += sum
	s.SumKLD2 += sum * sum
	s.Count++
	if imax == imaxBase {
		s.SameTop++
	}
	pd := expf(-nll) - expf(-nllBase)
	s.SumPDiff += float64(pd)
	pd2 := float64(pd * pd)
	s.SumPDiff2 += pd2
	s.SumPDiff4 += pd2 * pd2
	s.MaxPDiff = max(s.MaxPDiff, float32(math.Abs(float64(pd))))
	s.KLD = append(s.KLD, float32(sum))
	s.PDiff = append(s.PDiff, pd)
}

// MeanErr is llama-perplexity's mean_and_uncertainty: the mean of the
// values whose sum and sum of squares are given, and √(var/(n−1)) when
// var > 0 and n > 10, else 0.
func MeanErr(sum, sum2 float64, n int) (mean, err float64) {
	if n < 1 {
		return 0, 0
	}
	mean = sum / float64(n)
	v := sum2/float64(n) - mean*mean
	if v > 0 && n > 10 {
		err = math.Sqrt(v / float64(n-1))
	}
	return mean, err
}

// Covariance is llama-perplexity's covariance of the log-perplexities
// (0 under 10 values).
func Covariance(suma, sumb, sumab float64, n int) float64 {
	if n < 10 {
		return 0
	}
	c := float64(n)
	return (sumab/c - (suma/c)*(sumb/c)) / (c - 1)
}

// Percentile is llama-perplexity's linear interpolation on sorted values.
func Percentile(sorted []float32, fraction float32) float32 {
	if fraction <= 0 {
		return sorted[0]
	}
	if fraction >= 1 {
		return sorted[len(sorted)-1]
	}
	p := fraction * float32(len(sorted)-1)
	ip := int(p)
	p -= float32(ip)
	return (1-p)*sorted[ip] + p*sorted[min(ip+1, len(sorted)-1)]
}

// Median is the middle value (mean of the two middle ones) of sorted.
func Median(sorted []float32) float32 {
	n := len(sorted)
	if n%2 == 0 {
		return 0.5 * (sorted[n/2] + sorted[n/2-1])
	}
	return sorted[n/2]
}

// Sorted returns a sorted copy.
func Sorted(v []float32) []float32 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// PerplexityBase is PerplexityProgress that also writes llama-perplexity's
// KL-divergence base file to w: the header with the tokens of the chunks
// scored, then each scored position's row (EncodeLogProbs). Errors: those
// of Perplexity, a file that would exceed MaxKLBaseBytes (checked before
// anything runs; the message gives the largest chunk count that fits), a
// write error.
func PerplexityBase(m *Model, ids []int32, nCtx, chunks int, bos int32, w io.Writer, progress func(ChunkProgress)) (PerplexityResult, error) {
	return PerplexityBaseBatched(m, ids, nCtx, chunks, bos, OneToken, w, progress)
}

// PerplexityBaseBatched is PerplexityBase with llama-perplexity's batches
// b (PerplexityBatched); errors also b failing Check.
func PerplexityBaseBatched(m *Model, ids []int32, nCtx, chunks int, bos int32, b PerplexityBatching, w io.Writer, progress func(ChunkProgress)) (PerplexityResult, error) {
	n, err := PerplexityChunks(len(ids), nCtx, chunks)
	if err != nil {
		return PerplexityResult{}, err
	}
	if err := b.Check(nCtx); err != nil {
		return PerplexityResult{}, err
	}
	nVocab := m.Params.NVocab
	if size := KLBaseSize(nCtx, nVocab, n); size > MaxKLBaseBytes {
		per := KLBaseSize(nCtx, nVocab, 1) - klHeaderBytes
		return PerplexityResult{}, fmt.Errorf("the base file would be %.1f GiB (%d chunks × %d scored tokens × %d vocabulary entries), more than %d GiB: score fewer chunks (--chunks %d at most)",
			float64(size)/(1<<30), n, nCtx-1-nCtx/2, nVocab, MaxKLBaseBytes>>30, (MaxKLBaseBytes-klHeaderBytes)/per)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := WriteKLBaseHeader(bw, &KLBase{NCtx: nCtx, NVocab: nVocab, NChunk: n, Tokens: ids[:n*nCtx]}); err != nil {
		return PerplexityResult{}, err
	}
	row := make([]uint16, KLRowWords(nVocab))
	raw := make([]byte, 2*len(row))
	res, err := perplexityPlanned(m, ids, nCtx, n, bos, b, false, progress, func(_ int, rows [][]float32, _ []int32) error {
		for _, logits := range rows {
			EncodeLogProbs(row, logits)
			for i, v := range row {
				binary.LittleEndian.PutUint16(raw[2*i:], v)
			}
			if _, err := bw.Write(raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, bw.Flush()
}

// KLDChunk is reported by KLDivergence after every chunk.
type KLDChunk struct {
	Chunk, Chunks int
	Stats         *KLDStats // running sums over every chunk so far
}

// KLDivergence runs m over the chunks of base (the tokens stored there,
// each chunk's first replaced by bos when bos ≥ 0, as Perplexity) and
// compares every scored position with the base's row read from r (the
// file after its header), as llama-perplexity --kl-divergence does.
// Errors: a vocabulary other than the model's, a chunk longer than the
// model's context, a token outside the vocabulary, a short read, a row
// whose scale or min is NaN or ±Inf.
func KLDivergence(m *Model, base *KLBase, r io.Reader, bos int32, progress func(KLDChunk)) (*KLDStats, error) {
	return KLDivergenceBatched(m, base, r, bos, OneToken, progress)
}

// KLDivergenceBatched is KLDivergence with llama-perplexity's batches as
// its --kl-divergence run makes them (function kl_divergence of
// examples/perplexity/perplexity.cpp): one chunk per cache, fed in calls of
// min(b.Batch, chunk) tokens, every position with logits. Errors also b
// with a batch or physical batch below 1.
func KLDivergenceBatched(m *Model, base *KLBase, r io.Reader, bos int32, b PerplexityBatching, progress func(KLDChunk)) (*KLDStats, error) {
	b.Batch = min(b.Batch, base.NCtx)
	if err := b.Check(base.NCtx); err != nil {
		return nil, err
	}
	if base.NVocab != m.Params.NVocab {
		return nil, fmt.Errorf("the base logits are over a vocabulary of %d tokens, the model has %d: the base must come from a model with the same vocabulary", base.NVocab, m.Params.NVocab)
	}
	if base.NCtx > m.Params.NCtx {
		return nil, fmt.Errorf("the base was computed with chunks of %d tokens, more than the model's context length %d", base.NCtx, m.Params.NCtx)
	}
	nv := KLRowWords(base.NVocab)
	first := base.NCtx / 2
	perChunk := base.NCtx - 1 - first
	raw := make([]byte, 2*nv*perChunk)
	row := make([]uint16, nv)
	st := &KLDStats{}
	br := bufio.NewReaderSize(r, 1<<20)
	_, err := perplexityPlanned(m, base.Tokens, base.NCtx, base.NChunk, bos, b, true, func(p ChunkProgress) {
		if progress != nil {
			progress(KLDChunk{Chunk: p.Chunk, Chunks: p.Chunks, Stats: st})
		}
	}, func(_ int, rows [][]float32, next []int32) error {
		if _, err := io.ReadFull(br, raw); err != nil {
			return fmt.Errorf("base log-probabilities: %w", err)
		}
		for i, logits := range rows {
			for j := range row {
				row[j] = binary.LittleEndian.Uint16(raw[2*(i*nv+j):])
			}
			if err := finiteRecord(row); err != nil {
				return fmt.Errorf("base log-probabilities of position %d: %w; the base file is damaged, remake it with perplexity -f TEXT --kl-divergence-base FILE", first+i+1, err)
			}
			st.Add(logits, row, int(next[i]))
		}
		return nil
	})
	return st, err
}
