package perplexity

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/internal/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// PerplexityOptions are the parsed flags of perplexity.
type PerplexityOptions struct {
	Model        string // -m: GGUF file
	File         string // -f: UTF-8 text file
	Ctx          int    // -c: tokens per chunk
	Chunks       int    // --chunks: at most this many chunks (≤ 0: all)
	Threads      int    // --threads
	KernelConfig string // --kernel-config: kernel_config.ini of a TL1/TL2 file
	Out          io.Writer
	Err          io.Writer // notices (nil: discarded)
}

// NewCmdPerplexity returns the perplexity command. It only parses flags;
// runF replaces perplexityRun in tests (nil: perplexityRun).
func NewCmdPerplexity(runF func(*PerplexityOptions) error) *cobra.Command {
	opts := &PerplexityOptions{}
	cmd := &cobra.Command{
		Use:   "perplexity -m FILE -f TEXT [-c 128] [--chunks 4]",
		Short: "Perplexity of a text file under a GGUF model (pure-Go runtime, one token per call)",
		Long: `Tokenize TEXT with BOS, cut it into chunks of -c tokens, replace each chunk's first token by BOS,
run each chunk on an empty KV cache one token per call, and score positions c/2 … c−2 with the
log-probability of the next token, as llama-perplexity does. Prints PPL = exp(mean NLL).
-c must not exceed the model's context_length (checked after loading the model; a usage error,
exit 2).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usage.Errorf("perplexity takes no arguments (got %q); use -m FILE -f TEXT", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			opts.Err = cmd.ErrOrStderr()
			if opts.Model == "" {
				return usage.Errorf("-m/--model FILE is required")
			}
			if opts.File == "" {
				return usage.Errorf("-f/--file TEXT is required")
			}
			if opts.Ctx < 4 {
				return usage.Errorf("-c %d: the chunk size must be ≥ 4", opts.Ctx)
			}
			if opts.Threads < 0 {
				return usage.Errorf("--threads %d: must be ≥ 0", opts.Threads)
			}
			if opts.Chunks < 0 {
				return usage.Errorf("--chunks %d: must be ≥ 0 (0: all whole chunks)", opts.Chunks)
			}
			if runF != nil {
				return runF(opts)
			}
			return perplexityRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF model file (required)")
	f.StringVarP(&opts.File, "file", "f", "", "text file to score (required)")
	f.IntVarP(&opts.Ctx, "ctx-size", "c", 128, "tokens per chunk")
	f.IntVar(&opts.Chunks, "chunks", 0, "score at most this many chunks (0: all whole chunks)")
	f.IntVar(&opts.Threads, "threads", 1, "goroutines per matrix product (results do not depend on it)")
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini the TL1/TL2 file was converted with (TL files only)")
	return cmd
}

// perplexityRun loads the model and the text and prints the perplexity.
func perplexityRun(opts *PerplexityOptions) error {
	if err := fsutil.CheckRegular(opts.Model); err != nil {
		return fmt.Errorf("-m/--model: %w", err)
	}
	if opts.KernelConfig != "" {
		if err := fsutil.CheckRegular(opts.KernelConfig); err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
	}
	text, err := fsutil.ReadFile(opts.File)
	if err != nil {
		return fmt.Errorf("-f/--file: read text: %w", err)
	}
	rtOpts := runtime.Options{Threads: opts.Threads}
	if opts.KernelConfig != "" {
		ks, err := runtime.ReadKernelConfig(opts.KernelConfig)
		if err != nil {
			return err
		}
		rtOpts.TLKernels = ks
	}
	m, f, err := runtime.Open(opts.Model, rtOpts)
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
	// llama-perplexity replaces each chunk's first token by BOS when the
	// vocabulary adds BOS (llama's default for SPM vocabularies when the
	// GGUF does not say).
	addBOS := v.Model == "llama"
	if v.AddBOS != nil {
		addBOS = *v.AddBOS
	}
	bos := int32(-1)
	if addBOS && v.BOS >= 0 {
		bos = v.BOS
	}
	res, err := runtime.Perplexity(m, ids, opts.Ctx, opts.Chunks, bos)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	if opts.KernelConfig != "" && opts.Err != nil {
		if n := runtime.KernelConfigNotice(f.KVs, f.Tensors, rtOpts.TLKernels); n != "" {
			fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", n)
		}
	}
	fmt.Fprintf(opts.Out, "tokens %d, %d chunks of %d tokens, scored %d\n", len(ids), res.Chunks, opts.Ctx, res.Tokens)
	fmt.Fprintf(opts.Out, "PPL = %.4f\n", res.PPL)
	if math.IsNaN(res.PPL) || math.IsInf(res.PPL, 0) {
		// A number that is no perplexity is a failure, as run's all-NaN
		// logits are (defect D15).
		return fmt.Errorf("model %s: the perplexity is %v (the logits are not finite); the model's weights or metadata are broken", opts.Model, res.PPL)
	}
	return nil
}
