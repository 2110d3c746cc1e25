package run

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/idlist"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// RunOptions are the parsed flags of run.
type RunOptions struct {
	Model      string  // -m: GGUF file
	Prompt     string  // -p: text, tokenized with BOS (add_bos of the vocabulary)
	IDs        []int32 // --ids: prompt token ids, used as given
	HasPrompt  bool    // -p was given (an empty prompt is allowed)
	N          int     // -n: tokens to generate
	Temp       float64 // --temp: 0 = greedy (ties to the lowest id)
	Seed       uint64  // --seed for sampling
	Threads    int     // --threads
	DumpLogits string  // --dump-logits FILE: raw little-endian float32 rows

	KernelConfig string // --kernel-config: kernel_config.ini of a TL1/TL2 file
	Out          io.Writer
	Err          io.Writer // notices (nil: discarded)
}

// NewCmdRun returns the run command. It only parses flags; runF replaces
// runRun in tests (nil: runRun).
func NewCmdRun(runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{}
	var ids string
	cmd := &cobra.Command{
		Use:   "run -m FILE (-p TEXT | --ids 1,2,3) [-n N]",
		Short: "Generate tokens from a GGUF model with the pure-Go runtime (one token per call)",
		Long: `Feed the prompt one token per call through the pure-Go runtime, then generate -n tokens,
greedily by default (ties go to the lowest id) or sampled with --temp/--seed. Prints the generated ids
and text. --dump-logits writes every prompt row of logits and then every generated row (generated row 0
is the last prompt row) as raw little-endian float32, the layout of the golden
PREFIX.prompt_logits.f32 followed by PREFIX.gen_logits.f32; it must not be the model file or an
existing non-regular file. The prompt length plus -n must not exceed the model's context_length
(checked after loading the model; a usage error, exit 2). All-NaN logits are an error (exit 1).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usage.Errorf("run takes no arguments (got %q); use -p TEXT or --ids", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			opts.Err = cmd.ErrOrStderr()
			var err error
			if opts.IDs, opts.HasPrompt, err = idlist.PromptOrIDs(cmd.Flags(), opts.Model, ids); err != nil {
				return err
			}
			if opts.N < 0 {
				return usage.Errorf("-n %d: must be ≥ 0", opts.N)
			}
			if opts.Temp < 0 || math.IsNaN(opts.Temp) || math.IsInf(opts.Temp, 0) {
				return usage.Errorf("--temp %v: must be a finite number ≥ 0", opts.Temp)
			}
			if opts.Threads < 0 {
				return usage.Errorf("--threads %d: must be ≥ 0", opts.Threads)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF model file (required)")
	f.StringVarP(&opts.Prompt, "prompt", "p", "", "prompt text (tokenized with the GGUF vocabulary, BOS as add_bos_token says)")
	f.StringVar(&ids, "ids", "", "prompt token ids, comma-separated (e.g. 1,100,200)")
	f.IntVarP(&opts.N, "n-predict", "n", 16, "number of tokens to generate")
	f.Float64Var(&opts.Temp, "temp", 0, "sampling temperature; 0 = greedy, ties to the lowest id")
	f.Uint64Var(&opts.Seed, "seed", 0, "random seed for --temp > 0")
	f.IntVar(&opts.Threads, "threads", 1, "goroutines per matrix product (results do not depend on it)")
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini the TL1/TL2 file was converted with (TL files only)")
	f.StringVar(&opts.DumpLogits, "dump-logits", "", "write every prompt row then every generated row of logits to FILE (raw little-endian float32)")
	return cmd
}

// runRun loads the model, runs the prompt one token per call and generates
// opts.N tokens.
func runRun(opts *RunOptions) error {
	if err := fsutil.CheckRegular(opts.Model); err != nil {
		return fmt.Errorf("-m/--model: %w", err)
	}
	if opts.KernelConfig != "" {
		if err := fsutil.CheckRegular(opts.KernelConfig); err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
	}
	if opts.DumpLogits != "" {
		if err := checkDumpPath(opts.DumpLogits, opts.Model); err != nil {
			return err
		}
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
	var tok tokenizer.Tokenizer
	v, tokErr := tokenizer.FromGGUF(f.KVs)
	if tokErr == nil {
		tok, tokErr = tokenizer.New(v)
	}
	prompt := opts.IDs
	if opts.HasPrompt {
		if tok == nil {
			return fmt.Errorf("model %s: no usable tokenizer in the GGUF metadata (%v); fix the metadata or use --ids", opts.Model, tokErr)
		}
		if prompt, err = tok.Encode(opts.Prompt, true, false); err != nil {
			return fmt.Errorf("tokenize the prompt: %w", err)
		}
	}
	if len(prompt) == 0 {
		return fmt.Errorf("the prompt has no tokens (the vocabulary adds no BOS); give a non-empty -p or --ids")
	}
	for _, id := range prompt {
		if int(id) >= m.Params.NVocab {
			return usage.Errorf("prompt token id %d is outside the vocabulary of %s (%d tokens)", id, opts.Model, m.Params.NVocab)
		}
	}
	if len(prompt)+opts.N > m.Params.NCtx {
		return usage.Errorf("-n %d: the prompt (%d tokens) plus -n exceeds the context length %d of %s; lower -n or shorten the prompt", opts.N, len(prompt), m.Params.NCtx, opts.Model)
	}
	gen, rows, err := Generate(m, prompt, opts.N, opts.Temp, opts.Seed)
	if err != nil {
		return fmt.Errorf("model %s: %w", opts.Model, err)
	}
	if opts.DumpLogits != "" {
		var buf bytes.Buffer
		var b [4]byte
		for _, row := range rows {
			for _, v := range row {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				buf.Write(b[:])
			}
		}
		if err := atomicfile.WriteFile(opts.DumpLogits, buf.Bytes(), true); err != nil {
			return fmt.Errorf("--dump-logits %s: %w", opts.DumpLogits, err)
		}
	}
	if opts.KernelConfig != "" && opts.Err != nil {
		if n := runtime.KernelConfigNotice(f.KVs, f.Tensors, rtOpts.TLKernels); n != "" {
			fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", n)
		}
	}
	fmt.Fprintf(opts.Out, "prompt ids: %s\n", joinIDs(prompt))
	fmt.Fprintf(opts.Out, "generated ids: %s\n", joinIDs(gen))
	if tok != nil {
		if text, err := tok.Decode(gen); err == nil {
			fmt.Fprintf(opts.Out, "generated text: %s\n", text)
		}
	}
	return nil
}

// Generate feeds prompt one token per call and then produces n tokens
// (greedy for temp 0). It returns the generated ids and every row of logits
// in the golden layout: one row per prompt position, then n generated rows,
// generated row 0 being the last prompt row (the logits that chose the first
// new token) and row i the logits after feeding generated token i−1.
func Generate(m *runtime.Model, prompt []int32, n int, temp float64, seed uint64) ([]int32, [][]float32, error) {
	s := m.NewSession(len(prompt) + n)
	rng := rand.New(rand.NewPCG(seed, 0x6269746e6574))
	var rows [][]float32
	var last []float32
	for i, id := range prompt {
		l, err := s.Eval(id)
		if err != nil {
			return nil, nil, fmt.Errorf("prompt position %d: %w", i, err)
		}
		last = append([]float32(nil), l...)
		rows = append(rows, last)
	}
	var gen []int32
	for i := 0; i < n; i++ {
		rows = append(rows, last)
		next := runtime.Sample(last, temp, rng.Float64())
		if next < 0 {
			return nil, nil, fmt.Errorf("generation step %d: the logits are not finite (all NaN); the model's weights are broken, reconvert it", i)
		}
		gen = append(gen, next)
		if i == n-1 {
			break
		}
		l, err := s.Eval(next)
		if err != nil {
			return nil, nil, fmt.Errorf("generation step %d: %w", i+1, err)
		}
		last = append([]float32(nil), l...)
	}
	return gen, rows, nil
}

// checkDumpPath refuses a --dump-logits path that would destroy an input:
// the model file itself (os.SameFile, so links count) or an existing file
// that is not a regular file (a FIFO would block, /dev/null would be
// replaced by the rename of the temp file).
func checkDumpPath(dump, model string) error {
	di, err := os.Stat(dump)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--dump-logits %s: %w", dump, err)
	}
	if !di.Mode().IsRegular() {
		return fmt.Errorf("--dump-logits %s exists and is not a regular file; give a new file path", dump)
	}
	if mi, err := os.Stat(model); err == nil && os.SameFile(di, mi) {
		return fmt.Errorf("--dump-logits %s is the model file -m %s; give another path", dump, model)
	}
	return nil
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, " ")
}
