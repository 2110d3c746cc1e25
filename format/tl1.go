package format

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TLTailBytes is the scale slot after TL1/TL2 packed data: a little-endian
// float32 weight scale and 28 zero bytes (the fork's hidden "_scale" tensor,
// spec conversion.md §7.3).
const TLTailBytes = 32

// tl1Check validates a TL1 tiling (spec codegen.md §2.1, §2.2).
func tl1Check(m, k, BM, BK, bm int) error {
	switch {
	case m <= 0 || k <= 0 || BM <= 0 || BK <= 0:
		return fmt.Errorf("TL1 tiling M=%d K=%d BM=%d BK=%d: all must be positive", m, k, BM, BK)
	case bm != 32 && bm != 64:
		return fmt.Errorf("TL1 tiling (M=%d, K=%d): bm=%d not allowed (allowed: 32, 64)", m, k, bm)
	case m%BM != 0 || BM%bm != 0:
		return fmt.Errorf("TL1 tiling (M=%d, K=%d): need M %% BM == 0 and BM %% bm == 0 (BM=%d, bm=%d)", m, k, BM, bm)
	case k%BK != 0 || BK%(256/bm) != 0:
		return fmt.Errorf("TL1 tiling (M=%d, K=%d): need K %% BK == 0 and BK %% %d == 0 (BK=%d)", m, k, 256/bm, BK)
	}
	return nil
}

// tl1Pair is the TL1 pair index 3·t0 + t1 + 4 ∈ [0, 8] (spec codegen.md §4.2).
func tl1Pair(t0, t1 int8) (byte, bool) {
	if t0 < -1 || t0 > 1 || t1 < -1 || t1 > 1 {
		return 0, false
	}
	return byte(3*int(t0) + int(t1) + 4), true
}

// tl1Walk visits every packed TL1 byte in stream order and calls f with the
// byte position, the row and the first of its two pair indices (u0; the
// byte holds pairs u0 and u0+1, high nibble first). The order is bitnet.cpp
// preprocess_weights_tl1 / process_tl1 (spec conversion.md §7.1): tile of BM
// rows > K block of BK > row block of bm > compute block of by = 256/bm
// columns > 16-row group > pair-of-pairs > 16 rows.
func tl1Walk(m, k, BM, BK, bm int, f func(pos, row, u0 int)) {
	by := 256 / bm
	pos := 0
	for a := 0; a < m/BM; a++ {
		for b := 0; b < k/BK; b++ {
			for c := 0; c < BM/bm; c++ {
				for d := 0; d < BK/by; d++ {
					for e := 0; e < bm/16; e++ {
						for ff := 0; ff < by/4; ff++ {
							for g := 0; g < 16; g++ {
								f(pos, a*BM+c*bm+e*16+g, b*BK/2+d*by/2+2*ff)
								pos++
							}
						}
					}
				}
			}
		}
	}
}

// TransformTL1 lays out ternary weights t (HF [M, K] row-major, values -1/0/1)
// for bitnet.cpp's TL1 kernels with tiling BM, BK, bm (spec conversion.md
// §7.1, codegen.md §4.2) and returns the full GGUF tensor data: M·K/4 packed
// bytes, then scale as little-endian float32, then 28 zero bytes — size
// gguf.NBytes(TL1, [K, M]). It panics when len(t) != m·k; an invalid tiling
// or a value outside {-1, 0, 1} is returned as an error.
func TransformTL1(t []int8, m, k, BM, BK, bm int, scale float32) ([]byte, error) {
	if err := tl1Check(m, k, BM, BK, bm); err != nil {
		return nil, err
	}
	if len(t) != m*k {
		panic("format: TransformTL1: len(t) != m*k")
	}
	n := m * k / 4
	out := make([]byte, n+TLTailBytes)
	var bad error
	tl1Walk(m, k, BM, BK, bm, func(pos, row, u0 int) {
		r := t[row*k:]
		hi, ok1 := tl1Pair(r[2*u0], r[2*u0+1])
		lo, ok2 := tl1Pair(r[2*u0+2], r[2*u0+3])
		if (!ok1 || !ok2) && bad == nil {
			bad = fmt.Errorf("TL1: row %d, columns %d..%d: value outside {-1, 0, 1}", row, 2*u0, 2*u0+3)
		}
		out[pos] = hi<<4 | lo
	})
	if bad != nil {
		return nil, bad
	}
	binary.LittleEndian.PutUint32(out[n:], math.Float32bits(scale))
	return out, nil
}

