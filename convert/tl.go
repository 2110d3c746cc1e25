package convert

import (
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/presets"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// tlKernels returns the TL1/TL2 tiling for the plan's projections: parsed
// from --kernel-config when given (and validated), else derived from the
// shapes exactly as `codegen --from-config` derives it (format.ConfigFor).
func tlKernels(p *Plan, opts Options) ([]format.Kernel, error) {
	arch := string(p.OutType)
	var ks []format.Kernel
	if opts.KernelConfig != nil {
		var err error
		ks, err = format.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		if err := format.Validate(arch, ks); err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
	} else {
		// The shape order of `codegen --from-config` when the config gives it,
		// so the printed configuration is byte-identical to that command's;
		// then any projection shape it does not list.
		var shapes [][2]int
		seen := map[[2]int]bool{}
		have := map[[2]int]bool{}
		for _, t := range p.Tensors {
			if t.Class == tensormap.Projection && len(t.HFShape) == 2 {
				have[[2]int{int(t.HFShape[0]), int(t.HFShape[1])}] = true
			}
		}
		if fromCfg, err := format.ShapesFromConfig(p.config); err == nil {
			for _, s := range fromCfg {
				if have[s] && !seen[s] {
					seen[s] = true
					shapes = append(shapes, s)
				}
			}
		}
		for _, t := range p.Tensors {
			if t.Class != tensormap.Projection || len(t.HFShape) != 2 {
				continue
			}
			s := [2]int{int(t.HFShape[0]), int(t.HFShape[1])}
			if !seen[s] {
				seen[s] = true
				shapes = append(shapes, s)
			}
		}
		if m, pk, ok := presets.TilingFor(arch, shapes); ok {
			name := m.Name
			// The shapes are a preset's: use setup_env.py's tiling, which
			// is what `codegen --model NAME` compiles into bitnet.cpp
			// (defect D7: the derived tiling differed, and bitnet.cpp
			// computed garbage with the preset's kernels).
			var err error
			if ks, err = format.Kernels(pk.Shapes, pk.BM, pk.BK, pk.Bm); err != nil {
				return nil, fmt.Errorf("preset %s: %w", name, err)
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s tiling of preset %s (stored in the GGUF as %s); build bitnet.cpp's kernels with `bitnet-convert codegen --model %s --arch %s`", arch, name, format.KernelConfigKey, name, arch))
			return ks, nil
		}
		var err error
		ks, err = format.ConfigFor(arch, shapes)
		if err != nil {
			if opts.AllowFallback {
				// keep the shapes that do have a tiling; the rest fall back
				ks = nil
				for _, s := range shapes {
					if one, err := format.ConfigFor(arch, [][2]int{s}); err == nil {
						ks = append(ks, one...)
					}
				}
			} else {
				return nil, fmt.Errorf("%s: %w; pass --allow-fallback to write such tensors as F16", arch, err)
			}
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s tiling derived from the shapes (stored in the GGUF as %s); build bitnet.cpp's kernels with `bitnet-convert codegen --arch %s --from-config %s`", arch, format.KernelConfigKey, arch, shellWord(p.Dir)))
	}
	return ks, nil
}

// shellWord returns s as one POSIX shell word for a command line the user
// can paste: unchanged when it holds only characters no shell treats
// specially, else in single quotes (a ' inside written as '\”).
func shellWord(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./+:@,=%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
