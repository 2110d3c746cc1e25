package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/version"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// BenchOptions are the parsed flags of bench.
type BenchOptions struct {
	Model   string // -m: GGUF file
	Prompt  []int  // -p: prompt lengths of the ppN tests (0 = none)
	Gen     []int  // -n: token counts of the tgN tests (0 = none)
	Threads []int  // -t: thread counts (0 = all cores)
	Reps    int    // -r: timed repetitions per test
	// Output is -o/--output: "md" (llama-bench's markdown table, the
	// default), "json" (a JSON array; --json is the same) or "csv" (a
	// header line of the JSON field names, then one quoted row per test,
	// as llama-bench -o csv).
	Output string
	// KernelConfig is the kernel_config.ini of a TL1/TL2 file.
	KernelConfig string
	FromLayout   string // --from-layout: I2_S layout of a file that records none
	Arith        string // --arith: bitnet.cpp, mainline, ik ("" = the file's home runtime)
	NoMmap       bool   // --no-mmap: read the model into memory instead of mapping it
	Out          io.Writer
	Err          io.Writer // notices; nil discards them
}

// NewCmdBench returns the bench command. It only parses flags; runF
// replaces benchRun in tests (nil: benchRun).
func NewCmdBench(runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{}
	var prompt, gen, threads string
	var jsonFlag bool
	cmd := &cobra.Command{
		Use:   "bench -m FILE [-p 128] [-n 32] [-t N] [-r 5] [-o md|json|csv] [--no-mmap]",
		Short: "Prompt and generation speed of a GGUF model, as llama-bench measures it",
		Long: `Run llama-bench's two tests in the runtime (Go with assembly kernels) and print its markdown table (model, size,
params, backend, threads, test, t/s as mean ± standard deviation over -r repetitions):
ppN evaluates N tokens as one batch on an empty KV cache (logits of the last token only, as
llama_batch_get_one asks for), tgN generates N tokens one call each from an empty cache. The tokens
are BOS (when the vocabulary adds one) then seeded pseudo-random ids, as llama-bench draws them.
Each test runs once untimed first (llama-bench's warm-up). -p, -n and -t take comma-separated
lists (e.g. -t 1,2); 0 in -p or -n skips that test. -o json (or --json) prints a JSON array, one object per test, with
every sample (samples_ns, samples_ts) in llama-bench's field names; -o csv prints the same fields
but the samples, a quoted header line then one quoted line per test, as llama-bench -o csv.`,
		Args: func(cmd *cobra.Command, args []string) error {
			return modelfile.PositionalModel("bench", args, "use -m FILE")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			opts.Err = cmd.ErrOrStderr()
			if opts.Model == "" {
				return usage.Errorf("-m/--model FILE is required")
			}
			var err error
			if opts.Prompt, err = intList("-p/--n-prompt", prompt, 0); err != nil {
				return err
			}
			if opts.Gen, err = intList("-n/--n-gen", gen, 0); err != nil {
				return err
			}
			if !slices.ContainsFunc(opts.Prompt, positive) && !slices.ContainsFunc(opts.Gen, positive) {
				return usage.Errorf("-p/--n-prompt %s -n/--n-gen %s: no test to run; give a prompt length or a token count above 0", prompt, gen)
			}
			if opts.Threads, err = intList("-t/--threads", threads, 0); err != nil {
				return err
			}
			if opts.FromLayout != "" {
				if _, err := format.ParseLayout(opts.FromLayout); err != nil {
					return usage.Errorf("--from-layout: %v", err)
				}
			}
			if jsonFlag {
				if cmd.Flags().Changed("output") && opts.Output != "json" {
					return usage.Errorf("--json and -o %s exclude each other", opts.Output)
				}
				opts.Output = "json"
			}
			switch opts.Output {
			case "md", "json", "csv":
			case "sql":
				return usage.Errorf("-o sql: not implemented; use -o csv or -o json")
			default:
				return usage.Errorf("-o/--output %q: want md, json or csv", opts.Output)
			}
			if opts.Reps < 1 {
				return usage.Errorf("-r/--repetitions %d: must be ≥ 1", opts.Reps)
			}
			if err := flagx.CheckArith(opts.Arith); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return benchRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF model file (required)")
	f.StringVarP(&prompt, "n-prompt", "p", "128", "prompt lengths of the ppN tests, comma-separated; 0 = no prompt test")
	f.StringVarP(&gen, "n-gen", "n", "32", "generated token counts of the tgN tests, comma-separated; 0 = no generation test")
	f.StringVarP(&threads, "threads", "t", "0", "thread counts to measure, comma-separated; 0 = all cores")
	f.IntVarP(&opts.Reps, "repetitions", "r", 5, "timed repetitions of each test")
	f.StringVarP(&opts.Output, "output", "o", "md", "output format: md (the table), json or csv (llama-bench's field names)")
	f.BoolVar(&jsonFlag, "json", false, "the same as -o json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"md", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	f.StringVar(&opts.FromLayout, "from-layout", "", flagx.FromLayoutUsage)
	f.StringVar(&opts.Arith, "arith", "", flagx.ArithUsage)
	f.BoolVar(&opts.NoMmap, "no-mmap", false, flagx.NoMmapUsage)
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini the TL1/TL2 file was converted with (TL files only)")
	return cmd
}

// intList parses a comma-separated list of integers ≥ lo for flag name.
func intList(name, s string, lo int) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, usage.Errorf("%s %q: want comma-separated integers", name, s)
		}
		if v < lo {
			return nil, usage.Errorf("%s %d: must be ≥ %d", name, v, lo)
		}
		out = append(out, v)
	}
	return out, nil
}

