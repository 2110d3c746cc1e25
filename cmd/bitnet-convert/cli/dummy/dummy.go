package dummy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/progress"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// listPresets is the value --preset takes when given without a name (cobra's
// NoOptDefVal); a name may then follow as the one positional argument.
const listPresets = "list"

// DummyOptions are the parsed flags of dummy.
type DummyOptions struct {
	// Preset is a preset name, or "" with ConfigFile, or listPresets.
	Preset string
	// ConfigFile is a config.json to generate from instead of a preset.
	ConfigFile string
	// Out is the output directory.
	Out string
	// Layers replaces num_hidden_layers when > 0.
	Layers int
	// Packed writes U8 codes + weight_scale; PackedSet says whether the flag
	// was given (otherwise the preset's own layout decides).
	Packed, PackedSet bool
	// LinearClass sets quantization_config.linear_class (with Packed).
	LinearClass string
	// GroupScaled writes dense F16 group-scaled ternary projections and no
	// quantization_config (dummy.Options.GroupScaled).
	GroupScaled bool
	// Tokenizer is a directory of tokenizer files to copy.
	Tokenizer string
	// Seed makes the weights.
	Seed uint64
	// MaxShardSize is the shard limit ("5GB", "500MB", bytes).
	MaxShardSize string
	// Force replaces a checkpoint already in Out.
	Force bool

	// Stdout receives the summary or the preset list (the command's
	// stdout).
	Stdout io.Writer
	// Stderr shows a per-tensor progress bar when StderrIsTerminal.
	Stderr           io.Writer
	StderrIsTerminal bool
	// Context is cancelled on Ctrl-C; nil means one with signal handling.
	Context context.Context
}

