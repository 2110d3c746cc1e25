package perplexity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// checkBasePath refuses a --kl-divergence-base output that exists (unless
// force), is not a regular file, or is the model itself.
func checkBasePath(path, model string, force bool) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--kl-divergence-base %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("--kl-divergence-base %s exists and is not a regular file; give a new file path", path)
	}
	if mi, err := os.Stat(model); err == nil && os.SameFile(fi, mi) {
		return fmt.Errorf("--kl-divergence-base %s is the model file -m %s; give another path", path, model)
	}
	if !force {
		return fmt.Errorf("--kl-divergence-base %s exists; pass --force to overwrite it (or --kl-divergence to compare with it)", path)
	}
	return nil
}

// writeBase runs the perplexity and saves the base file atomically. A stop
// signal (Ctrl-C, SIGTERM, SIGHUP) ends the run at the next chunk's write
// and removes the temp file (defect H12); write errors name the base file,
// never the temp file (H13).
func writeBase(opts *PerplexityOptions, m *runtime.Model, ids []int32, bos int32, progress func(runtime.ChunkProgress)) (runtime.PerplexityResult, error) {
	ctx, stop := interrupt.NotifyContext(context.Background())
	defer stop()
	out, err := atomicfile.Create(opts.KLBase, opts.Force)
	if err != nil {
		return runtime.PerplexityResult{}, fmt.Errorf("--kl-divergence-base: %w", err)
	}
	defer out.Abort()
	r, err := runtime.PerplexityBaseBatched(m, ids, opts.Ctx, opts.Chunks, bos, opts.batching(), ctxWriter{ctx, out}, progress)
	if ctx.Err() != nil {
		return r, fmt.Errorf("interrupted; --kl-divergence-base %s was not written", opts.KLBase)
	}
	if err != nil {
		if named := out.NameTarget(err); named != err {
			return r, fmt.Errorf("--kl-divergence-base: %w", named) // the message names the file
		}
		return r, fmt.Errorf("--kl-divergence-base %s: %w", opts.KLBase, err)
	}
	if math.IsNaN(r.PPL) || math.IsInf(r.PPL, 0) {
		// Run fails on this perplexity; a base of non-finite
		// log-probabilities is not kept either.
		return r, nil
	}
	return r, out.NameTarget(out.Commit())
}

// ctxWriter fails every write once ctx is cancelled.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// chunkBOS is the token llama-perplexity puts first in every chunk: the BOS
// that tok's Encode adds (the one add-BOS rule, tokenizer.Tokenizer.AddsBOS,
// so a llama-bpe vocabulary without add_bos_token gets BOS here as it does
// in tokenize and run), else -1 when the vocabulary adds none.
func chunkBOS(tok tokenizer.Tokenizer) int32 {
	if !tok.AddsBOS() {
		return -1
	}
	ids, err := tok.Encode("", true, false)
	if err != nil || len(ids) == 0 {
		return -1
	}
	return ids[0]
}

// KLDResult is the --json output of --kl-divergence.
type KLDResult struct {
	Model       string  `json:"model"`
	Base        string  `json:"base"`
	Ctx         int     `json:"ctx"`
	Chunks      int     `json:"chunks"`
	Scored      int     `json:"scored"`
	PPL         float64 `json:"ppl"`
	PPLBase     float64 `json:"ppl_base"`
	MeanKLD     float64 `json:"mean_kld"`
	MeanKLDErr  float64 `json:"mean_kld_err"`
	MaxKLD      float64 `json:"max_kld"`
	RMSDeltaP   float64 `json:"rms_delta_p_percent"`
	SameTopP    float64 `json:"same_top_p_percent"`
	SameTopPErr float64 `json:"same_top_p_err_percent"`
}

