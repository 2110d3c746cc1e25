// Package requant is the `bitnet-convert requant IN.gguf --outtype T`
// command: GGUF → GGUF between the ternary types of every runtime (I2_S in
// its three layouts, and the other rows of format's type table) and F32/F16/BF16,
// keeping the ternary codes (convert.NewRequantPlan).
package requant

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/progress"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/summary"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/outname"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// Options are the parsed flags of requant.
type Options struct {
	In            string
	OutType       string
	OutFile       string
	FromLayout    string
	I2SLayout     string
	TokenEmbdType string
	OutputType    string
	AllowFallback bool
	KernelConfig  string
	DryRun        bool
	Force         bool
	Verbose       bool

	Stdout, Stderr   io.Writer
	StderrIsTerminal bool
	// Context is cancelled on Ctrl-C; nil installs signal handling.
	Context context.Context
}

// NewCmd returns the requant command. It only parses and checks flags; runF
// replaces Run in tests (nil: Run).
func NewCmd(runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "requant IN.gguf --outtype T [--outfile OUT.gguf] | requant IN.gguf [OUT.gguf] TYPE",
		Short: "Convert a ternary GGUF to another runtime's type (" + strings.ToUpper(convert.OutTypeList(", ")) + ")",
		Long: `Re-encode the ternary projections of a GGUF in another type, keeping every ternary code: ` + format.RuntimeList() + ` (I2_S in
x86, arm or x86-1x4 layout), or F32/F16/BF16. Scales are converted to the granularity the target needs (per tensor,
per row, per block); ` + strings.Join(format.F16ScaleTypeNames(), ", ") + ` store them as f16 (-v prints the rounding). The arch and its keys are renamed for the
target runtime. Tensors are streamed one at a time and the output is written atomically.
llama-quantize's positional form works too: "requant IN.gguf OUT.gguf TYPE" or "requant IN.gguf TYPE"
(the default output name), TYPE in either case (TQ2_0 or tq2_0).`,
		Args: func(cmd *cobra.Command, args []string) error {
			return positional(cmd, args, opts)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In = args[0]
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f, ok := opts.Stderr.(*os.File); ok {
				opts.StderrIsTerminal = term.IsTerminal(int(f.Fd()))
			}
			if opts.OutType == "" {
				return usage.Errorf("--outtype is required (%s)", strings.Join(outTypeNames(), ", "))
			}
			if _, err := convert.ParseOutType(opts.OutType); err != nil {
				return usage.Errorf("--outtype: %v", err)
			}
			for _, l := range []struct{ flag, v string }{{"--from-layout", opts.FromLayout}, {"--i2s-layout", opts.I2SLayout}} {
				if l.v == "" {
					continue
				}
				if _, err := format.ParseLayout(l.v); err != nil {
					return usage.Errorf("%s: %v", l.flag, err)
				}
			}
			if opts.I2SLayout != "" && !strings.EqualFold(opts.OutType, "i2_s") {
				return usage.Errorf("--i2s-layout applies to --outtype i2_s, not %s", opts.OutType)
			}
			for _, fl := range []struct{ name, v string }{{"--token-embedding-type", opts.TokenEmbdType}, {"--output-tensor-type", opts.OutputType}} {
				if fl.v == "" {
					continue
				}
				if _, err := convert.ParseFloatType(fl.v); err != nil {
					return usage.Errorf("%s: %v", fl.name, err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.OutType, "outtype", "", "output type: "+strings.Join(outTypeNames(), ", "))
	f.StringVar(&opts.OutFile, "outfile", "", "output path (default ./STEM-OUTTYPE.gguf: STEM is the input name without .gguf and a trailing -i2_s, -tq2_0, … suffix)")
	f.StringVar(&opts.FromLayout, "from-layout", "", flagx.FromLayoutUsage)
	f.StringVar(&opts.I2SLayout, "i2s-layout", "", "I2_S layout written for --outtype i2_s: x86 (default), arm, x86-1x4")
	f.StringVar(&opts.TokenEmbdType, "token-embedding-type", "", "retype token_embd: F32, F16, BF16, Q8_0, Q6_K (default: keep)")
	f.StringVar(&opts.OutputType, "output-tensor-type", "", "retype an untied output head: F32, F16, BF16, Q8_0, Q6_K (default: keep)")
	f.BoolVar(&opts.AllowFallback, "allow-fallback", false, "write projections whose rows do not fit the target type as F16 instead of failing")
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini of TL1/TL2 input or output (default: stored in the file / derived)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and write nothing; fails as the real run would (existing output without --force, missing directory)")
	f.BoolVar(&opts.Force, "force", false, "overwrite an existing output file")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "print one line per tensor, with the scale rounding")
	return cmd
}

// positional checks requant's arguments: IN alone (with --outtype), or
// llama-quantize's "IN [OUT] TYPE", whose OUT and TYPE fill --outfile and
// --outtype (giving both forms of one is a usage error). llama-quantize's
// trailing NTHREADS is refused: requant converts on one thread.
func positional(cmd *cobra.Command, args []string, opts *Options) error {
	isType := func(s string) bool { _, err := convert.ParseOutType(s); return err == nil }
	switch len(args) {
	case 0:
		return usage.Errorf("requant needs the input GGUF: requant IN.gguf --outtype T, or requant IN.gguf [OUT.gguf] TYPE")
	case 1:
		return nil
	case 2, 3:
	case 4:
		if isType(args[2]) {
			return usage.Errorf("requant IN OUT TYPE %s: requant has no thread count (it converts on one thread); drop %s", args[3], args[3])
		}
		fallthrough
	default:
		return usage.Errorf("requant takes the input GGUF, then optionally OUT.gguf and TYPE as llama-quantize does (got %d arguments: %q)", len(args), args)
	}
	typ := args[len(args)-1]
	if !isType(typ) {
		return usage.Errorf("requant %s: the last argument %q is not an output type (%s); llama-quantize's form is IN.gguf [OUT.gguf] TYPE", strings.Join(args, " "), typ, strings.Join(outTypeNames(), ", "))
	}
	if cmd.Flags().Changed("outtype") {
		return usage.Errorf("--outtype %s and the type argument %s: give the type once", opts.OutType, typ)
	}
	opts.OutType = typ
	if len(args) == 3 {
		if cmd.Flags().Changed("outfile") {
			return usage.Errorf("--outfile %s and the output argument %s: give the output once", opts.OutFile, args[1])
		}
		opts.OutFile = args[1]
	}
	return nil
}

func outTypeNames() []string {
	var s []string
	for _, t := range convert.OutTypes {
		s = append(s, string(t))
	}
	return s
}

// DefaultOutFile is ./<stem>-<outtype>.gguf, stem being the input's base
// name without ".gguf" and without a trailing "-<outtype>" of ours.
func DefaultOutFile(in string, out convert.OutType) string {
	stem := strings.TrimSuffix(filepath.Base(in), ".gguf")
	for _, t := range convert.OutTypes {
		stem = strings.TrimSuffix(stem, "-"+string(t))
	}
	return "./" + stem + "-" + string(out) + ".gguf"
}

// dryRunCheck makes the checks convert.RequantFile makes before writing out:
// out must not be the input file, and outname.Check (an existing directory,
// an existing output only with force).
func dryRunCheck(in, out string, force bool) error {
	if a, err := os.Stat(in); err == nil {
		if b, err := os.Stat(out); err == nil && os.SameFile(a, b) {
			return fmt.Errorf("output %s is the input file; choose another --outfile", out)
		}
	}
	return outname.Check(out, force)
}

// Run requantizes opts.In and prints the summary (or the plan with
// --dry-run) to opts.Stdout; warnings and -v lines go to opts.Stderr.
func Run(opts *Options) error {
	ctx := opts.Context
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = interrupt.NotifyContext(context.Background())
		defer stop()
	}
	if err := modelfile.CheckFromLayout(opts.In, opts.FromLayout); err != nil {
		return err
	}
	if err := modelfile.RefuseVocabOnly("requant", opts.In); err != nil {
		return err
	}
	outType, _ := convert.ParseOutType(opts.OutType)
	ropts := convert.RequantOptions{
		OutType:            outType,
		FromLayout:         format.Layout(strings.ToLower(opts.FromLayout)),
		I2SLayout:          format.Layout(strings.ToLower(opts.I2SLayout)),
		TokenEmbeddingType: opts.TokenEmbdType,
		OutputTensorType:   opts.OutputType,
		AllowFallback:      opts.AllowFallback,
		Verbose:            opts.Verbose,
		Log:                opts.Stderr,
		// refuse what run would refuse, before writing (H8)
		Check: func(p *convert.RequantPlan) error {
			return runtime.CheckFile(runtime.File{KVs: p.KVs, Tensors: p.OutputInfos()}, runtime.Options{TLKernels: p.Kernels})
		},
	}
	if opts.KernelConfig != "" {
		data, err := fsutil.ReadFile(opts.KernelConfig)
		if err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
		ropts.KernelConfig = data
	}
	out := opts.OutFile
	if out == "" {
		out = DefaultOutFile(opts.In, outType)
	} else {
		// The file name is a template as in hf2gguf: {ftype}, {outtype},
		// {FTYPE}, {OUTTYPE}, {} (defect H21 wrote "x-{ftype}.gguf").
		dir, base := filepath.Split(out)
		filled, err := outname.Fill(base, string(outType))
		if err != nil {
			return usage.Errorf("--outfile %s: %v", opts.OutFile, err)
		}
		out = dir + filled
	}
	if fsutil.SameFile(out, opts.KernelConfig) {
		// --force replaces an old output, never a file this run reads (H2).
		return fmt.Errorf("output %s is the --kernel-config file; give another path", out)
	}
	bar := progress.New(opts.Stderr, opts.StderrIsTerminal && !opts.DryRun, "requantizing")
	ropts.ProgressBytes = bar.StepBytes
	start := time.Now()
	plan, err := convert.RequantFile(ctx, opts.In, out, opts.Force, opts.DryRun, ropts)
	bar.Finish()
	if err != nil {
		// the notices (--allow-fallback tensors, relu² for llama.cpp)
		// describe a file that was not written: only the error is printed
		return err
	}
	summary.Notices(opts.Stderr, plan.Warnings)
	// Flags the plan did not use are said, not silently ignored (H18).
	hasOutput, tl := false, false
	for _, t := range plan.Tensors {
		hasOutput = hasOutput || t.In.Name == "output.weight"
		tl = tl || t.Type == gguf.TypeTL1 || t.Type == gguf.TypeTL2 || t.In.Type == gguf.TypeTL1 || t.In.Type == gguf.TypeTL2
	}
	if opts.OutputType != "" && !hasOutput {
		fmt.Fprintf(opts.Stderr, "bitnet-convert: --output-tensor-type has no effect: %s has no output.weight (the model is tied)\n", opts.In)
	}
	if opts.KernelConfig != "" && !tl {
		fmt.Fprintf(opts.Stderr, "bitnet-convert: --kernel-config has no effect: neither %s nor the output has TL1/TL2 tensors\n", opts.In)
	}
	types, sizes := make([]gguf.Type, len(plan.Tensors)), make([]uint64, len(plan.Tensors))
	for i, t := range plan.Tensors {
		types[i], sizes[i] = t.Type, t.Bytes
	}
	counts := summary.Counts(types, sizes)
	if opts.DryRun {
		fmt.Fprintf(opts.Stdout, "%s → %s: arch %s → %s (for %s), %d tensors\n", opts.In, out, plan.SrcArch, plan.Arch, plan.RuntimeLabel(), len(plan.Tensors))
		for _, t := range plan.Tensors {
			note := ""
			if t.Fallback != "" {
				note = " (fallback: " + t.Fallback + ")"
			}
			fmt.Fprintf(opts.Stdout, "%-32s %-7s → %-7s ne %v %d bytes%s\n", t.In.Name, t.In.Type, t.Type, t.Ne, t.Bytes, note)
		}
		_ = summary.Totals(opts.Stdout, counts)
		// The real run would fail here too (as hf2gguf --dry-run): say so
		// after the plan, exit 1.
		if err := dryRunCheck(opts.In, out, opts.Force); err != nil {
			return fmt.Errorf("the real run would fail: %w", err)
		}
		return nil
	}
	return summary.Write(opts.Stdout, summary.File{Path: out, Arch: plan.Arch, Runtime: plan.RuntimeLabel(), OutType: string(plan.OutType), Tensors: len(plan.Tensors), KVs: len(plan.KVs), Counts: counts, Took: time.Since(start)})
}
