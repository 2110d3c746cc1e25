package convert

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/codegen"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/presets"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// tlKernels returns the TL1/TL2 tiling for the plan's projections: parsed
// from --kernel-config when given (and validated), else derived from the
// shapes exactly as `codegen --from-config` derives it (codegen.ConfigFor).
func tlKernels(p *Plan, opts Options) ([]TLKernel, error) {
	arch := string(p.OutType)
	var ks []codegen.Kernel
	if opts.KernelConfig != nil {
		var err error
		ks, err = codegen.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		if err := codegen.Validate(arch, ks); err != nil {
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
		if fromCfg, err := codegen.ShapesFromConfig(p.config); err == nil {
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
			if ks, err = codegen.Kernels(pk.Shapes, pk.BM, pk.BK, pk.Bm); err != nil {
				return nil, fmt.Errorf("preset %s: %w", name, err)
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s tiling of preset %s (stored in the GGUF as %s); build bitnet.cpp's kernels with `bitnet-convert codegen --model %s --arch %s`", arch, name, codegen.KernelConfigKey, name, arch))
			return tlKernelList(ks), nil
		}
		var err error
		ks, err = codegen.ConfigFor(arch, shapes)
		if err != nil {
			if opts.AllowFallback {
				// keep the shapes that do have a tiling; the rest fall back
				ks = nil
				for _, s := range shapes {
					if one, err := codegen.ConfigFor(arch, [][2]int{s}); err == nil {
						ks = append(ks, one...)
					}
				}
			} else {
				return nil, fmt.Errorf("%s: %w; pass --allow-fallback to write such tensors as F16", arch, err)
			}
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s tiling derived from the shapes (stored in the GGUF as %s); build bitnet.cpp's kernels with `bitnet-convert codegen --arch %s --from-config DIR` on this checkpoint", arch, codegen.KernelConfigKey, arch))
	}
	return tlKernelList(ks), nil
}

func tlKernelList(ks []codegen.Kernel) []TLKernel {
	out := make([]TLKernel, len(ks))
	for i, k := range ks {
		out[i] = TLKernel{M: k.M, K: k.K, BM: k.BM, BK: k.BK, Bm: k.Bm}
	}
	return out
}

func lookupKernel(ks []TLKernel, m, k int) (TLKernel, bool) {
	for _, kn := range ks {
		if kn.M == m && kn.K == k {
			return kn, true
		}
	}
	return TLKernel{}, false
}

// tl lays out ternary codes in the TL1/TL2 layout of the projection's kernel
// (spec conversion.md §7), with the per-tensor scale in the hidden slot.
func (c *converter) tl(t *PlannedTensor, codes []int8, scale float32) ([]byte, error) {
	k := t.Kernel
	var out []byte
	var err error
	if t.Type == gguf.TypeTL1 {
		out, err = quantize.TransformTL1(codes, k.M, k.K, k.BM, k.BK, k.Bm, scale)
	} else {
		out, err = quantize.TransformTL2(codes, k.M, k.K, k.BM, k.BK, scale)
	}
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.GGUFName, err)
	}
	return out, nil
}