// NewCmdDummy returns the dummy command. It only parses flags; runF replaces
// dummyRun in tests (nil: dummyRun).
func NewCmdDummy(runF func(*DummyOptions) error) *cobra.Command {
	opts := &DummyOptions{}
	cmd := &cobra.Command{
		Use:   "dummy (--preset NAME | --config FILE) --out DIR",
		Short: "Write a Hugging Face checkpoint of a real model's shape with seeded random weights",
		Long: `Write a Hugging Face checkpoint directory (config.json, safetensors, tokenizer files) in the exact
layout of a real BitNet model, with seeded random weights: bf16 master weights, or with --packed U8
ternary codes [out/4, in] plus a bf16 0-d weight_scale, as the 2B-4T, Falcon3 and Llama3-8B-1.58
checkpoints ship, or with --group-scaled dense F16 projections that are ternary times one scale per 128
inputs and no quantization_config (the Ternary Bonsai -unpacked layout). Checkpoints larger than --max-shard-size are split into model-0000i-of-0000N
shards with an index. Without --tokenizer no tokenizer files are written (convert with --no-vocab).
--preset without a name lists the presets. Data streams to disk; memory stays small. Before writing,
the checkpoint size is checked against the free space of --out's filesystem (with a 5% margin) and
shapes over 2^40 elements are refused; an interrupted or failed run removes what it wrote.`,
		Example: `  bitnet-convert dummy --preset
  bitnet-convert dummy --preset BitNet-b1.58-2B-4T --layers 2 --tokenizer testdata/tokenizers/llama3 --out /tmp/2b4t
  bitnet-convert dummy --config config.json --packed --linear-class bitlinear --out /tmp/m`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && opts.Preset == listPresets {
				return nil // --preset NAME with NoOptDefVal: NAME arrives as an argument
			}
			if len(args) != 0 {
				return usage.Errorf("dummy takes no arguments (got %q); give the model with --preset NAME or --config FILE", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Preset = args[0]
			}
			if cmd.Flags().Changed("layers") && opts.Layers <= 0 {
				return usage.Errorf("--layers %d: want a positive number of layers", opts.Layers)
			}
			opts.PackedSet = cmd.Flags().Changed("packed")
			opts.Stdout = cmd.OutOrStdout()
			opts.Stderr = cmd.ErrOrStderr()
			opts.StderrIsTerminal = progress.IsTerminal(opts.Stderr)
			if runF != nil {
				return runF(opts)
			}
			return dummyRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Preset, "preset", "", "preset model name (without a name: list the presets)")
	f.Lookup("preset").NoOptDefVal = listPresets
	f.StringVar(&opts.ConfigFile, "config", "", "config.json to generate from instead of a preset")
	f.StringVar(&opts.Out, "out", "", "output directory (created if missing)")
	f.IntVar(&opts.Layers, "layers", 0, "number of layers (default: the config's num_hidden_layers)")
	f.BoolVar(&opts.Packed, "packed", false, "write packed U8 projections + weight_scale (default: as the real checkpoint)")
	f.StringVar(&opts.LinearClass, "linear-class", "", "with --packed: quantization_config.linear_class, autobitlinear (scale multiplies) or bitlinear (divides)")
	f.BoolVar(&opts.GroupScaled, "group-scaled", false, "write dense F16 projections that are ternary times one scale per 128 inputs, with no quantization_config (Ternary Bonsai -unpacked layout; hf2gguf converts them exactly to --outtype q2_0)")
	f.StringVar(&opts.Tokenizer, "tokenizer", "", "directory of tokenizer files to copy (.gz files are decompressed)")
	f.Uint64Var(&opts.Seed, "seed", 1, "random seed; the same seed gives the same bytes")
	f.StringVar(&opts.MaxShardSize, "max-shard-size", "5GB", "split safetensors larger than this into shards (bytes, or with KB/MB/GB, decimal as Hugging Face counts)")
	f.BoolVar(&opts.Force, "force", false, "replace a checkpoint already in --out")
	_ = cmd.RegisterFlagCompletionFunc("preset", cobra.FixedCompletions(presets.Names(), cobra.ShellCompDirectiveNoFileComp))
	// "--preset NAME": the flag takes no value without "=", so NAME is the
	// positional argument; complete it with the preset names.
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if opts.Preset == listPresets && len(args) == 0 {
			return presets.Names(), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	_ = cmd.MarkFlagDirname("tokenizer")
	return cmd
}

// shardUnits are the --max-shard-size suffixes (decimal, as transformers'
// max_shard_size; the binary ones for completeness).
var shardUnits = []struct {
	suffix string
	mult   uint64
}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// ParseSize parses a byte count such as "5GB", "500MB", "2GiB" or "1000000".
func ParseSize(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range shardUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n == 0 || n > (1<<63)/mult {
		return 0, fmt.Errorf("%q is not a positive size (examples: 5GB, 500MB, 1000000)", s)
	}
	return n * mult, nil
}

// dummyRun validates the options, generates the checkpoint and prints a
// summary (or the preset list).
func dummyRun(opts *DummyOptions) error {
	if opts.Preset == listPresets {
		if opts.ConfigFile != "" {
			return usage.Errorf("--preset without a name lists the presets; it cannot be combined with --config")
		}
		return printPresets(opts.Stdout)
	}
	if (opts.Preset == "") == (opts.ConfigFile == "") {
		return usage.Errorf("give exactly one of --preset NAME or --config FILE (--preset alone lists the presets)")
	}
	if opts.Out == "" {
		return usage.Errorf("--out DIR is required")
	}
	if opts.Layers < 0 {
		return usage.Errorf("--layers %d: want a positive number of layers", opts.Layers)
	}
	if opts.LinearClass != "" && opts.LinearClass != dummy.AutoBitLinear && opts.LinearClass != dummy.BitLinear {
		return usage.Errorf("--linear-class %q: want %s or %s", opts.LinearClass, dummy.AutoBitLinear, dummy.BitLinear)
	}
	shard, err := ParseSize(opts.MaxShardSize)
	if err != nil {
		return usage.Errorf("--max-shard-size: %v", err)
	}
	gopts := dummy.Options{Layers: opts.Layers, LinearClass: opts.LinearClass, Tokenizer: opts.Tokenizer,
		Seed: opts.Seed, MaxShardBytes: shard, Force: opts.Force, Packed: opts.Packed}
	source := ""
	if opts.Preset != "" {
		m, err := presets.Get(opts.Preset)
		if err != nil {
			return usage.Errorf("--preset: %v", err)
		}
		gopts.Config = m.Config
		if !opts.PackedSet && !opts.GroupScaled {
			gopts.Packed = m.Packed
		}
		source = "preset " + m.Name
	} else {
		cfg, err := readConfig(opts.ConfigFile)
		if err != nil {
			return err
		}
		gopts.Config = cfg
		source = opts.ConfigFile
	}
	if opts.LinearClass != "" && !gopts.Packed {
		return usage.Errorf("--linear-class %s needs packed weights: add --packed", opts.LinearClass)
	}
	if opts.GroupScaled && gopts.Packed {
		return usage.Errorf("--group-scaled writes dense F16 weights: not with --packed")
	}
	gopts.GroupScaled = opts.GroupScaled
	ctx := opts.Context
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = interrupt.NotifyContext(context.Background())
		defer stop()
	}
	bar := progress.New(opts.Stderr, opts.StderrIsTerminal, "writing")
	gopts.Progress = bar.Step
	res, err := dummy.Generate(ctx, opts.Out, gopts)
	bar.Finish()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; the files written to %s were removed", opts.Out)
		}
		if errors.Is(err, dummy.ErrExists) {
			return err
		}
		return fmt.Errorf("dummy %s: %w", source, err)
	}
	layout := "bf16 master weights"
	hint := ""
	switch {
	case gopts.Packed:
		layout = "packed U8 + weight_scale"
	case gopts.GroupScaled:
		layout = "F16 group-scaled ternary (one scale per 128 inputs)"
		hint = " --outtype q2_0"
	}
	g, _ := dummy.ReadGeometry(res.Config)
	fmt.Fprintf(opts.Stdout, "wrote %s: %s, %d layer(s), %s, %d tensors, %d bytes in %d file(s), seed %d\n",
		opts.Out, source, g.Layers, layout, len(res.Tensors), res.Bytes, len(res.Files), opts.Seed)
	if err := convertible(res.Config, gopts.GroupScaled); err != nil {
		// No hint that cannot work (defect D21).
		fmt.Fprintf(opts.Stdout, "not convertible yet: %v\n", err)
	} else if len(res.TokenizerFiles) == 0 {
		fmt.Fprintf(opts.Stdout, "no tokenizer files: convert with `bitnet-convert hf2gguf %s --no-vocab%s`\n", opts.Out, hint)
	} else if hint != "" {
		fmt.Fprintf(opts.Stdout, "convert with `bitnet-convert hf2gguf %s%s`\n", opts.Out, hint)
	}
	if len(res.TokenizerFiles) > 0 {
		fmt.Fprintf(opts.Stdout, "tokenizer: %s\n", strings.Join(res.TokenizerFiles, ", "))
	}
	return nil
}

