// Package requant is the `bitnet-convert requant IN.gguf --outtype T`
// command: GGUF → GGUF between the ternary types of every runtime (I2_S in
// its three layouts, TL1, TL2, TQ1_0, TQ2_0, IQ1_BN, IQ2_BN) and F32/F16/BF16,
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

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/internal/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/outname"
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
		Use:   "requant IN.gguf --outtype T",
		Short: "Convert a ternary GGUF to another runtime's type (I2_S, TL1, TL2, TQ1_0, TQ2_0, IQ1_BN, IQ2_BN, F32, F16, BF16)",
		Long: `Re-encode the ternary projections of a GGUF in another type, keeping every ternary code: bitnet.cpp's
I2_S (x86, arm or x86-1x4 layout), TL1, TL2; mainline llama.cpp's TQ1_0, TQ2_0; ik_llama.cpp's IQ1_BN, IQ2_BN;
or F32/F16/BF16. Scales are converted to the granularity the target needs (per tensor, per row, per 256-block);
TQ1_0, TQ2_0 and IQ1_BN store them as f16 (-v prints the rounding). The arch and its keys are renamed for the
target runtime. Tensors are streamed one at a time and the output is written atomically.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usage.Errorf("requant takes exactly one argument, the input GGUF (got %d)", len(args))
			}
			return nil
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
	var bar *progressbar.ProgressBar
	if opts.StderrIsTerminal && !opts.DryRun {
		ropts.Progress = func(done, total int, tensor string) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(opts.Stderr), progressbar.OptionSetDescription("requantizing"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			}
			bar.Describe(tensor)
			_ = bar.Add(1)
		}
	}
	start := time.Now()
	plan, err := convert.RequantFile(ctx, opts.In, out, opts.Force, opts.DryRun, ropts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		// the notices (--allow-fallback tensors, relu² for llama.cpp)
		// describe a file that was not written: only the error is printed
		return err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(opts.Stderr, "bitnet-convert: %s\n", w)
	}
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
	counts := map[string]int{}
	var order []string
	for _, t := range plan.Tensors {
		k := t.Type.String()
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	if opts.DryRun {
		fmt.Fprintf(opts.Stdout, "%s → %s: arch %s → %s (for %s), %d tensors\n", opts.In, out, plan.SrcArch, plan.Arch, plan.Runtime, len(plan.Tensors))
		for _, t := range plan.Tensors {
			note := ""
			if t.Fallback != "" {
				note = " (fallback: " + t.Fallback + ")"
			}
			fmt.Fprintf(opts.Stdout, "%-32s %-7s → %-7s ne %v %d bytes%s\n", t.In.Name, t.In.Type, t.Type, t.Ne, t.Bytes, note)
		}
		fmt.Fprintf(opts.Stdout, "tensors: %s; data %d bytes\n", strings.Join(parts, ", "), plan.TotalBytes())
		// The real run would fail here too (as hf2gguf --dry-run): say so
		// after the plan, exit 1.
		if err := dryRunCheck(opts.In, out, opts.Force); err != nil {
			return fmt.Errorf("the real run would fail: %w", err)
		}
		return nil
	}
	fmt.Fprintf(opts.Stdout, "wrote %s: arch %s (for %s), outtype %s, %d tensors (%s), %d bytes of data in %.2fs\n", out, plan.Arch, plan.Runtime, plan.OutType, len(plan.Tensors), strings.Join(parts, ", "), plan.TotalBytes(), time.Since(start).Seconds())
	return nil
}
