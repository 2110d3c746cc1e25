package run

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/idlist"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// RunOptions are the parsed flags of run.
type RunOptions struct {
	Model     string  // -m: GGUF file
	Prompt    string  // -p: text, tokenized with BOS (add_bos of the vocabulary)
	IDs       []int32 // --ids: prompt token ids, used as given
	HasPrompt bool    // -p was given (an empty prompt is allowed)
	N         int     // -n: tokens to generate
	Temp      float64 // --temp: 0 = greedy (ties to the lowest id)
	Seed      uint64  // -s/--seed for sampling
	// RandomSeed (no -s, or -s -1 as llama-cli spells it): with --temp > 0
	// the seed is drawn at run time and printed on stderr, so a run can be
	// repeated with -s.
	RandomSeed bool
	// Ctx is -c/--ctx-size: the context the prompt plus -n must fit in;
	// 0 is the model's context_length (a larger value is a usage error).
	Ctx int
	// TopK, TopP, RepeatPenalty and RepeatLastN are llama-cli's
	// --top-k, --top-p, --repeat-penalty and --repeat-last-n
	// (runtime.SamplerParams); the defaults turn them off.
	TopK          int
	TopP          float64
	RepeatPenalty float64
	RepeatLastN   int
	Threads       int    // --threads
	DumpLogits    string // --dump-logits FILE: raw little-endian float32 rows
	Force         bool   // --force: overwrite an existing --dump-logits file
	IgnoreEOS     bool   // --ignore-eos: do not stop at EOS/EOT

	KernelConfig string // --kernel-config: kernel_config.ini of a TL1/TL2 file
	FromLayout   string // --from-layout: I2_S layout of a file that records none
	Arith        string // --arith: bitnet.cpp, mainline, ik ("" = the file's home runtime)
	NoMmap       bool   // --no-mmap: read the model into memory instead of mapping it
	Out          io.Writer
	// Err receives notices and the timings (llama_perf_context_print
	// style); nil discards them.
	Err io.Writer
}