// Result is one test of one thread count: the JSON object of --json (the
// field names of llama-bench's json_printer; times in ns, speeds in tokens
// per second).
type Result struct {
	ModelFilename string    `json:"model_filename"`
	ModelType     string    `json:"model_type"`
	ModelSize     uint64    `json:"model_size"`     // bytes of tensor data
	ModelNParams  uint64    `json:"model_n_params"` // elements of all tensors
	Backends      string    `json:"backends"`
	Kernels       string    `json:"kernels"` // internal/kernels.Impl
	NThreads      int       `json:"n_threads"`
	UseMmap       bool      `json:"use_mmap"` // false with --no-mmap
	NPrompt       int       `json:"n_prompt"`
	NGen          int       `json:"n_gen"`
	TestTime      string    `json:"test_time"` // RFC 3339, UTC
	AvgNs         uint64    `json:"avg_ns"`
	StddevNs      uint64    `json:"stddev_ns"`
	AvgTs         float64   `json:"avg_ts"`
	StddevTs      float64   `json:"stddev_ts"`
	SamplesNs     []uint64  `json:"samples_ns"`
	SamplesTs     []float64 `json:"samples_ts"`
}

// Test is llama-bench's test label: "ppN" or "tgN".
func (r *Result) Test() string {
	if r.NGen == 0 {
		return fmt.Sprintf("pp%d", r.NPrompt)
	}
	return fmt.Sprintf("tg%d", r.NGen)
}