// kldRun is perplexity --kl-divergence.
func kldRun(opts *PerplexityOptions) error {
	if err := fsutil.CheckRegular(opts.KLBase); err != nil {
		return fmt.Errorf("--kl-divergence-base: %w", err)
	}
	bf, err := os.Open(opts.KLBase)
	if err != nil {
		return fmt.Errorf("--kl-divergence-base: %w", err)
	}
	defer bf.Close()
	fi, err := bf.Stat()
	if err != nil {
		return fmt.Errorf("--kl-divergence-base: %w", err)
	}
	base, err := runtime.ReadKLBaseHeader(bf, fi.Size())
	if err != nil {
		return fmt.Errorf("--kl-divergence-base %s: %w (write one with perplexity -f TEXT --kl-divergence-base FILE)", opts.KLBase, err)
	}
	if opts.CtxSet && opts.Ctx != base.NCtx {
		return usage.Errorf("-c %d: the base %s was computed with -c %d; leave -c out or make the base with -c %d", opts.Ctx, opts.KLBase, base.NCtx, opts.Ctx)
	}
	if opts.Chunks > 0 && opts.Chunks < base.NChunk {
		// Only the first chunks: the rows of the rest are never read.
		base.NChunk = opts.Chunks
		base.Tokens = base.Tokens[:base.NChunk*base.NCtx]
	}
	m, f, _, err := openModel(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	if base.NVocab != m.Params.NVocab {
		return fmt.Errorf("--kl-divergence-base %s: base logits over a vocabulary of %d tokens, model %s has %d; make the base with a model of the same vocabulary", opts.KLBase, base.NVocab, opts.Model, m.Params.NVocab)
	}
	if base.NCtx > m.Params.NCtx {
		return usage.Errorf("--kl-divergence-base %s: chunks of %d tokens exceed the context length %d of %s", opts.KLBase, base.NCtx, m.Params.NCtx, opts.Model)
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return fmt.Errorf("model %s: tokenizer metadata: %w", opts.Model, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return fmt.Errorf("model %s: %w", opts.Model, err)
	}
	w := opts.Out
	printed := false
	st, err := runtime.KLDivergenceBatched(m, base, bf, chunkBOS(tok), opts.batching(), func(c runtime.KLDChunk) {
		if opts.JSON {
			return
		}
		if !printed {
			fmt.Fprintf(w, "\nchunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n")
			printed = true
		}
		printChunk(w, c.Chunk, c.Stats)
	})
	if err != nil {
		return fmt.Errorf("--kl-divergence-base %s: %w", opts.KLBase, err)
	}
	logPPL, _ := runtime.MeanErr(st.SumNLL, st.SumNLL2, st.Count)
	logBase, _ := runtime.MeanErr(st.SumNLLBase, st.SumNLLBase2, st.Count)
	kl, klErr := runtime.MeanErr(st.SumKLD, st.SumKLD2, st.Count)
	if ppl := math.Exp(logPPL); math.IsNaN(ppl) || math.IsInf(ppl, 0) || math.IsNaN(kl) || math.IsInf(kl, 0) {
		// as a plain run fails on such a perplexity (defect D15)
		if printed {
			fmt.Fprintln(w)
		}
		return fmt.Errorf("model %s: the perplexity is %v and the mean KL divergence %v (the logits are not finite); the model's weights or metadata are broken", opts.Model, ppl, kl)
	}
	mse, _ := runtime.MeanErr(st.SumPDiff2, st.SumPDiff4, st.Count)
	top := float64(st.SameTop) / float64(st.Count)
	topErr := 0.0
	if st.Count > 1 {
		topErr = math.Sqrt(top * (1 - top) / float64(st.Count-1))
	}
	if opts.JSON {
		res := KLDResult{Model: opts.Model, Base: opts.KLBase, Ctx: base.NCtx, Chunks: base.NChunk, Scored: st.Count,
			PPL: math.Exp(logPPL), PPLBase: math.Exp(logBase), MeanKLD: kl, MeanKLDErr: klErr, MaxKLD: float64(runtime.Sorted(st.KLD)[st.Count-1]),
			RMSDeltaP: 100 * math.Sqrt(mse), SameTopP: 100 * top, SameTopPErr: 100 * topErr}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	fmt.Fprintln(w)
	if st.Count < 100 {
		// llama-perplexity prints no statistics on so few values; the
		// chunk lines above carry the means.
		fmt.Fprintf(w, "%d scored tokens: too few for the statistics (llama-perplexity prints them from 100)\n", st.Count)
		return nil
	}
	printStats(w, st)
	return nil
}

// printChunk is llama-perplexity's per-chunk --kl-divergence line.
func printChunk(w io.Writer, chunk int, st *runtime.KLDStats) {
	logPPL, logPPLErr := runtime.MeanErr(st.SumNLL, st.SumNLL2, st.Count)
	ppl := math.Exp(logPPL)
	fmt.Fprintf(w, "%4d", chunk)
	fmt.Fprintf(w, "    %9.4f ± %9.4f", ppl, ppl*logPPLErr)
	logBase, logBaseErr := runtime.MeanErr(st.SumNLLBase, st.SumNLLBase2, st.Count)
	cov := runtime.Covariance(st.SumNLL, st.SumNLLBase, st.SumNLLNLLBase, st.Count)
	fmt.Fprintf(w, "    %10.5f ± %10.5f", logPPL-logBase, math.Sqrt(logPPLErr*logPPLErr+logBaseErr*logBaseErr-2*cov))
	kl, klErr := runtime.MeanErr(st.SumKLD, st.SumKLD2, st.Count)
	fmt.Fprintf(w, "    %10.5f ± %10.5f", kl, klErr)
	mse, mseErr := runtime.MeanErr(st.SumPDiff2, st.SumPDiff4, st.Count)
	rms := math.Sqrt(mse)
	fmt.Fprintf(w, "    %6.3f ± %6.3f %%", 100*rms, 100*0.5/rms*mseErr)
	top := float64(st.SameTop) / float64(st.Count)
	fmt.Fprintf(w, "    %6.3f ± %6.3f %%\n", 100*top, 100*math.Sqrt(top*(1-top)/float64(st.Count-1)))
}

// printStats is llama-perplexity's closing statistics of --kl-divergence.
func printStats(w io.Writer, st *runtime.KLDStats) {
	kld, pd := runtime.Sorted(st.KLD), runtime.Sorted(st.PDiff)
	fmt.Fprintln(w, "====== Perplexity statistics ======")
	logPPL, logPPLErr := runtime.MeanErr(st.SumNLL, st.SumNLL2, st.Count)
	ppl := math.Exp(logPPL)
	pplErr := ppl * logPPLErr
	fmt.Fprintf(w, "Mean PPL(Q)                   : %10.6f ± %10.6f\n", ppl, pplErr)
	logBase, logBaseErr := runtime.MeanErr(st.SumNLLBase, st.SumNLLBase2, st.Count)
	pplBase := math.Exp(logBase)
	pplBaseErr := pplBase * logBaseErr
	fmt.Fprintf(w, "Mean PPL(base)                : %10.6f ± %10.6f\n", pplBase, pplBaseErr)
	cov := runtime.Covariance(st.SumNLL, st.SumNLLBase, st.SumNLLNLLBase, st.Count)
	fmt.Fprintf(w, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100*cov/(logPPLErr*logBaseErr))
	ratio := logPPL - logBase
	ratioErr := math.Sqrt(logPPLErr*logPPLErr + logBaseErr*logBaseErr - 2*cov)
	fmt.Fprintf(w, "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", ratio, ratioErr)
	fmt.Fprintf(w, "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", math.Exp(ratio), math.Exp(ratio)*ratioErr)
	fmt.Fprintf(w, "Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n", ppl-pplBase, math.Sqrt(pplErr*pplErr+pplBaseErr*pplBaseErr-2*ppl*pplBase*cov))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "====== KL divergence statistics ======")
	kl, klErr := runtime.MeanErr(st.SumKLD, st.SumKLD2, st.Count)
	fmt.Fprintf(w, "Mean    KLD: %10.6f ± %10.6f\n", kl, klErr)
	fmt.Fprintf(w, "Maximum KLD: %10.6f\n", kld[len(kld)-1])
	for _, p := range []struct {
		label string
		f     float32
	}{{"99.9%  ", 0.999}, {"99.0%  ", 0.99}, {"95.0%  ", 0.95}, {"90.0%  ", 0.9}} {
		fmt.Fprintf(w, "%s KLD: %10.6f\n", p.label, runtime.Percentile(kld, p.f))
	}
	fmt.Fprintf(w, "Median  KLD: %10.6f\n", runtime.Median(kld))
	for _, p := range []struct {
		label string
		f     float32
	}{{"10.0%  ", 0.1}, {" 5.0%  ", 0.05}, {" 1.0%  ", 0.01}, {" 0.1%  ", 0.001}} {
		fmt.Fprintf(w, "%s KLD: %10.6f\n", p.label, runtime.Percentile(kld, p.f))
	}
	fmt.Fprintf(w, "Minimum KLD: %10.6f\n", kld[0])
	fmt.Fprintln(w)
	fmt.Fprintln(w, "====== Token probability statistics ======")
	pm, pe := runtime.MeanErr(st.SumPDiff, st.SumPDiff2, st.Count)
	fmt.Fprintf(w, "Mean    Δp: %6.3f ± %5.3f %%\n", 100*pm, 100*pe)
	fmt.Fprintf(w, "Maximum Δp: %6.3f%%\n", 100*pd[len(pd)-1])
	for _, p := range []struct {
		label string
		f     float32
	}{{"99.9%  ", 0.999}, {"99.0%  ", 0.99}, {"95.0%  ", 0.95}, {"90.0%  ", 0.9}, {"75.0%  ", 0.75}} {
		fmt.Fprintf(w, "%s Δp: %6.3f%%\n", p.label, 100*runtime.Percentile(pd, p.f))
	}
	fmt.Fprintf(w, "Median  Δp: %6.3f%%\n", 100*runtime.Median(pd))
	for _, p := range []struct {
		label string
		f     float32
	}{{"25.0%  ", 0.25}, {"10.0%  ", 0.1}, {" 5.0%  ", 0.05}, {" 1.0%  ", 0.01}, {" 0.1%  ", 0.001}} {
		fmt.Fprintf(w, "%s Δp: %6.3f%%\n", p.label, 100*runtime.Percentile(pd, p.f))
	}
	fmt.Fprintf(w, "Minimum Δp: %6.3f%%\n", 100*pd[0])
	mse, mseErr := runtime.MeanErr(st.SumPDiff2, st.SumPDiff4, st.Count)
	rms := math.Sqrt(mse)
	fmt.Fprintf(w, "RMS Δp    : %6.3f ± %5.3f %%\n", 100*rms, 100*0.5/rms*mseErr)
	top := float64(st.SameTop) / float64(st.Count)
	fmt.Fprintf(w, "Same top p: %6.3f ± %5.3f %%\n", 100*top, 100*math.Sqrt(top*(1-top)/float64(st.Count-1)))
}