// NewCmdRun returns the run command. It only parses flags; runF replaces
// runRun in tests (nil: runRun).
func NewCmdRun(runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{}
	var ids string
	cmd := &cobra.Command{
		Use:   "run -m FILE (-p TEXT | --ids 1,2,3) [-n N] [--no-mmap]",
		Short: "Generate tokens from a GGUF model with the pure-Go runtime (one token per call)",
		Long: `Feed the prompt one token per call through the pure-Go runtime, then generate up to -n tokens,
greedily by default (ties go to the lowest id) or sampled with --temp/--seed. Generation stops at the
vocabulary's end-of-generation token (EOS or EOT) unless --ignore-eos. Prints the prompt ids, then the
generated text as each token is produced (the ids when the file has no vocabulary), then the
generated ids; stderr gets the load, prompt and generation times and speeds as llama-cli prints
them. --dump-logits writes every prompt row of logits and then every generated row (generated row 0
is the last prompt row) as raw little-endian float32, the layout of the golden
PREFIX.prompt_logits.f32 followed by PREFIX.gen_logits.f32; it must not be the model file or an
existing non-regular file, and an existing file needs --force. The prompt length plus -n must not exceed the model's context_length
(checked after loading the model; a usage error, exit 2). A NaN or infinite logit at any position is an error (exit 1).`,
		Args: func(cmd *cobra.Command, args []string) error {
			return modelfile.PositionalModel("run", args, "give the model with -m FILE and the prompt with -p TEXT or --ids")
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
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if opts.Ctx < 0 {
				return usage.Errorf("-c/--ctx-size %d: must be ≥ 0 (0 = the model's context length)", opts.Ctx)
			}
			if !(opts.TopP > 0 && opts.TopP <= 1) {
				return usage.Errorf("--top-p %v: must be in (0, 1] (1 = off)", opts.TopP)
			}
			if !(opts.RepeatPenalty > 0) || math.IsInf(opts.RepeatPenalty, 0) {
				return usage.Errorf("--repeat-penalty %v: must be a finite number > 0 (1 = off)", opts.RepeatPenalty)
			}
			if opts.RepeatLastN < -1 {
				return usage.Errorf("--repeat-last-n %d: must be ≥ -1 (0 = off, -1 = the whole context)", opts.RepeatLastN)
			}
			if opts.FromLayout != "" {
				if _, err := format.ParseLayout(opts.FromLayout); err != nil {
					return usage.Errorf("--from-layout: %v", err)
				}
			}
			if err := flagx.CheckArith(opts.Arith); err != nil {
				return err
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
	flagx.SeedVar(f, &opts.Seed, &opts.RandomSeed, "sampling seed for --temp > 0; -1 = a random seed, printed on stderr (as llama-cli)")
	f.IntVar(&opts.TopK, "top-k", 0, "sample from the K most likely tokens only; 0 = off (llama-cli's default is 40)")
	f.Float64Var(&opts.TopP, "top-p", 1, "sample from the most likely tokens whose probabilities sum to P; 1 = off (llama-cli's default is 0.95)")
	f.Float64Var(&opts.RepeatPenalty, "repeat-penalty", 1, "penalise the tokens of the last --repeat-last-n: divide a positive logit by it, multiply a negative one; 1 = off (also applies to greedy decoding)")
	f.IntVar(&opts.RepeatLastN, "repeat-last-n", 64, "tokens (prompt included) the repeat penalty looks back on; 0 = off, -1 = all")
	f.IntVarP(&opts.Ctx, "ctx-size", "c", 0, "context size the prompt plus -n must fit in; 0 = the model's context_length")
	flagx.ThreadsVar(f, &opts.Threads)
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini the TL1/TL2 file was converted with (TL files only)")
	f.StringVar(&opts.FromLayout, "from-layout", "", flagx.FromLayoutUsage)
	f.StringVar(&opts.Arith, "arith", "", flagx.ArithUsage)
	f.BoolVar(&opts.NoMmap, "no-mmap", false, flagx.NoMmapUsage)
	f.StringVar(&opts.DumpLogits, "dump-logits", "", "write every prompt row then every generated row of logits to FILE (raw little-endian float32)")
	f.BoolVar(&opts.Force, "force", false, "overwrite an existing --dump-logits file")
	f.BoolVar(&opts.IgnoreEOS, "ignore-eos", false, "keep generating after the end-of-generation token (EOS/EOT)")
	return cmd
}

// runRun loads the model, runs the prompt one token per call and generates
// opts.N tokens.
func runRun(opts *RunOptions) error {
	if opts.Err == nil {
		opts.Err = io.Discard
	}
	mo := modelfile.Options{Cmd: "run", Model: opts.Model, KernelConfig: opts.KernelConfig, FromLayout: opts.FromLayout, Threads: opts.Threads, Arith: opts.Arith, NoMmap: opts.NoMmap}
	rtOpts, err := modelfile.Prepare(mo)
	if err != nil {
		return err
	}
	if opts.DumpLogits != "" {
		if fsutil.SameFile(opts.DumpLogits, opts.KernelConfig) {
			return fmt.Errorf("--dump-logits %s is the --kernel-config file; give another path", opts.DumpLogits)
		}
		if err := checkDumpPath(opts.DumpLogits, opts.Model, opts.Force); err != nil {
			return err
		}
	}
	loadStart := time.Now()
	m, f, err := modelfile.Load(mo, rtOpts, runtime.Open)
	if err != nil {
		return err
	}
	loadTime := time.Since(loadStart)
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
	if opts.Ctx > m.Params.NCtx {
		return usage.Errorf("-c %d: exceeds the context length %d of %s; lower -c", opts.Ctx, m.Params.NCtx, opts.Model)
	}
	if opts.Ctx > 0 && len(prompt)+opts.N > opts.Ctx {
		return usage.Errorf("-n %d: the prompt (%d tokens) plus -n exceeds -c %d; lower -n, raise -c or shorten the prompt", opts.N, len(prompt), opts.Ctx)
	}
	if len(prompt)+opts.N > m.Params.NCtx {
		return usage.Errorf("-n %d: the prompt (%d tokens) plus -n exceeds the context length %d of %s; lower -n or shorten the prompt", opts.N, len(prompt), m.Params.NCtx, opts.Model)
	}
	var eog []int32
	if !opts.IgnoreEOS && tok != nil {
		for _, id := range []int32{v.EOS, v.EOT} {
			if id >= 0 {
				eog = append(eog, id)
			}
		}
	}
	fmt.Fprintf(opts.Out, "prompt ids: %s\n", joinIDs(prompt))
	stream := newStreamer(opts.Out, tok)
	// Rows are not kept (H10): without --dump-logits they are dropped,
	// with it each is streamed to the temp file as it is computed.
	dump := func([]float32) error { return nil }
	var dumpFile *atomicfile.File
	var dumpBuf *bufio.Writer
	var dumpErr error // the dump's own failure, reported as it is
	if opts.DumpLogits != "" {
		// Ctrl-C, SIGTERM, SIGHUP: stop at the next row and remove the
		// temp file (H12).
		ctx, stop := interrupt.NotifyContext(context.Background())
		defer stop()
		if dumpFile, err = atomicfile.Create(opts.DumpLogits, opts.Force); err != nil {
			return fmt.Errorf("--dump-logits: %w", err)
		}
		defer dumpFile.Abort()
		dumpBuf = bufio.NewWriterSize(dumpFile, 1<<20)
		var b []byte
		dump = func(row []float32) error {
			if ctx.Err() != nil {
				dumpErr = fmt.Errorf("interrupted; --dump-logits %s was not written", opts.DumpLogits)
				return dumpErr
			}
			b = b[:0]
			for _, v := range row {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
			if _, err := dumpBuf.Write(b); err != nil {
				dumpErr = dumpError(dumpFile, opts.DumpLogits, err)
				return dumpErr
			}
			return nil
		}
	}
	seed := opts.Seed
	if opts.RandomSeed && opts.Temp > 0 {
		seed = rand.Uint64()
		fmt.Fprintf(opts.Err, "run: sampler seed = %d (repeat the run with -s %d)\n", seed, seed)
	}
	gen, _, st, err := GenerateStream(m, prompt, GenOptions{N: opts.N, Temp: opts.Temp, Seed: seed, Stop: eog, OnToken: stream.token, OnRow: dump,
		TopK: opts.TopK, TopP: opts.TopP, RepeatPenalty: opts.RepeatPenalty, RepeatLastN: opts.RepeatLastN})
	stream.end()
	if err != nil {
		if dumpErr != nil {
			return dumpErr
		}
		return fmt.Errorf("model %s: %w", opts.Model, err)
	}
	if dumpFile != nil {
		if err := dumpBuf.Flush(); err != nil {
			return dumpError(dumpFile, opts.DumpLogits, err)
		}
		if err := dumpFile.Commit(); err != nil {
			return dumpError(dumpFile, opts.DumpLogits, err)
		}
	}
	if opts.KernelConfig != "" {
		if n := runtime.KernelConfigNotice(f.KVs, f.Tensors, rtOpts.TLKernels); n != "" {
			fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", n)
		}
	}
	if tok != nil {
		fmt.Fprintf(opts.Out, "generated ids: %s\n", joinIDs(gen))
	}
	if st.Stopped {
		fmt.Fprintf(opts.Err, "bitnet-convert: generation stopped at the end-of-generation token %d after %d token(s) (--ignore-eos to continue)\n", gen[len(gen)-1], len(gen))
	}
	// Said with the timings, after success: a failed run prints only its
	// error line.
	fmt.Fprintf(opts.Err, "run:       arithmetic = %s (--arith)\n", m.Arith())
	printPerf(opts.Err, loadTime, st)
	return nil
}

// printPerf prints the timings in the shape of llama.cpp's
// llama_perf_context_print (src/llama-context.cpp): load time, prompt eval
// time over the prompt tokens, eval time over the generation runs, total.
func printPerf(w io.Writer, load time.Duration, st GenStats) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	per := func(d time.Duration, n int) (float64, float64) {
		if n == 0 || d <= 0 {
			return 0, 0
		}
		return ms(d) / float64(n), 1e3 / ms(d) * float64(n)
	}
	fmt.Fprintf(w, "run:        load time = %10.2f ms\n", ms(load))
	a, b := per(st.PromptTime, st.PromptTokens)
	fmt.Fprintf(w, "run: prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)\n", ms(st.PromptTime), st.PromptTokens, a, b)
	a, b = per(st.EvalTime, st.EvalRuns)
	fmt.Fprintf(w, "run:        eval time = %10.2f ms / %5d runs   (%8.2f ms per token, %8.2f tokens per second)\n", ms(st.EvalTime), st.EvalRuns, a, b)
	fmt.Fprintf(w, "run:       total time = %10.2f ms / %5d tokens\n", ms(load+st.PromptTime+st.EvalTime), st.PromptTokens+st.EvalRuns)
}

// streamer writes the generation to out as it happens: the decoded text
// (only the part that is complete UTF-8, so a multi-byte character split
// over tokens prints once whole) or, without a tokenizer, the ids.
type streamer struct {
	out     io.Writer
	tok     tokenizer.Tokenizer
	ids     []int32
	printed string
	started bool
}

func newStreamer(out io.Writer, tok tokenizer.Tokenizer) *streamer {
	return &streamer{out: out, tok: tok}
}

func (s *streamer) token(id int32) {
	if !s.started {
		s.started = true
		if s.tok != nil {
			fmt.Fprint(s.out, "generated text: ")
		} else {
			fmt.Fprint(s.out, "generated ids:")
		}
	}
	if s.tok == nil {
		fmt.Fprintf(s.out, " %d", id)
		return
	}
	s.ids = append(s.ids, id)
	text, err := s.tok.Decode(s.ids)
	if err != nil || !strings.HasPrefix(text, s.printed) {
		return
	}
	// Hold back an incomplete trailing UTF-8 sequence.
	end := len(text)
	for end > len(s.printed) && !utf8.ValidString(text[len(s.printed):end]) {
		end--
	}
	fmt.Fprint(s.out, text[len(s.printed):end])
	s.printed = text[:end]
}

// end finishes the streamed line (printing any held-back bytes).
func (s *streamer) end() {
	if !s.started {
		if s.tok == nil {
			fmt.Fprint(s.out, "generated ids:")
		} else {
			fmt.Fprint(s.out, "generated text: ")
		}
	} else if s.tok != nil {
		if text, err := s.tok.Decode(s.ids); err == nil && strings.HasPrefix(text, s.printed) {
			fmt.Fprint(s.out, text[len(s.printed):])
		}
	}
	fmt.Fprintln(s.out)
}

// GenOptions configure GenerateStream.
type GenOptions struct {
	N    int     // tokens to generate at most
	Temp float64 // 0 = greedy, ties to the lowest id
	Seed uint64  // sampling seed
	// TopK, TopP, RepeatPenalty and RepeatLastN are the filters of
	// runtime.SamplerParams; zero values (TopP 0 and RepeatPenalty 0
	// included) mean off.
	TopK          int
	TopP          float64
	RepeatPenalty float64
	RepeatLastN   int
	// Stop lists end-of-generation ids: generation ends after producing one
	// (it is returned in the ids but not fed back).
	Stop []int32
	// OnToken, when set, is called with each generated id as soon as it is
	// chosen.
	OnToken func(id int32)
	// OnRow, when set, gets each row of logits in the order GenerateStream
	// documents, as soon as it is computed, and the rows are not kept (the
	// returned rows are nil): run -n 4000 on a 32000-token vocabulary held
	// 500 MB of rows (defect H10). The row is reused afterwards; an error
	// ends the generation.
	OnRow func(row []float32) error
}

// sampler returns the runtime.SamplerParams of o, zero values meaning off.
func (o GenOptions) sampler() runtime.SamplerParams {
	p := runtime.SamplerParams{Temp: o.Temp, TopK: o.TopK, TopP: o.TopP, RepeatPenalty: o.RepeatPenalty, RepeatLastN: o.RepeatLastN}
	if p.TopP <= 0 {
		p.TopP = 1
	}
	if p.RepeatPenalty <= 0 {
		p.RepeatPenalty = 1
	}
	return p
}

// GenStats are the counts and times of a GenerateStream call, for the
// llama_perf_context_print-style summary.
type GenStats struct {
	PromptTokens int           // prompt positions evaluated
	PromptTime   time.Duration // time to evaluate them
	EvalRuns     int           // generated tokens fed back through the model
	EvalTime     time.Duration // time of those runs (sampling included)
	Stopped      bool          // generation ended at a Stop token
}

// Generate evaluates prompt as one batch (Session.EvalBatch, the same
// logits as one token per call) and then produces n tokens (greedy for
// temp 0); it is GenerateStream without stop tokens.
func Generate(m *runtime.Model, prompt []int32, n int, temp float64, seed uint64) ([]int32, [][]float32, error) {
	gen, rows, _, err := GenerateStream(m, prompt, GenOptions{N: n, Temp: temp, Seed: seed})
	return gen, rows, err
}

// finiteRow returns an error naming position pos and the first logit of row
// that is NaN or ±Inf, or nil when every logit is finite. One non-finite logit
// means a weight or scale of the output path holds NaN/Inf (perplexity's
// check, cmd/bitnet-convert/cli/perplexity, fails the same way).
func finiteRow(row []float32, pos int) error {
	for j, v := range row {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("logits at position %d are not finite (logit %d is %v): the model's weights hold NaN/Inf; check token_embd.weight / output.weight or reconvert the model", pos, j, v)
		}
	}
	return nil
}

// GenerateStream feeds prompt one token per call and then produces up to
// o.N tokens. It returns the generated ids and every row of logits in the
// golden layout: one row per prompt position, then one row per generated
// token, generated row 0 being the last prompt row (the logits that chose the
// first new token) and row i the logits after feeding generated token i−1.
func GenerateStream(m *runtime.Model, prompt []int32, o GenOptions) ([]int32, [][]float32, GenStats, error) {
	var st GenStats
	n := o.N
	s := m.NewSession(len(prompt) + n)
	rng := rand.New(rand.NewPCG(o.Seed, 0x6269746e6574))
	var rows [][]float32
	keep := func(row []float32) error {
		if o.OnRow != nil {
			return o.OnRow(row)
		}
		rows = append(rows, row)
		return nil
	}
	t0 := time.Now()
	prows, err := s.EvalBatch(prompt, 0)
	if err != nil {
		return nil, nil, st, fmt.Errorf("prompt: %w", err)
	}
	var last []float32
	for p, l := range prows {
		if err := finiteRow(l, p); err != nil {
			st.PromptTime = time.Since(t0)
			return nil, nil, st, err
		}
		if o.OnRow != nil {
			if err := o.OnRow(l); err != nil {
				return nil, nil, st, err
			}
			last = append(last[:0], l...)
			continue
		}
		last = append([]float32(nil), l...)
		rows = append(rows, last)
	}
	st.PromptTokens, st.PromptTime = len(prompt), time.Since(t0)
	t0 = time.Now()
	var gen []int32
	sp := o.sampler()
	history := slices.Clip(prompt)
	for i := 0; i < n; i++ {
		if err := keep(last); err != nil {
			return nil, nil, st, err
		}
		next := runtime.SampleWith(last, sp, history, rng.Float64())
		if next < 0 {
			st.EvalTime = time.Since(t0)
			return nil, nil, st, fmt.Errorf("generation step %d: the logits are not finite (all NaN); the model's weights are broken, reconvert it", i)
		}
		gen = append(gen, next)
		history = append(history, next)
		if o.OnToken != nil {
			o.OnToken(next)
		}
		if slices.Contains(o.Stop, next) {
			st.Stopped = true
			break
		}
		if i == n-1 {
			break
		}
		l, err := s.Eval(next)
		if err != nil {
			st.EvalTime = time.Since(t0)
			return nil, nil, st, fmt.Errorf("generation step %d: %w", i+1, err)
		}
		st.EvalRuns++
		if err := finiteRow(l, len(prompt)+i); err != nil {
			st.EvalTime = time.Since(t0)
			return nil, nil, st, err
		}
		if o.OnRow != nil {
			last = append(last[:0], l...)
		} else {
			last = append([]float32(nil), l...)
		}
	}
	st.EvalTime = time.Since(t0)
	return gen, rows, st, nil
}

// dumpError is the one-line error of a failed --dump-logits write: the
// flag, the file and the cause, the path named once (H13: it was named
// three times, the temp file's name rewritten into each).
func dumpError(f *atomicfile.File, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == f.TempName() {
		err = pe.Err
	}
	return fmt.Errorf("--dump-logits %s: %w", path, f.NameTarget(err))
}

// checkDumpPath refuses a --dump-logits path that would destroy an input:
// the model file itself (os.SameFile, so links count) or an existing file
// that is not a regular file (a FIFO would block, /dev/null would be
// replaced by the rename of the temp file).
func checkDumpPath(dump, model string, force bool) error {
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
	if !force {
		return fmt.Errorf("--dump-logits %s exists; pass --force to overwrite it", dump)
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
