package perplexity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/progress"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// PerplexityOptions are the parsed flags of perplexity.
type PerplexityOptions struct {
	Model        string // -m: GGUF file
	File         string // -f: UTF-8 text file, "-" for stdin, or a pipe
	Ctx          int    // -c: tokens per chunk (llama-perplexity's default 512)
	Chunks       int    // --chunks: at most this many chunks (0: all)
	Batch        int    // -b: logical batch (2048), runtime.PerplexityBatching.Batch
	UBatch       int    // -ub: physical batch (512), runtime.PerplexityBatching.UBatch
	Threads      int    // --threads
	KernelConfig string // --kernel-config: kernel_config.ini of a TL1/TL2 file
	FromLayout   string // --from-layout: I2_S layout of a file that records none
	Arith        string // --arith: bitnet.cpp, mainline, ik ("" = the file's home runtime)
	NoMmap       bool   // --no-mmap: read the model into memory instead of mapping it
	JSON         bool   // --json: one JSON object instead of the llama-perplexity lines
	// KLBase is --kl-divergence-base FILE: written by a plain run (the
	// base model's log-probabilities), read with --kl-divergence.
	KLBase string
	// KLD is --kl-divergence: compare with KLBase instead of scoring -f.
	KLD bool
	// Force (--force) overwrites an existing KLBase when writing it.
	Force bool
	// CtxSet records that -c was given (a --kl-divergence run takes the
	// base's chunk size, and refuses another).
	CtxSet bool
	Out    io.Writer
	// Err receives notices, and the progress (a bar and the time per
	// chunk) when ErrIsTerminal is set; nil discards them.
	Err           io.Writer
	ErrIsTerminal bool
	// Stdin is read for -f -.
	Stdin io.Reader
}

