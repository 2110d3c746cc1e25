// Package gguf2hf is the `bitnet-convert gguf2hf FILE.gguf --out DIR`
// command: a ternary GGUF → a Hugging Face checkpoint in the layout
// transformers' BitNet integration (and mlx-lm's bitnet model) loads
// (hfexport.Export).
package gguf2hf

import (
	"context"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/summary"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hfexport"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// Options are the parsed flags of gguf2hf.
type Options struct {
	In, Out      string
	DType        string
	MaxShardSize uint64
	FromLayout   string
	KernelConfig string
	Force        bool
	Threads      int

	Stdout, Stderr   io.Writer
	StderrIsTerminal bool
	// Context is cancelled on Ctrl-C; nil installs signal handling
	// (interrupt.NotifyContext: Ctrl-C, SIGTERM, SIGHUP).
	Context context.Context
}

// NewCmd returns the gguf2hf command. It only parses and checks flags; runF
// replaces Run in tests (nil: Run).
func NewCmd(runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	var shard string
	cmd := &cobra.Command{
		Use:   "gguf2hf FILE.gguf --out DIR",
		Short: "Export a ternary GGUF as a Hugging Face checkpoint (packed U8 + weight_scale, for transformers, MLX, vLLM)",
		Long: `Write a Hugging Face checkpoint from a ternary GGUF (I2_S of any layout, TL1/TL2, TQ1_0/TQ2_0, IQ1_BN/IQ2_BN,
or an F32/F16/BF16 file of a ternary model) in the layout of microsoft/bitnet-b1.58-2B-4T: projections packed as
transformers' pack_weights packs them (U8 [out/4, in]) with a 0-d weight_scale, quantization_config
{bitnet, autobitlinear, offline}, norms and embeddings in BF16 (--dtype f32 keeps every value exact), config.json,
generation_config.json and the tokenizer files rebuilt from the GGUF. Sharded above --max-shard-size. The directory
appears complete or not at all.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usage.Errorf("gguf2hf takes exactly one argument, the input GGUF (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In = args[0]
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f, ok := opts.Stderr.(*os.File); ok {
				opts.StderrIsTerminal = term.IsTerminal(int(f.Fd()))
			}
			if opts.Out == "" {
				return usage.Errorf("--out DIR is required (the checkpoint directory to create)")
			}
			switch strings.ToLower(opts.DType) {
			case "bf16", "f32":
			default:
				return usage.Errorf("--dtype %q: want bf16 or f32", opts.DType)
			}
			n, err := ParseSize(shard)
			if err != nil {
				return usage.Errorf("--max-shard-size: %v", err)
			}
			opts.MaxShardSize = n
			if opts.FromLayout != "" {
				if _, err := format.ParseLayout(opts.FromLayout); err != nil {
					return usage.Errorf("--from-layout: %v", err)
				}
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
	f.StringVar(&opts.Out, "out", "", "checkpoint directory to create (must not exist unless --force)")
	f.StringVar(&opts.DType, "dtype", "bf16", "dtype of norms, embeddings, head and weight scales: bf16 (as 2B-4T) or f32 (exact)")
	f.StringVar(&shard, "max-shard-size", "5GB", "largest safetensors shard, transformers' notation (5GB = 5·10⁹ bytes, 2GiB, 500MB, or bytes)")
	f.StringVar(&opts.FromLayout, "from-layout", "", flagx.FromLayoutUsage)
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini of a TL1/TL2 input (default: the one stored in the file)")
	f.BoolVar(&opts.Force, "force", false, "replace an existing output directory")
	flagx.ThreadsVar(f, &opts.Threads)
	return cmd
}

// ParseSize reads a size as transformers' convert_file_size_to_int does:
// an integer of bytes, or a number with KB/MB/GB (powers of 10), KiB/MiB/GiB
// (powers of 2), or Kb/Mb/Gb (bits, powers of 10, divided by 8).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		if n == 0 {
			return 0, fmt.Errorf("%q: want a positive size", s)
		}
		return n, nil
	}
	units := []struct {
		suf  string
		mult float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"Gb", 1e9 / 8}, {"Mb", 1e6 / 8}, {"Kb", 1e3 / 8}}
	for _, u := range units {
		num, ok := strings.CutSuffix(t, u.suf)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || v <= 0 || v*u.mult >= 1<<63 {
			return 0, fmt.Errorf("%q: want a positive number before %s", s, u.suf)
		}
		return uint64(v * u.mult), nil
	}
	return 0, fmt.Errorf("%q: want bytes or a size such as 5GB, 2GiB, 500MB", s)
}

// Run exports opts.In to opts.Out and prints a summary line to opts.Stdout
// (warnings to opts.Stderr).
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
	eo := hfexport.Options{
		DType:        opts.DType,
		MaxShardSize: opts.MaxShardSize,
		FromLayout:   format.Layout(strings.ToLower(opts.FromLayout)),
		Force:        opts.Force,
		Threads:      opts.Threads,
	}
	if eo.Threads == 0 {
		eo.Threads = max(1, runtimeThreads())
	}
	if opts.KernelConfig != "" {
		data, err := fsutil.ReadFile(opts.KernelConfig)
		if err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
		eo.KernelConfig = data
	}
	var bar *progressbar.ProgressBar
	if opts.StderrIsTerminal {
		eo.Progress = func(done, total int, tensor string) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(opts.Stderr), progressbar.OptionSetDescription("exporting"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			}
			bar.Describe(tensor)
			_ = bar.Add(1)
		}
	}
	start := time.Now()
	p, err := hfexport.Export(ctx, opts.In, opts.Out, eo)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	summary.Notices(opts.Stderr, p.Warnings)
	packed := 0
	for _, t := range p.Tensors {
		if t.DType == "U8" {
			packed++
		}
	}
	fmt.Fprintf(opts.Stdout, "wrote %s: %s (model_type %s) from arch %s, %d tensors (%d packed projections), %d shard(s), %d bytes of tensor data in %.2fs\n",
		opts.Out, p.Class, p.ModelType, p.Arch, len(p.Tensors), packed, len(p.Shards), p.TotalBytes(), time.Since(start).Seconds())
	return nil
}

// runtimeThreads is the decode thread count for --threads 0.
func runtimeThreads() int { return goruntime.GOMAXPROCS(0) }
