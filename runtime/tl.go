package runtime

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// NewTLMatrix decodes a TL1 (type 38) or TL2 (type 39) tensor with ne = [k, m]
// into an I2_S matrix: the LUT layout is undone by the format layer
// (format.TL1 / format.TL2) with the tiling kern (the kernel_config.ini entry
// for M = m, K = k that the file was converted with), and the ternary values
// are repacked in the x86 I2_S layout (format.I2S) with the same per-tensor
// scale. The arithmetic is then the I2_S kernel's: bitnet.cpp's TL2 build
// gives logits bitwise equal to its I2_S build on the golden model, and so
// does this. Errors name the shape; a kern for another shape is an error.
func NewTLMatrix(typ gguf.Type, k, m int, data []byte, kern format.Kernel) (*Matrix, error) {
	if kern.M != m || kern.K != k {
		return nil, fmt.Errorf("kernel config is for M=%d K=%d, tensor is M=%d K=%d", kern.M, kern.K, m, k)
	}
	if typ != gguf.TypeTL1 && typ != gguf.TypeTL2 {
		return nil, fmt.Errorf("type %s is not TL1 or TL2", typ)
	}
	f, _ := format.ForType(typ, format.LayoutX86, []format.Kernel{kern})
	return newRepackedMatrix(f, k, m, data)
}

// newRepackedMatrix decodes a ternary tensor in format f (TL1, TL2, or I2_S
// in the ARM or 1×4 layout) and repacks it as an x86 I2_S matrix with the
// same per-tensor scale. A row length that is not a multiple of 128
// (bitnet_b1_58-3B's ffn_down, K = 8640, which bitnet.cpp's TL kernels
// run) is padded with zero weights to the next multiple (Matrix.kPad): the
// per-token int8 arithmetic then gives the same integer sums as over K.
func newRepackedMatrix(f format.Format, k, m int, data []byte) (*Matrix, error) {
	typ := f.Name()
	if err := f.Check(k, m); err != nil {
		return nil, err
	}
	t := make([]int8, m*k)
	scales, err := f.Decode(t, data, k, m)
	if err != nil {
		return nil, err
	}
	kp := (k + 127) / 128 * 128
	if kp != k {
		p := make([]int8, m*kp)
		for r := 0; r < m; r++ {
			copy(p[r*kp:], t[r*k:(r+1)*k])
		}
		t = p
	}
	scale := scales[0]
	if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return nil, fmt.Errorf("%s scale is %v", typ, scale)
	}
	i2s := format.I2S{Layout: format.LayoutX86}
	packed := make([]byte, m*kp/4+format.I2STailBytes)
	if err := i2s.Encode(packed, t, scales, kp, m); err != nil {
		return nil, err
	}
	return &Matrix{Type: gguf.TypeI2S, K: k, M: m, Scale: scale, raw: packed[:m*kp/4], rowB: kp / 4, kPad: kp, kern: weightKernels[gguf.TypeI2S]}, nil
}

// findKernel returns the kernel of kerns for an M×K weight.
func findKernel(kerns []format.Kernel, m, k int) (format.Kernel, bool) {
	return format.LookupKernel(kerns, m, k)
}

// ReadKernelConfig reads a kernel_config.ini for Options.TLKernels. Errors
// name path.
func ReadKernelConfig(path string) ([]format.Kernel, error) {
	b, err := fsutil.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kernel config: %w", err)
	}
	ks, err := format.ParseKernelConfig(b)
	if err != nil {
		return nil, fmt.Errorf("kernel config %s: %w", path, err)
	}
	return ks, nil
}

// StoredKernelConfig returns the tiling hf2gguf stored in a TL1/TL2 file
// under format.KernelConfigKey, and false when the file has none (files from
// other tools: their kernel_config.ini must be given).
func StoredKernelConfig(kvs []gguf.KV) ([]format.Kernel, bool, error) {
	v, ok := gguf.Lookup(kvs, format.KernelConfigKey)
	if !ok {
		return nil, false, nil
	}
	ini, isString := v.V.(string)
	if !isString {
		return nil, false, fmt.Errorf("key %s is %s, want a string", format.KernelConfigKey, v.Type)
	}
	ks, err := format.ParseKernelConfig([]byte(ini))
	if err != nil {
		return nil, false, fmt.Errorf("key %s: %w", format.KernelConfigKey, err)
	}
	return ks, true, nil
}

// KernelConfigNotice returns the notice for a kernel configuration the user
// gave (--kernel-config) for a file with these KVs and tensors, or "": the
// flag has no effect on a file without TL1/TL2 tensors (defect D18), and a
// tiling that differs from the one the file stores (StoredKernelConfig) for
// a shape the file uses decodes its weights to other values — the given one
// is used, as asked, but the user is told (defect D19).
func KernelConfigNotice(kvs []gguf.KV, tensors []gguf.TensorInfo, given []format.Kernel) string {
	stored, hasStored, _ := StoredKernelConfig(kvs)
	anyTL := false
	for _, ti := range tensors {
		if (ti.Type != gguf.TypeTL1 && ti.Type != gguf.TypeTL2) || len(ti.Ne) != 2 {
			continue
		}
		anyTL = true
		if !hasStored {
			continue
		}
		m, k := int(ti.Ne[1]), int(ti.Ne[0])
		g, gok := findKernel(given, m, k)
		s, sok := findKernel(stored, m, k)
		if gok && sok && (g.BM != s.BM || g.BK != s.BK || g.Bm != s.Bm) {
			return fmt.Sprintf("--kernel-config differs from the tiling stored in the file (%s) for tensor %s (M=%d K=%d: BM=%d BK=%d bm=%d given, BM=%d BK=%d bm=%d stored); the given one is used and will decode the weights wrongly unless the file was converted with it; omit --kernel-config to use the stored one",
				format.KernelConfigKey, ti.Name, m, k, g.BM, g.BK, g.Bm, s.BM, s.BK, s.Bm)
		}
	}
	if !anyTL {
		return "--kernel-config has no effect: the file has no TL1/TL2 tensors"
	}
	return ""
}