// UntransformTL1 is the inverse of TransformTL1: it decodes data (at least
// M·K/4 + 4 bytes) into dst (HF [M, K] row-major) and returns the scale
// stored at byte M·K/4. Errors: invalid tiling, short data, or a nibble > 8
// (not a TL1 pair index). It panics when len(dst) != m·k.
func UntransformTL1(dst []int8, data []byte, m, k, BM, BK, bm int) (scale float32, err error) {
	if err := tl1Check(m, k, BM, BK, bm); err != nil {
		return 0, err
	}
	if len(dst) != m*k {
		panic("format: UntransformTL1: len(dst) != m*k")
	}
	n := m * k / 4
	if len(data) < n+4 {
		return 0, fmt.Errorf("TL1 data is %d bytes, want at least %d for M=%d K=%d", len(data), n+4, m, k)
	}
	tl1Walk(m, k, BM, BK, bm, func(pos, row, u0 int) {
		b := data[pos]
		for j, idx := range [2]byte{b >> 4, b & 15} {
			if idx > 8 {
				if err == nil {
					err = fmt.Errorf("TL1 byte %d: pair index %d > 8", pos, idx)
				}
				idx = 4
			}
			c := row*k + 2*(u0+j)
			dst[c] = int8(idx/3) - 1
			dst[c+1] = int8(idx%3) - 1
		}
	})
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(data[n:])), nil
}

// TL1 is bitnet.cpp's ARM lookup-table type (38) with the tiling of each
// shape taken from Kernels (a kernel_config.ini; see TransformTL1): M·K/4
// bytes, then the float32 scale and 28 zero bytes.
type TL1 struct{ Kernels []Kernel }

// Name is "TL1".
func (TL1) Name() string { return "TL1" }

// Type is gguf.TypeTL1.
func (TL1) Type() gguf.Type { return gguf.TypeTL1 }

// ScaleGroup is 0: one scale per tensor.
func (TL1) ScaleGroup(int) int { return 0 }

// StoredScale is s unchanged: the scale is stored as float32.
func (TL1) StoredScale(s float32) float32 { return s }

// Check: the shape needs a kernel in Kernels.
func (f TL1) Check(k, m int) error { return checkKernel(f.Kernels, TL1Arch, k, m) }

// Bytes is k·m/4 + 32.
func (TL1) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeTL1, k, m) }

// Encode lays the codes out with the shape's kernel.
func (f TL1) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	kn, _ := LookupKernel(f.Kernels, m, k)
	out, err := TransformTL1(codes, m, k, kn.BM, kn.BK, kn.Bm, scales[0])
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}

// Decode undoes the layout with the shape's kernel.
func (f TL1) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	kn, _ := LookupKernel(f.Kernels, m, k)
	s, err := UntransformTL1(codes, data, m, k, kn.BM, kn.BK, kn.Bm)
	if err != nil {
		return nil, err
	}
	sc := []float32{s}
	zeroCodesOfZeroScales(codes, sc, 0)
	return sc, nil
}

// checkKernel is the TL rule: a tiling for [m, k] must be configured.
func checkKernel(ks []Kernel, arch string, k, m int) error {
	if _, ok := LookupKernel(ks, m, k); !ok {
		return fmt.Errorf("no %s kernel for [M=%d, K=%d] in the kernel configuration", arch, m, k)
	}
	return nil
}

// Scales returns the per-tensor scale at byte k·m/4.
func (f TL1) Scales(data []byte, k, m int) ([]float32, error) {
	return tailScale(f, data, k, m, k*m/4)
}
