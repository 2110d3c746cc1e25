// Package verify is the `bitnet-convert verify` command: prove a GGUF file
// against its Hugging Face source and a float reference.
package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/idlist"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/progress"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/verify"
)

// Options are the parsed flags of verify.
type Options struct {
	GGUF, HF, Prompt, IDs, KernelConfig, WeightScale string
	// RefGGUF is --ref-gguf: compare GGUF with this file instead of a
	// checkpoint (the proof of a requant).
	RefGGUF string
	// GGUFArg: GGUF was given as the argument, not as --gguf (errors name
	// what the user typed).
	GGUFArg         bool
	Pooling         string // embedding models: mean, cls or last (default: the file's)
	Arith           string // --arith: bitnet.cpp, mainline, ik ("" = each file's home runtime)
	Tokens, Threads int
	JSON            bool
	// Verbose (-v) prints the logit bound the error model derived and why.
	Verbose bool
	// AllowTieFallback: tie_word_embeddings false but no lm_head.weight:
	// token_embd is the head, as hf2gguf --allow-tie-fallback converts it.
	AllowTieFallback bool
	Ternarize        bool // as hf2gguf --ternarize (verify.Options.Ternarize)
	// Threshold overrides of the file type's defaults (verify.Thresholds);
	// nil keeps the default. The command sets one only when its flag was
	// given (cobra's Changed), after checking it is a number ≥ 0.
	MinTop1, MaxDelta, MaxKL, MaxPPLRel *float64
	// MinCosine overrides the embedding models' per-prompt cosine bound.
	MinCosine *float64
	Out       io.Writer
	// Err receives notices, and one line per stage when ErrIsTerminal is
	// set (nil: discarded).
	Err           io.Writer
	ErrIsTerminal bool
}

// ErrFailed is returned (wrapped with the first failure) when the file does
// not pass; the command then exits 1.
var ErrFailed = errors.New("verification failed")

