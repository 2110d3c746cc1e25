package convert

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitnet-convert/bitnet-convert/internal/version"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// requantKVs renames the arch for the target runtime and sets the keys the
// outtype implies.
func (p *RequantPlan) requantKVs(f *reader.File, opts RequantOptions) []gguf.KV {
	src := p.SrcArch
	act := format.ArchActivation[src]
	if v, ok := f.String(src + format.HiddenActivationSuffix); ok {
		act = v
	}
	// A file for mainline llama.cpp names every BitNet model "bitnet";
	// bitnet.cpp and ik_llama.cpp run relu² models as bitnet-b1.58 (the
	// archtab row hidden_act selects, bitnetActArch).
	base := src
	if a, ok := bitnetActArch[act]; ok && src == archtab.Bitnet.GGUF && act != "" {
		base = a
	}
	p.Arch = format.TargetArch(base, p.Runtime)
	if p.Arch != base && act == "relu2" {
		p.Warnings = append(p.Warnings, format.Relu2Notice)
	}
	kvs := format.RenameArch(f.KVs, src, p.Arch)
	drop := map[string]bool{writer.AlignmentKey: true, format.LayoutKey: true, format.KernelConfigKey: true}
	set := []gguf.KV{{Key: "general.file_type", Value: gguf.Uint32(uint32(fileType(p.OutType)))}}
	if act != "" {
		set = append(set, gguf.KV{Key: p.Arch + format.HiddenActivationSuffix, Value: gguf.String(act)})
	}
	if _, ternary := format.Lookup(string(p.OutType)); ternary {
		// Every ternary output, TL included (the input went through a
		// quantizer already).
		set = append(set, gguf.KV{Key: "general.quantization_version", Value: gguf.Uint32(2)})
	}
	if p.OutType == OutI2S {
		set = append(set, gguf.KV{Key: format.LayoutKey, Value: gguf.String(string(layoutOrDefault(opts.I2SLayout)))})
	}
	if len(p.Kernels) > 0 {
		set = append(set, gguf.KV{Key: format.KernelConfigKey, Value: gguf.String(string(format.KernelConfig(p.Kernels)))})
	}
	// Which bitnet-convert rewrote the file (replacing the input's record;
	// no timestamp, so reruns stay byte-identical).
	set = append(set, gguf.KV{Key: version.Key, Value: gguf.String(version.Read().GGUFValue())})
	out := kvs[:0]
	for _, kv := range kvs {
		if !drop[kv.Key] {
			out = append(out, kv)
		}
	}
	for _, s := range set {
		i := slices.IndexFunc(out, func(kv gguf.KV) bool { return kv.Key == s.Key })
		if i >= 0 {
			out[i].Value = s.Value
		} else {
			out = append(out, s)
		}
	}
	out, notice := retargetPre(out, p.Runtime) // falcon_e → falcon3 for mainline (pre.go)
	if notice != "" {
		p.Warnings = append(p.Warnings, notice)
	}
	return out
}

// requantKernels is the tiling of TL input tensors: --kernel-config, else
// the one the file stores.
func requantKernels(f *reader.File, ini []byte) ([]format.Kernel, error) {
	if ini != nil {
		return format.ParseKernelConfig(ini)
	}
	v, ok := f.String(format.KernelConfigKey)
	if !ok {
		return nil, errors.New("TL tensors but no stored kernel configuration: pass the kernel_config.ini it was made with (--kernel-config)")
	}
	ks, err := format.ParseKernelConfig([]byte(v))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", format.KernelConfigKey, err)
	}
	return ks, nil
}

// requantOutKernels is the tiling written for --outtype tl1/tl2:
// --kernel-config, else derived from the projection shapes (format.ConfigFor).
func requantOutKernels(f *reader.File, arch string, opts RequantOptions) ([]format.Kernel, error) {
	if opts.KernelConfig != nil {
		ks, err := format.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		if err := format.Validate(arch, ks); err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		return ks, nil
	}
	var shapes [][2]int
	for _, ti := range f.Tensors {
		if projectionName.MatchString(ti.Name) && len(ti.Ne) == 2 {
			s := [2]int{int(ti.Ne[1]), int(ti.Ne[0])}
			if !slices.Contains(shapes, s) {
				shapes = append(shapes, s)
			}
		}
	}
	var ks []format.Kernel
	for _, s := range shapes {
		if one, err := format.ConfigFor(arch, [][2]int{s}); err == nil {
			ks = append(ks, one...)
		} else if !opts.AllowFallback {
			return nil, fmt.Errorf("%s: %w; pass --allow-fallback to write such tensors as F16", arch, err)
		}
	}
	return ks, nil
}