// readConfig parses a config.json file into a map. A FIFO, device or
// directory is refused before it is opened (fsutil.ReadFile), so a named
// pipe nobody writes to cannot block the command.
func readConfig(path string) (map[string]any, error) {
	b, err := fsutil.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("--config %s: not a JSON object: %v", path, err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("--config %s: not a JSON object", path)
	}
	return cfg, nil
}

// printPresets lists every preset with its architecture, shapes and size:
// PARAMS counts the model's weights (a packed U8 byte holds four ternary
// codes), SIZE the bytes of the safetensors dummy writes for all its layers
// (decimal units, as the Hub shows file sizes).
func printPresets(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARCHITECTURE\tLAYERS\tHIDDEN\tFFN\tVOCAB\tPARAMS\tSIZE\tWEIGHTS\tTOKENIZER\tHF REPO")
	for _, m := range presets.All() {
		arch, _ := dummy.Architecture(m.Config)
		g, err := dummy.ReadGeometry(m.Config)
		if err != nil {
			return fmt.Errorf("preset %s: %w", m.Name, err)
		}
		weights := "bf16"
		if m.Packed {
			weights = "packed U8"
		}
		tok := m.Tokenizer
		if tok == "" {
			tok = "-"
		}
		ts, err := dummy.Layout(m.Config, m.Packed)
		if err != nil {
			return fmt.Errorf("preset %s: %w", m.Name, err)
		}
		var params, size uint64
		for _, t := range ts {
			n := uint64(1)
			for _, d := range t.Shape {
				n *= d
			}
			if t.DType == hf.U8 {
				n *= 4
			}
			params += n
			size += t.Bytes()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", m.Name, arch, g.Layers, g.Hidden, g.FF, g.Vocab, decimal(params, [3]string{"B", "M", "K"}), decimal(size, [3]string{" GB", " MB", " kB"}), weights, tok, m.HFRepo)
	}
	return tw.Flush()
}

// decimal formats n with the largest of the prefixes (value, suffix)
// that it reaches, two decimals: {1e9 "B"} gives "2.41B" parameters,
// {1e9 " GB"} "1.18 GB".
func decimal(n uint64, units [3]string) string {
	f := float64(n)
	for i, v := range []float64{1e9, 1e6, 1e3} {
		if f >= v {
			return fmt.Sprintf("%.2f%s", f/v, units[i])
		}
	}
	return fmt.Sprint(n)
}

// convertible reports hf2gguf's refusal of the architecture of cfg, if any
// (for a group-scaled checkpoint: whether the architecture takes dense
// group-scaled checkpoints).
func convertible(cfg map[string]any, groupScaled bool) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil
	}
	hc, err := hf.ParseConfig(b, "config.json")
	if err != nil {
		return nil
	}
	if groupScaled {
		return convert.ConvertibleGroupScaled(hc)
	}
	return convert.Convertible(hc)
}