// NewCmdPerplexity returns the perplexity command. It only parses flags;
// runF replaces perplexityRun in tests (nil: perplexityRun).
func NewCmdPerplexity(runF func(*PerplexityOptions) error) *cobra.Command {
	opts := &PerplexityOptions{}
	cmd := &cobra.Command{
		Use:   "perplexity -m FILE (-f TEXT [--kl-divergence-base OUT] | --kl-divergence --kl-divergence-base FILE) [-c 512] [-b 2048] [-ub 512] [--chunks N] [--json] [--no-mmap]",
		Short: "Perplexity of a text file under a GGUF model (pure-Go runtime)",
		Long: `Tokenize TEXT with BOS, cut it into chunks of -c tokens (default 512), replace each chunk's first token by BOS,
run each chunk on an empty KV cache, and score positions c/2 … c−2 with the log-probability of the next
token, as llama-perplexity does. -b (default 2048) and -ub (default 512) are llama-perplexity's batch
sizes with its meaning: -b/-c chunks are evaluated together, each physical batch of -ub tokens with the
arithmetic bitnet.cpp's AVX2 build gives it, so the figures equal llama-perplexity's for the same -c, -b
and -ub (tested digit for digit on I2_S and F32 files); -b 1 -ub 1 gives the logits of one token per
call. -b ≥ -c must be a multiple of -c. Files computed with mainline or ik_llama.cpp arithmetic
(--arith) always take the one-token arithmetic. Prints the running perplexity after
each chunk ("[1]x,[2]y,…") and then "Final estimate: PPL = X +/- E", E being llama-perplexity's
uncertainty PPL·√(var(NLL)/(N−1)). TEXT may be "-" (stdin) or a pipe such as <(zcat wiki.gz); at
most 512 MiB of text is read. On a terminal stderr shows a progress bar. -c must not exceed the
model's context_length (checked after loading the model; a usage error, exit 2).

--kl-divergence-base OUT also saves the base model's log-probabilities of every scored token in
llama-perplexity's format (OUT is written whole or not at all, at most 8 GiB: the size is checked
before the run; --force overwrites). --kl-divergence --kl-divergence-base FILE then runs another
model over the tokens stored in FILE (no -f) and prints, as llama-perplexity does, per chunk the
PPL, ln(PPL(Q)/PPL(base)), the mean KL divergence, the RMS of Δp and the share of positions with
the same top token, and at the end the statistics (Mean KLD, percentiles, Same top p). A base of
another vocabulary or chunk size (-c) is refused.`,
		Args: func(cmd *cobra.Command, args []string) error {
			return modelfile.PositionalModel("perplexity", args, "use -m FILE -f TEXT")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			opts.Err = cmd.ErrOrStderr()
			opts.Stdin = cmd.InOrStdin()
			opts.ErrIsTerminal = progress.IsTerminal(opts.Err)
			if opts.Model == "" {
				return usage.Errorf("-m/--model FILE is required")
			}
			opts.CtxSet = cmd.Flags().Changed("ctx-size")
			switch {
			case opts.KLD && opts.KLBase == "":
				return usage.Errorf("--kl-divergence needs --kl-divergence-base FILE (written by a run of the base model)")
			case opts.KLD && opts.File != "":
				return usage.Errorf("-f is not read with --kl-divergence: the tokens come from the --kl-divergence-base file")
			case !opts.KLD && opts.File == "":
				return usage.Errorf("-f/--file TEXT is required")
			case opts.Force && (opts.KLD || opts.KLBase == ""):
				return usage.Errorf("--force only applies to writing --kl-divergence-base FILE")
			}
			if opts.Ctx < 4 {
				return usage.Errorf("-c %d: the chunk size must be ≥ 4", opts.Ctx)
			}
			// --kl-divergence takes the base's chunk size and at most one
			// chunk per batch: there only -b, -ub ≥ 1 is checked.
			bctx := opts.Ctx
			if opts.KLD {
				bctx = math.MaxInt
			}
			if err := (runtime.PerplexityBatching{Batch: opts.Batch, UBatch: opts.UBatch}).Check(bctx); err != nil {
				return usage.Errorf("%v", err)
			}
			if opts.Chunks < 0 {
				return usage.Errorf("--chunks %d: must be ≥ 0 (0 scores every whole chunk)", opts.Chunks)
			}
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if opts.FromLayout != "" {
				if _, err := format.ParseLayout(opts.FromLayout); err != nil {
					return usage.Errorf("--from-layout: %v", err)
				}
			}
			if opts.Chunks < 0 {
				return usage.Errorf("--chunks %d: must be ≥ 0 (0: all whole chunks)", opts.Chunks)
			}
			if err := flagx.CheckArith(opts.Arith); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return perplexityRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF model file (required)")
	f.StringVarP(&opts.File, "file", "f", "", `text file to score, "-" for stdin (required)`)
	f.IntVarP(&opts.Ctx, "ctx-size", "c", 512, "tokens per chunk")
	f.IntVarP(&opts.Batch, "batch-size", "b", 2048, "logical batch: -b/-c chunks evaluated together (llama-perplexity's -b)")
	f.IntVar(&opts.UBatch, "ubatch-size", 512, "physical batch, also spelled -ub (llama-perplexity's -ub)")
	f.IntVar(&opts.Chunks, "chunks", 0, "score at most this many chunks (0: every whole chunk)")
	flagx.ThreadsVar(f, &opts.Threads)
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini the TL1/TL2 file was converted with (TL files only)")
	f.StringVar(&opts.FromLayout, "from-layout", "", flagx.FromLayoutUsage)
	f.StringVar(&opts.Arith, "arith", "", flagx.ArithUsage)
	f.BoolVar(&opts.NoMmap, "no-mmap", false, flagx.NoMmapUsage)
	f.StringVar(&opts.KLBase, "kl-divergence-base", "", "save the base log-probabilities to FILE (with --kl-divergence: read them)")
	f.BoolVar(&opts.KLD, "kl-divergence", false, "compare with the --kl-divergence-base FILE: mean KLD, same-top-p %")
	f.BoolVar(&opts.Force, "force", false, "overwrite an existing --kl-divergence-base file")
	f.BoolVar(&opts.JSON, "json", false, "print one JSON object (ppl, ppl_err, nll; chunk_ppl: the running perplexity after each chunk, the values of the [1]x,[2]y line) instead of the llama-perplexity lines")
	return cmd
}

// batching is -b and -ub; a zero (options built without the flags, as
// tests do) counts as 1, the one-token arithmetic.
func (opts *PerplexityOptions) batching() runtime.PerplexityBatching {
	return runtime.PerplexityBatching{Batch: max(opts.Batch, 1), UBatch: max(opts.UBatch, 1)}
}

// Result is the --json output of perplexity.
type Result struct {
	Model    string    `json:"model"`
	File     string    `json:"file"`
	Ctx      int       `json:"ctx"`
	Batch    int       `json:"batch"`  // -b
	UBatch   int       `json:"ubatch"` // -ub
	Tokens   int       `json:"tokens"`
	Chunks   int       `json:"chunks"`
	Scored   int       `json:"scored"`
	PPL      float64   `json:"ppl"`
	PPLErr   float64   `json:"ppl_err"`
	NLL      float64   `json:"nll"`
	ChunkPPL []float64 `json:"chunk_ppl"` // running perplexity after chunk 1, 2, … (llama-perplexity's [1]x,[2]y values), not each chunk's own
	Seconds  float64   `json:"seconds"`
}

// openModel opens opts.Model for the runtime with the flags both modes
// share (--threads, --from-layout, --kernel-config) and returns the options
// it used, so that the caller can word the kernel-config notice. One helper
// for perplexity and --kl-divergence keeps the two from drifting apart (the
// KL mode once dropped --from-layout).
func openModel(opts *PerplexityOptions) (*runtime.Model, *reader.File, runtime.Options, error) {
	return modelfile.Open(modelOptions(opts), runtime.Open)
}

// modelOptions are the model flags of opts for modelfile.
func modelOptions(opts *PerplexityOptions) modelfile.Options {
	return modelfile.Options{Cmd: "perplexity", Model: opts.Model, KernelConfig: opts.KernelConfig, FromLayout: opts.FromLayout, Threads: opts.Threads, Arith: opts.Arith, NoMmap: opts.NoMmap}
}

// perplexityRun loads the model and the text and prints the perplexity.
func perplexityRun(opts *PerplexityOptions) error {
	if _, err := modelfile.Prepare(modelOptions(opts)); err != nil {
		return err
	}
	if opts.KLD {
		return kldRun(opts)
	}
	if opts.KLBase != "" {
		if err := checkBasePath(opts.KLBase, opts.Model, opts.Force); err != nil {
			return err
		}
		// --force replaces an old base, never a file this run reads (H2).
		if fsutil.SameFile(opts.KLBase, opts.File) {
			return fmt.Errorf("--kl-divergence-base %s is the -f/--file text %s; give another path", opts.KLBase, opts.File)
		}
		if fsutil.SameFile(opts.KLBase, opts.KernelConfig) {
			return fmt.Errorf("--kl-divergence-base %s is the --kernel-config file; give another path", opts.KLBase)
		}
	}
	text, err := fsutil.ReadText(opts.File, opts.Stdin, fsutil.MaxTextBytes)
	if err != nil {
		return fmt.Errorf("-f/--file: read text: %w", err)
	}
	m, f, rtOpts, err := openModel(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	if opts.Ctx > m.Params.NCtx {
		return usage.Errorf("-c %d: exceeds the context length %d of %s; lower -c", opts.Ctx, m.Params.NCtx, opts.Model)
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return fmt.Errorf("model %s: tokenizer metadata: %w", opts.Model, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return fmt.Errorf("model %s: %w", opts.Model, err)
	}
	ids, err := tok.Encode(string(text), true, false)
	if err != nil {
		return fmt.Errorf("tokenize %s: %w", opts.File, err)
	}
	text = nil
	// llama-perplexity replaces each chunk's first token by BOS.
	bos := chunkBOS(tok)
	res := Result{Model: opts.Model, File: opts.File, Ctx: opts.Ctx, Batch: opts.Batch, UBatch: opts.UBatch, Tokens: len(ids), ChunkPPL: []float64{}}
	var bar *progressbar.ProgressBar
	start := time.Now()
	progress := func(p runtime.ChunkProgress) {
		res.ChunkPPL = append(res.ChunkPPL, p.PPL)
		if !opts.JSON {
			// llama-perplexity's running line, written chunk by chunk
			// (os.File writes are unbuffered).
			fmt.Fprintf(opts.Out, "[%d]%.4f,", p.Chunk, p.PPL)
		}
		if !opts.ErrIsTerminal {
			return
		}
		if bar == nil {
			per := time.Since(start).Seconds()
			fmt.Fprintf(opts.Err, "perplexity: %.2f seconds per pass - ETA %.2f minutes\n", per, per*float64(p.Chunks)/60)
			bar = progressbar.NewOptions(p.Chunks, progressbar.OptionSetWriter(opts.Err), progressbar.OptionSetDescription("chunks"),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		}
		_ = bar.Add(1)
	}
	if len(ids) < opts.Ctx {
		// llama-perplexity refuses such a text too ("tokenizes to only N
		// tokens"); name the flag that sets the chunk size.
		return fmt.Errorf("%s: the text tokenizes to only %d tokens, fewer than one chunk of -c %d: use a longer text or a smaller -c", opts.File, len(ids), opts.Ctx)
	}
	var r runtime.PerplexityResult
	if opts.KLBase != "" {
		r, err = writeBase(opts, m, ids, bos, progress)
	} else {
		r, err = runtime.PerplexityBatched(m, ids, opts.Ctx, opts.Chunks, bos, opts.batching(), progress)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		if len(res.ChunkPPL) > 0 && !opts.JSON {
			fmt.Fprintln(opts.Out)
		}
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	res.Chunks, res.Scored, res.PPL, res.PPLErr, res.NLL = r.Chunks, r.Tokens, r.PPL, r.PPLErr, r.NLL
	res.Seconds = time.Since(start).Seconds()
	if opts.KernelConfig != "" && opts.Err != nil {
		if n := runtime.KernelConfigNotice(f.KVs, f.Tensors, rtOpts.TLKernels); n != "" {
			fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", n)
		}
	}
	if math.IsNaN(r.PPL) || math.IsInf(r.PPL, 0) {
		// A number that is no perplexity is a failure, as run's all-NaN
		// logits are (defect D15).
		if !opts.JSON {
			fmt.Fprintln(opts.Out)
		}
		return fmt.Errorf("model %s: the perplexity is %v (the logits are not finite); the model's weights or metadata are broken", opts.Model, r.PPL)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	fmt.Fprintln(opts.Out)
	fmt.Fprintf(opts.Out, "tokens %d, %d chunks of %d tokens, scored %d\n", res.Tokens, res.Chunks, opts.Ctx, res.Scored)
	fmt.Fprintf(opts.Out, "Final estimate: PPL = %.4f +/- %.5f\n", res.PPL, res.PPLErr)
	return nil
}