// benchRun loads the model once and runs every (threads, test) pair.
func benchRun(opts *BenchOptions) error {
	if opts.Err == nil {
		opts.Err = io.Discard
	}
	mo := modelfile.Options{Cmd: "bench", Model: opts.Model, KernelConfig: opts.KernelConfig, FromLayout: opts.FromLayout, Arith: opts.Arith, NoMmap: opts.NoMmap}
	rtOpts, err := modelfile.Prepare(mo)
	if err != nil {
		return err
	}
	var results []Result
	var tbl *table
	if opts.Output == "md" || opts.Output == "" {
		tbl = newTable(opts.Out)
	}
	for _, th := range opts.Threads {
		rtOpts.Threads = flagx.Threads(th)
		m, f, err := modelfile.Load(mo, rtOpts, runtime.Open)
		if err != nil {
			return err
		}
		if opts.KernelConfig != "" && th == opts.Threads[0] {
			// As run and perplexity do: a tiling that differs from the
			// stored one, or one for a file without TL tensors.
			if n := runtime.KernelConfigNotice(f.KVs, f.Tensors, rtOpts.TLKernels); n != "" {
				fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", n)
			}
		}
		base := describe(opts.Model, f)
		bos := bosID(f.KVs, m.Params.NVocab)
		base.NThreads = rtOpts.Threads
		base.UseMmap = !rtOpts.NoMmap
		var tests []Result
		for _, p := range opts.Prompt {
			if p > 0 {
				r := base
				r.NPrompt = p
				tests = append(tests, r)
			}
		}
		for _, n := range opts.Gen {
			if n > 0 {
				r := base
				r.NGen = n
				tests = append(tests, r)
			}
		}
		for i := range tests {
			r := &tests[i]
			if need := r.NPrompt + r.NGen; need > m.Params.NCtx {
				f.Close()
				return usage.Errorf("%s: %d tokens exceed the context length %d of %s; lower -p/-n", r.Test(), need, m.Params.NCtx, opts.Model)
			}
			if err := runTest(m, bos, r, opts.Reps); err != nil {
				f.Close()
				return fmt.Errorf("model %s: %s: %w", opts.Model, r.Test(), err)
			}
			if tbl != nil {
				tbl.row(r)
			}
			results = append(results, *r)
		}
		f.Close()
	}
	switch opts.Output {
	case "json":
		if results == nil {
			results = []Result{}
		}
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	case "csv":
		return writeCSV(opts.Out, results)
	}
	// llama-bench's footer names its build; ours adds the kernels.
	fmt.Fprintf(opts.Out, "\nbuild: %s (kernels: %s)\n", version.Read(), kernels.Impl())
	return nil
}

