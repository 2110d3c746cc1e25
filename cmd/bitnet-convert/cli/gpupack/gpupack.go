// Package gpupack is the `bitnet-convert gpu-pack IN --out DIR` command:
// bitnet.cpp's GPU checkpoints model_state_fp16.pt and model_state_int2.pt
// (package gpupack) from a Hugging Face checkpoint directory or a ternary
// GGUF, without Python.
package gpupack

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gpupack"
)

// Options are the parsed flags of gpu-pack.
type Options struct {
	In                    string
	Out                   string
	ScaleLayout           string
	AllowUnsupportedShape bool
	Force                 bool
	Threads               int
	Verbose               bool

	Stdout, Stderr io.Writer
	// Context is cancelled on Ctrl-C; nil installs signal handling.
	Context context.Context
}

// NewCmd returns the gpu-pack command. It only parses and checks flags; runF
// replaces Run in tests (nil: Run).
func NewCmd(runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "gpu-pack IN --out DIR",
		Short: "Write bitnet.cpp's GPU checkpoints (model_state_fp16.pt, model_state_int2.pt) from a checkpoint or GGUF",
		Long: `Write the two PyTorch checkpoints bitnet.cpp's GPU path (microsoft/BitNet gpu/generate.py) loads:
model_state_fp16.pt (bf16 weights for prefill) and model_state_int2.pt (2-bit codes in the W2A8 kernel's
tile order plus a bf16 weight_scale per fused matrix, for decode). IN is a Hugging Face checkpoint directory
(bf16 master weights, ternarized exactly as gpu/convert_checkpoint.py does, or packed ternary weights) or a
ternary GGUF (codes kept, scales rounded once to bf16). Matrix shapes main's kernel has no dispatch for are
refused unless --allow-unsupported-shape. --gpu-scale-layout pr316 writes the 6-entry weight_scale of
microsoft/BitNet PR #316, whose kernel scales the fused q/k/v rows correctly (main's does not).`,
		Example: `  bitnet-convert gpu-pack ./bitnet-b1.58-2B-4T-bf16 --out ./checkpoints
  bitnet-convert gpu-pack model-i2_s.gguf --out ./checkpoints --gpu-scale-layout pr316`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usage.Errorf("gpu-pack takes exactly one argument, the checkpoint directory or GGUF (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In = args[0]
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if opts.Out == "" {
				return usage.Errorf("--out DIR is required")
			}
			if _, err := gpupack.ParseScaleLayout(opts.ScaleLayout); err != nil {
				return usage.Errorf("--gpu-scale-layout: %v", err)
			}
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "output directory (created when missing) for model_state_fp16.pt and model_state_int2.pt")
	f.StringVar(&opts.ScaleLayout, "gpu-scale-layout", "main", "weight_scale layout: main (4 entries, loads in main's model.py) or pr316 (6 entries, PR #316's fixed kernel)")
	f.BoolVar(&opts.AllowUnsupportedShape, "allow-unsupported-shape", false, "write matrices whose (N, K) main's kernel does not dispatch (for a kernel built for them)")
	f.BoolVar(&opts.Force, "force", false, "overwrite existing output files")
	flagx.ThreadsVar(f, &opts.Threads)
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "print one line per tensor written")
	return cmd
}

// Run packs opts.In and prints a summary to opts.Stdout; notices go to
// opts.Stderr.
func Run(opts *Options) error {
	ctx := opts.Context
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = interrupt.NotifyContext(context.Background())
		defer stop()
	}
	layout, _ := gpupack.ParseScaleLayout(opts.ScaleLayout)
	po := gpupack.Options{ScaleLayout: layout, AllowUnsupportedShape: opts.AllowUnsupportedShape, Force: opts.Force, Threads: flagx.Threads(opts.Threads)}
	if opts.Verbose {
		po.Progress = func(file, tensor string) { fmt.Fprintf(opts.Stderr, "%s: %s\n", file, tensor) }
	}
	start := time.Now()
	rep, err := gpupack.Pack(ctx, opts.In, opts.Out, po)
	if err != nil {
		return err
	}
	for _, n := range rep.Notices {
		fmt.Fprintf(opts.Stderr, "bitnet-convert: notice: %s\n", n)
	}
	for i, f := range rep.Files {
		fmt.Fprintf(opts.Stdout, "wrote %s: %d tensors, %d bytes\n", f, rep.Tensors[i], rep.Bytes[i])
	}
	fmt.Fprintf(opts.Stdout, "arch %s, %d layers, weight_scale layout %s, in %.2fs\n", rep.Arch, rep.Layers, layout, time.Since(start).Seconds())
	return nil
}