// NewCmd returns the verify command; runF replaces Run in tests (nil: Run).
func NewCmd(runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "verify FILE [--hf DIR | --ref-gguf A.gguf] [--prompt TEXT | --ids 1,2,3] [--tokens N] [--json] [-v]",
		Short: "Check a GGUF against its Hugging Face source and a float reference; exit 1 on failure",
		Long: `verify loads the GGUF (the argument, or --gguf FILE) in the bundled runtime. With --hf it checks every tensor against the
checkpoint (ternary codes exactly, scales within 1 ulp, float tensors exactly after rounding), the
metadata against config.json, and compares the runtime's logits on the prompt with a float
reference built from the HF weights (top-1 agreement, max |Δlogit|, mean KL, perplexity). Without
--hf only the runtime sanity checks run (finite, non-degenerate logits): that does not show the
file is the model it claims to be, and the report says so. When the GGUF and the checkpoint differ
in structure (a tensor missing or of another shape) the numeric comparison is skipped.

Memory: the checks stream, one tensor at a time, and the float reference runs the whole prompt
through one layer at a time with one weight matrix in memory (docs/performance.md has figures).

Default thresholds are derived per file and prompt by an error model (verify -v prints the bound and why):
each weight type's kernel family (F32, F16, BF16, I2_S/TL, TQ, IQ*_BN, Q2_0) rounds the activations and
stores the weights with its own rounding; measured on the reference's activations and summed over the
layers that gives r, the relative error of the logits, and with σ the largest std of a position's
reference logits, z = sqrt(2·ln(vocab·positions)) and K = 2:
  --max-delta z·K·r·σ   --max-kl (K·r·σ)²/2   --max-ppl-rel exp(2·K·r·σ) − 1
  --min-top1  the share of positions whose reference margin exceeds 2·max-delta

Embedding models (arch qwen3, gemma3) are checked on 5 default prompts (or --prompt): the cosine
similarity of the runtime's pooled, L2-normalised embedding and the float reference's, per prompt,
at least --min-cosine (default 0.999 for ternary files, 0.99999 for float files).

--ref-gguf A.gguf proves a requant: "verify --ref-gguf A.gguf B.gguf" (or --gguf B.gguf) compares B
with A tensor by tensor (same ternary codes; scales exact between f32 scales, within 2^-11 relative
where either file stores f16 scales: ` + strings.Join(format.F16ScaleTypeNames(), ", ") + `; float tensors byte-equal, or equal to
A's values stored in B's type) and runs both in the runtime: the logits must be bit-identical when
both files run the same kernels on the same stored values (I2_S of any layout, TL1 and TL2 share
one), else stay within the derived limits above (the looser of A's and B's). The first differing tensor is named; exit 1.

The report names the runtime's arithmetic (--arith, default the file's home runtime): the runtime's
logits depend on it, and so do the --tokens generated tokens that both the runtime and the reference
then score (greedy choices of the runtime), so the reference perplexity can change with --arith too.

A threshold flag left out keeps the default; NaN and negative values are usage errors (exit 2).
On a terminal, stderr shows each stage as it starts and how long it took. The prompt plus --tokens must fit in the model's
context_length; that is checked after loading the model and is also a usage error (exit 2).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				// "verify A.gguf B.gguf": a requant's proof
				return usage.Errorf("verify checks one GGUF, got %s and %s: to compare two files give the reference (the requant's input) with --ref-gguf: verify --ref-gguf %s %s", args[0], args[1], args[0], args[1])
			}
			return cobra.MaximumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			opts.Err = cmd.ErrOrStderr()
			opts.ErrIsTerminal = progress.IsTerminal(opts.Err)
			if len(args) == 1 {
				if opts.GGUF != "" {
					return usage.Errorf("--gguf %s and the argument %s: give the file to check once", opts.GGUF, args[0])
				}
				opts.GGUF, opts.GGUFArg = args[0], true
			}
			if opts.GGUF == "" {
				return usage.Errorf("verify needs the GGUF file to check: verify FILE (or --gguf FILE)")
			}
			if opts.RefGGUF != "" && opts.HF != "" {
				return usage.Errorf("--ref-gguf and --hf exclude each other (verify against one reference at a time)")
			}
			if opts.Prompt != "" && opts.IDs != "" {
				return usage.Errorf("--prompt and --ids exclude each other")
			}
			if opts.Tokens < 0 {
				return usage.Errorf("--tokens must be ≥ 0")
			}
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if err := setThresholds(cmd.Flags(), opts, thresholds); err != nil {
				return err
			}
			if opts.IDs != "" {
				if _, err := idlist.Parse(opts.IDs); err != nil {
					return usage.Errorf("--ids: %v", err)
				}
			}
			switch opts.Pooling {
			case "", "mean", "cls", "last":
			default:
				return usage.Errorf("--pooling must be mean, cls or last, got %q", opts.Pooling)
			}
			switch opts.WeightScale {
			case "", "multiply", "divide":
			default:
				return usage.Errorf("--weight-scale must be multiply or divide, got %q", opts.WeightScale)
			}
			if err := flagx.CheckArith(opts.Arith); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.GGUF, "gguf", "", "the GGUF file to verify (the same as giving it as the argument)")
	f.StringVar(&opts.HF, "hf", "", "the Hugging Face checkpoint directory it was converted from")
	f.StringVar(&opts.RefGGUF, "ref-gguf", "", "another GGUF of the same model (a requant's input) to compare with")
	f.StringVarP(&opts.Prompt, "prompt", "p", "", "prompt text (default: "+strconv.Quote(verify.DefaultPrompt)+")")
	f.StringVar(&opts.IDs, "ids", "", "prompt as comma-separated token ids")
	f.IntVar(&opts.Tokens, "tokens", 8, "greedy tokens generated after the prompt and scored by both models")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "print the logit bound the error model derived, and why")
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini of a TL1/TL2 file (default: the one the file stores under bitnet_convert.kernel_config)")
	f.StringVar(&opts.WeightScale, "weight-scale", "", "packed checkpoints: multiply or divide (as hf2gguf)")
	f.BoolVar(&opts.AllowTieFallback, "allow-tie-fallback", false, "tie_word_embeddings false but no lm_head: token_embd is the head (as hf2gguf; implied when the GGUF has no output.weight)")
	f.BoolVar(&opts.Ternarize, "ternarize", false, "the checkpoint's float projections have no BitNet quantization_config and were converted with hf2gguf --ternarize")
	flagx.ThreadsVar(f, &opts.Threads)
	f.StringVar(&opts.Arith, "arith", "", flagx.ArithUsage)
	// A threshold flag left out keeps the file type's default (listed
	// above); whether it was given is cobra's Changed, so every value,
	// -1 included, is checked.
	for _, t := range thresholds {
		f.Float64(t.name, 0, t.usage)
	}
	f.StringVar(&opts.Pooling, "pooling", "", "embedding models: mean, cls or last (default: the file's pooling_type)")
	_ = cmd.RegisterFlagCompletionFunc("pooling", cobra.FixedCompletions([]string{"mean", "cls", "last"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// thresholdFlag is one threshold flag: its name, help and the Options
// field it sets.
type thresholdFlag struct {
	name, usage string
	dst         func(*Options) **float64
}

// thresholds are the threshold flags, in the order of their help lines.
var thresholds = []thresholdFlag{
	{"min-top1", "minimum top-1 agreement, a fraction of positions 0…1 (default: the file type's)", func(o *Options) **float64 { return &o.MinTop1 }},
	{"max-delta", "maximum |Δlogit|, ≥ 0 (default: the file type's)", func(o *Options) **float64 { return &o.MaxDelta }},
	{"max-kl", "maximum mean KL divergence in nats, ≥ 0 (default: the file type's)", func(o *Options) **float64 { return &o.MaxKL }},
	{"max-ppl-rel", "maximum relative perplexity difference, ≥ 0 (default: the file type's)", func(o *Options) **float64 { return &o.MaxPPLRel }},
	{"min-cosine", "embedding models: minimum cosine similarity per prompt, ≥ 0 (default: the file type's)", func(o *Options) **float64 { return &o.MinCosine }},
}

// setThresholds sets opts' override of every threshold flag the command
// line gave (fs.Changed) and rejects a NaN or negative value — -1 included,
// which once silently meant "the default" — and a --min-top1 above 1 (a
// fraction of positions: no file could pass) as usage errors naming the flag.
func setThresholds(fs *pflag.FlagSet, opts *Options, flags []thresholdFlag) error {
	for _, t := range flags {
		if !fs.Changed(t.name) {
			continue
		}
		v, err := fs.GetFloat64(t.name)
		if err != nil {
			return usage.Errorf("--%s: %v", t.name, err)
		}
		if math.IsNaN(v) || v < 0 {
			return usage.Errorf("--%s %v: want a number ≥ 0 (leave the flag out for the file type's default)", t.name, v)
		}
		if t.name == "min-top1" && v > 1 {
			return usage.Errorf("--%s %v: want a fraction between 0 and 1", t.name, v)
		}
		*t.dst(opts) = &v
	}
	return nil
}

// Run verifies and prints the report; a failing file returns ErrFailed
// wrapped with the first failure.
func Run(opts *Options) error {
	var ids []int32
	if opts.IDs != "" {
		ids, _ = idlist.Parse(opts.IDs) // checked by NewCmd
	}
	vo := verify.Options{GGUF: opts.GGUF, HF: opts.HF, RefGGUF: opts.RefGGUF, Prompt: opts.Prompt, IDs: ids, Tokens: opts.Tokens, WeightScale: convert.WeightScaleRule(opts.WeightScale), Threads: flagx.Threads(opts.Threads), Pooling: opts.Pooling, AllowTieFallback: opts.AllowTieFallback, Ternarize: opts.Ternarize}
	vo.Arith, _ = runtime.ParseArith(opts.Arith) // checked by NewCmd
	if err := fsutil.CheckRegular(opts.GGUF); err != nil {
		if opts.GGUFArg {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				// "stat x.gguf: …" names the system call, not the file's role
				return fmt.Errorf("%s: %w; give the GGUF file to check", opts.GGUF, pe.Err)
			}
			return err // names the file already
		}
		return fmt.Errorf("--gguf: %w", err)
	}
	if opts.RefGGUF != "" {
		if err := fsutil.CheckRegular(opts.RefGGUF); err != nil {
			return fmt.Errorf("--ref-gguf: %w", err)
		}
	}
	if opts.KernelConfig != "" {
		b, err := fsutil.ReadFile(opts.KernelConfig)
		if err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
		vo.KernelConfig = b
	}
	if err := idsInVocab(opts.GGUF, ids); err != nil {
		return err
	}
	for _, p := range []string{opts.GGUF, opts.RefGGUF} {
		if p == "" {
			continue
		}
		if err := modelfile.RefuseVocabOnly("verify", p); err != nil {
			return err
		}
	}
	// A file without a vocabulary runs on fixed ids: say which.
	idsNotice := ""
	if opts.IDs == "" && opts.Prompt == "" {
		if f, err := reader.Open(opts.GGUF); err == nil {
			if _, ok := f.Get("tokenizer.ggml.tokens"); !ok {
				idsNotice = fmt.Sprintf("%s has no vocabulary: the prompt is the ids %s (pass --ids to choose others)", opts.GGUF, joinIDs(verify.NoVocabIDs(f)))
			}
			f.Close()
		}
	}
	kcNotice := ""
	if vo.KernelConfig != nil {
		// As run does: a tiling that differs from the stored one, or one
		// for a file without TL tensors (defects D18, D19).
		if f, err := reader.Open(opts.GGUF); err == nil {
			if ks, err := format.ParseKernelConfig(vo.KernelConfig); err == nil {
				kcNotice = runtime.KernelConfigNotice(f.KVs, f.Tensors, ks)
			}
			f.Close()
		}
	}
	// Threshold flags override single limits of the file type's defaults.
	vo.Adjust = func(th *verify.Thresholds) {
		for _, o := range []struct {
			v   *float64
			dst *float64
		}{{opts.MinTop1, &th.MinTop1}, {opts.MaxDelta, &th.MaxDelta}, {opts.MaxKL, &th.MaxKL}, {opts.MaxPPLRel, &th.MaxPPLRel}, {opts.MinCosine, &th.MinCosine}} {
			if o.v != nil {
				*o.dst = *o.v
			}
		}
	}
	if opts.ErrIsTerminal {
		vo.Stage = stageReporter(opts.Err)
	}
	rep, err := verify.Run(vo)
	if vo.Stage != nil {
		vo.Stage("")
	}
	if errors.Is(err, verify.ErrContextLength) {
		return usage.Errorf("--tokens %d: %v; lower --tokens or shorten the prompt", opts.Tokens, err)
	}
	if err != nil {
		return modelfile.Explain("verify", opts.GGUF, err)
	}
	if opts.Err != nil && idsNotice != "" && rep.Pass && rep.Embeddings == nil {
		fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", idsNotice)
	}
	if opts.Err != nil && kcNotice != "" && rep.Pass {
		fmt.Fprintf(opts.Err, "bitnet-convert: %s\n", kcNotice)
	}
	if opts.Err != nil && rep.Pass && opts.WeightScale != "" && opts.HF == "" {
		// (defect H18)
		fmt.Fprintf(opts.Err, "bitnet-convert: --weight-scale has no effect: it applies to the checkpoint of --hf, and none is given\n")
	}
	if opts.Err != nil && rep.Embeddings == nil && rep.Pass {
		// (Only on success: a failure prints its one error line.)
		// Flags that only embedding models read (defect D18).
		for _, f := range []struct {
			name string
			set  bool
		}{{"--pooling", opts.Pooling != ""}, {"--min-cosine", opts.MinCosine != nil}} {
			if f.set {
				fmt.Fprintf(opts.Err, "bitnet-convert: %s has no effect: %s is a causal LM (arch %s), not an embedding model\n", f.name, opts.GGUF, rep.Arch)
			}
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(opts.Out, rep, opts.Verbose)
	}
	if !rep.Pass {
		return fmt.Errorf("%w: %s: %s", ErrFailed, opts.GGUF, rep.Failures[0])
	}
	return nil
}

// stageReporter prints one line per verification stage to w with the time
// the previous stage took; "" ends the last stage.
func stageReporter(w io.Writer) func(string) {
	var cur string
	var start time.Time
	return func(name string) {
		if cur != "" {
			fmt.Fprintf(w, " %.1fs\n", time.Since(start).Seconds())
		}
		cur, start = name, time.Now()
		if name != "" {
			fmt.Fprintf(w, "verify: %s …", name)
		}
	}
}

func printReport(w io.Writer, r *verify.Report, verbose bool) {
	fmt.Fprintf(w, "verify %s (arch %s)\n", r.GGUF, r.Arch)
	if r.HF != "" {
		bad := 0
		for _, t := range r.Tensors {
			if !t.OK {
				bad++
			}
		}
		fmt.Fprintf(w, "  structure: %d tensors checked against %s, %d differ\n", len(r.Tensors), r.HF, bad)
		fmt.Fprintf(w, "  metadata:  %d mismatches\n", len(r.Metadata))
	}
	if r.Ref != "" {
		bad := 0
		for _, t := range r.Tensors {
			if !t.OK {
				bad++
			}
		}
		fmt.Fprintf(w, "  tensors:   %d checked against %s, %d differ\n", len(r.Tensors), r.Ref, bad)
	}
	fmt.Fprintf(w, "  prompt:    %d positions\n", len(r.IDs))
	switch {
	case r.Arith != "" && r.RefArith != "":
		fmt.Fprintf(w, "  runtime:   arithmetic %s for %s, %s for %s (--arith)\n", r.Arith, r.GGUF, r.RefArith, r.Ref)
	case r.Arith != "":
		fmt.Fprintf(w, "  runtime:   arithmetic %s (--arith: the runtime's logits, and the greedy --tokens both models score, depend on it)\n", r.Arith)
	}
	if s := r.Sanity; s != nil {
		if r.HF == "" && r.Ref == "" {
			fmt.Fprintln(w, "  runtime sanity only (no --hf): the file is not compared with its checkpoint or a reference")
		}
		if s.NonFinite == s.Positions {
			// no finite position: no spread or largest logit to give
			fmt.Fprintf(w, "  logits:    0 of %d positions finite\n", s.Positions)
		} else {
			fmt.Fprintf(w, "  logits:    %d of %d positions finite, smallest spread %.4g at position %d (min %.3g), largest |logit| %.4g\n",
				s.Positions-s.NonFinite, s.Positions, s.MinSpread, s.MinSpreadPos, r.Thresholds.MinFiniteSpread, s.MaxAbsLogit)
		}
	}
	if n := r.Numbers; n != nil {
		th := r.Thresholds
		fmt.Fprintf(w, "  top-1 agreement %.3f (min %.3f), max |Δlogit| %.4g (max %.4g), mean KL %.3g (max %.3g)\n", n.Top1Agreement, th.MinTop1, n.MaxAbsDelta, th.MaxDelta, n.MeanKL, th.MaxKL)
		ref := "reference"
		if r.Ref != "" {
			ref = "--ref-gguf file"
		}
		if r.RefNumbers != nil {
			ref = "float reference of --ref-gguf"
		}
		fmt.Fprintf(w, "  perplexity on the prompt: runtime %.4f, %s %.4f\n", n.PPLRuntime, ref, n.PPLReference)
	}
	if n := r.RefNumbers; n != nil {
		th := r.Thresholds
		fmt.Fprintf(w, "  --ref-gguf file against the same float reference: top-1 agreement %.3f (min %.3f), max |Δlogit| %.4g (max %.4g), mean KL %.3g (max %.3g), perplexity %.4f\n", n.Top1Agreement, th.MinTop1, n.MaxAbsDelta, th.MaxDelta, n.MeanKL, th.MaxKL, n.PPLRuntime)
	}
	for i, e := range r.Embeddings {
		if r.HF == "" {
			// no reference: only the runtime checks (finite, unit norm) ran
			fmt.Fprintf(w, "  embedding %d (%d tokens): norm %.7g, no reference (pass --hf to compare) %q\n", i+1, e.Tokens, e.Norm, e.Prompt)
			continue
		}
		fmt.Fprintf(w, "  embedding %d (%d tokens): cosine %.7g (min %.7g) %q\n", i+1, e.Tokens, e.Cosine, r.Thresholds.MinCosine, e.Prompt)
	}
	if b := r.Bound; b != nil && verbose {
		fmt.Fprintf(w, "  bound (error model, families %s):\n", strings.Join(b.Families, ", "))
		for _, why := range b.Why {
			fmt.Fprintf(w, "    %s\n", why)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  FAIL %s\n", f)
	}
	if r.Pass && r.HF == "" && r.Ref == "" && r.Sanity != nil {
		fmt.Fprintln(w, "PASS (runtime sanity only)")
	} else if r.Pass {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

// idsInVocab refuses --ids outside the vocabulary of file (the rows of
// token_embd.weight) as a usage error, as run and embed do (defect H22: it
// was exit 1, worded as a failed check). A file that cannot be read is
// left to verify.Run to report.
func idsInVocab(file string, ids []int32) error {
	if len(ids) == 0 {
		return nil
	}
	f, err := reader.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, ti := range f.Tensors {
		if ti.Name != "token_embd.weight" || len(ti.Ne) < 2 {
			continue
		}
		for _, id := range ids {
			if id < 0 || uint64(id) >= ti.Ne[1] {
				return usage.Errorf("--ids: token id %d is outside the vocabulary of %s (%d tokens)", id, file, ti.Ne[1])
			}
		}
	}
	return nil
}

// joinIDs formats token ids as --ids takes them ("1,100,200").
func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
