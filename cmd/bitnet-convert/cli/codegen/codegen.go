package codegen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	cg "github.com/bitnet-convert/bitnet-convert/codegen"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// CodegenOptions are the parsed arguments of codegen.
type CodegenOptions struct {
	// Arch is "tl1" or "tl2"; empty means the host default (DefaultArch).
	Arch string
	// Model is a preset name (exclusive with FromConfig).
	Model string
	// FromConfig is a config.json file or a directory holding one
	// (exclusive with Model).
	FromConfig string
	// BM, BK, Bm are the raw comma lists of --BM, --BK, --bm ("" = not given).
	BM, BK, Bm string
	// OutDir receives include/ (default ".").
	OutDir string
	// GOARCH picks the default arch; empty means runtime.GOARCH.
	GOARCH string
	// Out receives the summary (the command's stdout).
	Out io.Writer
}

// DefaultArch returns the arch bitnet.cpp's setup_env.py generates for a Go
// GOARCH: tl1 on arm64, tl2 on everything else (spec codegen.md §1.3).
func DefaultArch(goarch string) string {
	if goarch == "arm64" {
		return format.TL1Arch
	}
	return format.TL2Arch
}

// NewCmdCodegen returns the codegen command. It only parses flags; runF
// replaces the real run in tests (nil: codegenRun).
func NewCmdCodegen(runF func(*CodegenOptions) error) *cobra.Command {
	opts := &CodegenOptions{}
	cmd := &cobra.Command{
		Use:   "codegen [--arch tl1|tl2] (--model NAME | --from-config DIR|config.json) [--BM a,b,... --BK ... --bm ...] [--outdir DIR]",
		Short: "Generate bitnet.cpp's TL1/TL2 LUT kernel header and kernel_config.ini",
		Long: `Write include/bitnet-lut-kernels.h and include/kernel_config.ini under --outdir for the TL1 (ARM)
or TL2 (x86 AVX2) lookup-table kernels. The shapes come from a preset (--model) or a config.json
(--from-config). BM/BK/bm default to the preset's setup_env values, or to the documented rule of
the codegen package. Every tiling rule is checked before anything is written. Existing files under
--outdir/include are replaced, as bitnet.cpp's codegen_tl1.py/codegen_tl2.py replace them.

Presets (--model): ` + strings.Join(TLPresets(), ", ") + ` (the embedding models have no TL files, so no TL kernels).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usage.Errorf("codegen takes no arguments (got %q); use --model or --from-config", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			if runF != nil {
				return runF(opts)
			}
			return codegenRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Arch, "arch", "", "tl1 (ARM) or tl2 (x86); default: tl1 on arm64, tl2 elsewhere")
	f.StringVar(&opts.Model, "model", "", "preset model name (listed above; bitnet-convert dummy --preset shows their shapes), e.g. bitnet_b1_58-large")
	f.StringVar(&opts.FromConfig, "from-config", "", "config.json, or a directory holding one, to derive the shapes from")
	f.StringVar(&opts.BM, "BM", "", "comma list, one per shape: rows per tile")
	f.StringVar(&opts.BK, "BK", "", "comma list, one per shape: K columns per block")
	f.StringVar(&opts.Bm, "bm", "", "comma list, one per shape: rows per compute block (TL1 32|64, TL2 32)")
	f.StringVar(&opts.OutDir, "outdir", ".", "directory that receives include/")
	_ = cmd.RegisterFlagCompletionFunc("model", cobra.FixedCompletions(TLPresets(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("arch", cobra.FixedCompletions([]string{"tl1", "tl2"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagDirname("outdir")
	return cmd
}

// parseList parses a comma list of ints, tolerating spaces around items.
func parseList(flag, s string) ([]int, error) {
	var out []int
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, usage.Errorf("--%s %q: item %d is empty; give comma-separated integers", flag, s, i+1)
		}
		n, err := strconv.Atoi(item)
		if err != nil {
			return nil, usage.Errorf("--%s %q: item %d (%q) is not an integer", flag, s, i+1, item)
		}
		out = append(out, n)
	}
	return out, nil
}

// kernelSet resolves the shapes and tilings of opts for arch.
func kernelSet(opts *CodegenOptions, arch string) (ks []format.Kernel, source string, err error) {
	var (
		shapes   [][2]int
		defaults func() ([]format.Kernel, error)
	)
	switch {
	case opts.Model != "" && opts.FromConfig != "":
		return nil, "", usage.Errorf("give either --model or --from-config, not both")
	case opts.Model != "":
		m, err := presets.Get(opts.Model)
		if err != nil {
			return nil, "", usage.Errorf("--model: %v", err)
		}
		if err := checkConvertible(m.Config, "preset "+m.Name, arch); err != nil {
			return nil, "", err
		}
		if k, ok := m.Codegen[arch]; ok {
			shapes = k.Shapes
			defaults = func() ([]format.Kernel, error) { return format.Kernels(k.Shapes, k.BM, k.BK, k.Bm) }
			source = fmt.Sprintf("preset %s (setup_env.py %s table)", m.Name, arch)
		} else {
			if shapes, err = format.ShapesFromConfig(m.Config); err != nil {
				return nil, "", fmt.Errorf("preset %s: %w", m.Name, err)
			}
			source = fmt.Sprintf("preset %s (shapes derived from its config)", m.Name)
		}
	case opts.FromConfig != "":
		// A directory holding config.json, or the config.json file itself
		// (as dummy --config takes it).
		cfgPath := filepath.Join(opts.FromConfig, "config.json")
		if fi, err := os.Stat(opts.FromConfig); err == nil && !fi.IsDir() {
			cfgPath = opts.FromConfig
		}
		cfg, err := format.ReadConfigFile(cfgPath)
		if err != nil {
			return nil, "", fmt.Errorf("--from-config: %w", err)
		}
		if err := checkConvertible(cfg, cfgPath, arch); err != nil {
			return nil, "", err
		}
		if shapes, err = format.ShapesFromConfig(cfg); err != nil {
			return nil, "", fmt.Errorf("%s: %w", cfgPath, err)
		}
		source = "shapes derived from " + cfgPath
		if m, k, ok := presets.TilingFor(arch, shapes); ok {
			// The shapes of a known model: setup_env.py's tiling, as
			// hf2gguf uses for such a checkpoint (defect D7).
			shapes = k.Shapes
			defaults = func() ([]format.Kernel, error) { return format.Kernels(k.Shapes, k.BM, k.BK, k.Bm) }
			source += fmt.Sprintf(", tiling of preset %s (setup_env.py %s table)", m.Name, arch)
		}
	default:
		return nil, "", usage.Errorf("give --model NAME or --from-config DIR")
	}
	if defaults == nil {
		defaults = func() ([]format.Kernel, error) { return format.ConfigFor(arch, shapes) }
	}
	given := 0
	for _, s := range []string{opts.BM, opts.BK, opts.Bm} {
		if s != "" {
			given++
		}
	}
	switch given {
	case 0:
		ks, err = defaults()
	case 3:
		var lists [3][]int
		for i, f := range []struct{ name, v string }{{"BM", opts.BM}, {"BK", opts.BK}, {"bm", opts.Bm}} {
			if lists[i], err = parseList(f.name, f.v); err != nil {
				return nil, "", err
			}
		}
		ks, err = format.Kernels(shapes, lists[0], lists[1], lists[2])
		if err != nil {
			return nil, "", usage.Errorf("%v", err)
		}
		source += ", tiling from --BM/--BK/--bm"
	default:
		return nil, "", usage.Errorf("give all of --BM, --BK and --bm, or none of them")
	}
	if err != nil {
		var se *format.ShapeError
		var ve *format.ValidationError
		if errors.As(err, &se) || errors.As(err, &ve) {
			return nil, "", &usage.Error{Err: err}
		}
		return nil, "", err
	}
	return ks, source, nil
}

// checkConvertible refuses kernels for a model whose converter refuses the
// TL outtype arch (the embedding models): hf2gguf could never write a file
// that runs on them. what names the config in the message.
// TLPresets returns the names of the presets codegen --model accepts: those
// hf2gguf converts to TL1/TL2 (checkConvertible), in presets.Names' order.
func TLPresets() []string {
	var names []string
	for _, n := range presets.Names() {
		if m, err := presets.Get(n); err == nil && checkConvertible(m.Config, n, "tl2") == nil && checkConvertible(m.Config, n, "tl1") == nil {
			names = append(names, n)
		}
	}
	return names
}

func checkConvertible(cfg map[string]any, what, arch string) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	hc, err := hf.ParseConfig(data, what)
	if err != nil {
		return err
	}
	if err := convert.CheckOutType(hc, convert.OutType(arch)); err != nil {
		return fmt.Errorf("%s: no %s kernels: hf2gguf refuses this model (%w)", what, arch, err)
	}
	return nil
}

// codegenRun validates everything, then writes both files atomically.
func codegenRun(opts *CodegenOptions) error {
	arch := opts.Arch
	if arch == "" {
		goarch := opts.GOARCH
		if goarch == "" {
			goarch = runtime.GOARCH
		}
		arch = DefaultArch(goarch)
	}
	if err := format.CheckArch(arch); err != nil {
		return usage.Errorf("--arch: %v", err)
	}
	if opts.OutDir == "" {
		return usage.Errorf("--outdir is empty")
	}
	ks, source, err := kernelSet(opts, arch)
	if err != nil {
		return err
	}
	if err := format.Validate(arch, ks); err != nil {
		return &usage.Error{Err: err}
	}
	if err := cg.Generate(arch, ks, opts.OutDir); err != nil {
		return err
	}
	w := opts.Out
	if w == nil {
		w = io.Discard
	}
	fmt.Fprintf(w, "%s kernels, %s:\n", strings.ToUpper(arch), source)
	for i, k := range ks {
		fmt.Fprintf(w, "  kernel %d: M=%d K=%d BM=%d BK=%d bm=%d", i, k.M, k.K, k.BM, k.BK, k.Bm)
		if arch == format.TL2Arch {
			fmt.Fprintf(w, " three_k=%d two_k=%d", k.ThreeK(), k.TwoK())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "wrote %s\nwrote %s\n", filepath.Join(opts.OutDir, cg.HeaderPath), filepath.Join(opts.OutDir, cg.ConfigPath))
	return nil
}