// csvFields are the columns of -o csv: the JSON field names of Result
// but the per-sample arrays (llama-bench's csv_printer has none either).
var csvFields = []string{"model_filename", "model_type", "model_size", "model_n_params", "backends", "kernels",
	"n_threads", "use_mmap", "n_prompt", "n_gen", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts"}

// writeCSV writes -o csv: the header, then one line per result, every
// value in double quotes (a quote inside doubled), as llama-bench's
// csv_printer writes them.
func writeCSV(w io.Writer, results []Result) error {
	q := func(vs []string) string {
		for i, v := range vs {
			vs[i] = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
		}
		return strings.Join(vs, ",") + "\n"
	}
	var b strings.Builder
	b.WriteString(q(slices.Clone(csvFields)))
	for _, r := range results {
		b.WriteString(q([]string{r.ModelFilename, r.ModelType, strconv.FormatUint(r.ModelSize, 10), strconv.FormatUint(r.ModelNParams, 10),
			r.Backends, r.Kernels, strconv.Itoa(r.NThreads), b01(r.UseMmap), strconv.Itoa(r.NPrompt), strconv.Itoa(r.NGen), r.TestTime,
			strconv.FormatUint(r.AvgNs, 10), strconv.FormatUint(r.StddevNs, 10),
			strconv.FormatFloat(r.AvgTs, 'f', 6, 64), strconv.FormatFloat(r.StddevTs, 'f', 6, 64)}))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// b01 is a bool as llama-bench's csv_printer writes it.
func b01(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// runTest runs r's test once untimed, then reps timed times, filling the
// samples and their statistics.
func runTest(m *runtime.Model, bos int32, r *Result, reps int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	s := m.NewSession(r.NPrompt + r.NGen)
	// check: the untimed run checks every logit row it computes, so that
	// a model whose weights hold NaN/Inf fails as run and perplexity do
	// instead of being timed
	once := func(check bool) error {
		s.Reset()
		if r.NPrompt > 0 {
			toks := make([]int32, r.NPrompt)
			for i := range toks {
				toks[i] = int32(rng.IntN(m.Params.NVocab))
			}
			if bos >= 0 {
				toks[0] = bos
			}
			rows, err := s.EvalBatch(toks, len(toks)-1)
			if err != nil {
				return err
			}
			if check {
				if err := finiteLogits(rows[0], len(toks)-1); err != nil {
					return err
				}
			}
		}
		tok := bos
		if tok < 0 {
			tok = int32(rng.IntN(m.Params.NVocab))
		}
		for i := range r.NGen {
			row, err := s.Eval(tok)
			if err != nil {
				return err
			}
			if check {
				if err := finiteLogits(row, r.NPrompt+i); err != nil {
					return err
				}
			}
			tok = int32(rng.IntN(m.Params.NVocab))
		}
		return nil
	}
	if err := once(true); err != nil {
		return err
	}
	r.TestTime = time.Now().UTC().Format(time.RFC3339)
	for range reps {
		t0 := time.Now()
		if err := once(false); err != nil {
			return err
		}
		ns := uint64(max(time.Since(t0).Nanoseconds(), 1))
		r.SamplesNs = append(r.SamplesNs, ns)
		r.SamplesTs = append(r.SamplesTs, float64(r.NPrompt+r.NGen)*1e9/float64(ns))
	}
	var ns []float64
	for _, v := range r.SamplesNs {
		ns = append(ns, float64(v))
	}
	avg, sd := meanStdev(ns)
	r.AvgNs, r.StddevNs = uint64(avg), uint64(sd)
	r.AvgTs, r.StddevTs = meanStdev(r.SamplesTs)
	return nil
}

// finiteLogits returns an error naming position pos and the first logit of
// row that is NaN or ±Inf (run's and perplexity's check), else nil.
func finiteLogits(row []float32, pos int) error {
	for j, v := range row {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("logits at position %d are not finite (logit %d is %v): the model's weights hold NaN/Inf; reconvert the model", pos, j, v)
		}
	}
	return nil
}

// meanStdev returns the mean and the sample standard deviation (n − 1 in
// the denominator, 0 for one sample) of xs, as llama-bench's avg and stdev.
func meanStdev(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// bosID is the vocabulary's BOS id when its tokenizer adds one
// (llama_add_bos_token: what Encode of an empty text with special tokens
// gives), else −1 (no usable vocabulary, or no BOS).
func bosID(kvs []gguf.KV, nVocab int) int32 {
	v, err := tokenizer.FromGGUF(kvs)
	if err != nil {
		return -1
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return -1
	}
	ids, err := tok.Encode("", true, false)
	if err != nil || len(ids) == 0 || ids[0] < 0 || int(ids[0]) >= nVocab {
		return -1
	}
	return ids[0]
}

// describe fills the model columns from the file: llama_model_desc's
// "ARCH SIZE FTYPE" (SIZE "?B" where we cannot vouch for llama.cpp's
// model-type name), the bytes and elements of every tensor.
func describe(path string, f *reader.File) Result {
	r := Result{ModelFilename: path, Backends: "CPU", Kernels: kernels.Impl()}
	for _, t := range f.Tensors {
		n := uint64(1)
		for _, d := range t.Ne {
			n *= d
		}
		r.ModelNParams += n
		if b, err := gguf.NBytes(t.Type, t.Ne); err == nil {
			r.ModelSize += b
		}
	}
	arch := f.Arch()
	ft, _ := f.Uint("general.file_type")
	r.ModelType = fmt.Sprintf("%s %s %s%s", arch, sizeClass(arch, f), ftypeName(ft), fallbackNote(f, ft))
	return r
}

// fallbackNote is " (N of M projections F16)" when a file whose projections
// are ternary (general.file_type names the type of the ternary ones) holds
// some in a float type instead (hf2gguf/requant --allow-fallback), so the
// label does not claim the bits per weight of a file that is mostly F16;
// "" otherwise.
func fallbackNote(f *reader.File, ft uint64) string {
	var ternary, float int
	var floatType gguf.Type
	for _, t := range f.Tensors {
		if !isProjection(t.Name) {
			continue
		}
		switch {
		case format.IsTernary(t.Type):
			ternary++
		case t.Type == gguf.TypeF16 || t.Type == gguf.TypeBF16 || t.Type == gguf.TypeF32:
			float++
			floatType = t.Type
		}
	}
	switch gguf.FileType(ft) {
	case gguf.FileTypeMostlyI2S, gguf.FileTypeMostlyTL1, gguf.FileTypeMostlyTL2, gguf.FileTypeMostlyTQ1_0,
		gguf.FileTypeMostlyTQ2_0, gguf.FileTypeMostlyIQ1BN, gguf.FileTypeMostlyIQ2BN:
	default:
		return ""
	}
	if float == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d projections %s)", float, ternary+float, floatType)
}

// isProjection reports whether a GGUF tensor name is a block's attention
// or FFN projection weight (blk.N.attn_{q,k,v,output}, blk.N.ffn_{gate,up,down}).
func isProjection(name string) bool {
	if !strings.HasPrefix(name, "blk.") || !strings.HasSuffix(name, ".weight") {
		return false
	}
	for _, p := range []string{".attn_q.", ".attn_k.", ".attn_v.", ".attn_output.", ".ffn_gate.", ".ffn_up.", ".ffn_down."} {
		if strings.Contains(name, p) {
			return true
		}
	}
	return false
}

// sizeClass is llama.cpp's model-type name where we have seen what
// bitnet.cpp prints for the arch and layer count (llama-bench on the same
// files, docs/performance.md): 24-layer bitnet is "700M"
// (bitnet_b1_58-large), 30-layer bitnet-b1.58 "2B" (BitNet-b1.58-2B-4T);
// anything else prints as llama.cpp's unknown type, "?B".
func sizeClass(arch string, f *reader.File) string {
	n, _ := f.Uint(arch + ".block_count")
	switch {
	case arch == "bitnet-b1.58" && n == 30:
		return "2B"
	case arch == "bitnet" && n == 24:
		return "700M"
	}
	return "?B"
}

// positive reports v > 0: a -p or -n entry that makes a test.
func positive(v int) bool { return v > 0 }

// ftypeName is llama_model_ftype_name of bitnet.cpp's llama.cpp fork for
// the general.file_type values our files carry (the ternary ones from
// format's type table, Spec.FtypeName); TQ1_0/TQ2_0 are mainline
// llama.cpp's names (src/llama-model-loader.cpp, llama_model_ftype_name) and
// IQ1_BN/IQ2_BN ik_llama.cpp's (src/llama.cpp, llama_model_ftype_name).
func ftypeName(ft uint64) string {
	switch gguf.FileType(ft) {
	case gguf.FileTypeAllF32:
		return "all F32"
	case gguf.FileTypeMostlyF16:
		return "F16"
	case gguf.FileTypeMostlyBF16:
		return "BF16"
	case gguf.FileTypeMostlyQ8_0:
		return "Q8_0"
	}
	for _, s := range format.Specs() {
		if uint64(s.FileType) == ft {
			return s.FtypeName
		}
	}
	return fmt.Sprintf("ftype %d", ft)
}

// table prints llama-bench's markdown table: a header on the first row,
// then one line per test, the column widths of its markdown_printer
// (model left-aligned in 30, size and params 10, backend 10, threads 7,
// test 13, t/s 20), and, as llama-bench adds a column for a setting that
// is not its default, an mmap column (0) with --no-mmap.
type table struct {
	w      io.Writer
	header bool
}

func newTable(w io.Writer) *table { return &table{w: w} }

func (t *table) row(r *Result) {
	if !t.header {
		t.header = true
		mm, rule := "", ""
		if !r.UseMmap {
			mm, rule = " mmap |", " ---: |"
		}
		fmt.Fprintf(t.w, "| %-30s | %10s | %10s | %-10s | %7s |%s %13s | %20s |\n", "model", "size", "params", "backend", "threads", mm, "test", "t/s")
		fmt.Fprintf(t.w, "| %s | %s: | %s: | %s | %s: |%s %s: | %s: |\n", strings.Repeat("-", 30), strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 10), strings.Repeat("-", 6), rule, strings.Repeat("-", 12), strings.Repeat("-", 19))
	}
	mm := ""
	if !r.UseMmap {
		mm = "    0 |"
	}
	fmt.Fprintf(t.w, "| %-30s | %10s | %10s | %-10s | %7d |%s %13s | %20s |\n", r.ModelType, mib(r.ModelSize), params(r.ModelNParams), r.Backends, r.NThreads, mm, r.Test(), fmt.Sprintf("%.2f ± %.2f", r.AvgTs, r.StddevTs))
}

// mib formats a byte count as llama-bench's size column.
func mib(b uint64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// params formats an element count as llama-bench's params column.
func params(n uint64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}
