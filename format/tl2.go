package format

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// tl2RowSwap maps the 8-byte group j of a 32-byte TL2 row to the source row
// group: the converter swaps the middle two groups for AVX2's per-lane unpack
// (spec conversion.md §7.2).
var tl2RowSwap = [4]int{0, 2, 1, 3}

// tl2Layout holds the derived TL2 sizes of one tensor.
type tl2Layout struct {
	m, k, BM, BK     int
	threeK, twoK     int
	nib, sign, twoNB int // byte lengths of the three parts
	dataBytes        int // TL2DataBytes: padded stream length
	total            int // gguf.NBytes
}

func tl2Plan(m, k, BM, BK int) (tl2Layout, error) {
	l := tl2Layout{m: m, k: k, BM: BM, BK: BK}
	if m <= 0 || k <= 0 || BM <= 0 || BK <= 0 {
		return l, fmt.Errorf("TL2 tiling M=%d K=%d BM=%d BK=%d: all must be positive", m, k, BM, BK)
	}
	l.threeK = k / BK * BK
	l.twoK = k - l.threeK
	switch {
	case m%BM != 0 || BM%32 != 0:
		return l, fmt.Errorf("TL2 tiling (M=%d, K=%d): need M %% BM == 0 and BM %% 32 == 0 (BM=%d)", m, k, BM)
	case BK%24 != 0 || l.twoK%32 != 0 || l.twoK > 256:
		return l, fmt.Errorf("TL2 tiling (M=%d, K=%d): need BK %% 24 == 0 and K %% BK a multiple of 32 up to 256 (BK=%d)", m, k, BK)
	}
	l.nib = l.threeK * m / 6
	l.sign = l.threeK * m / 24
	l.twoNB = l.twoK * m / 4
	db, err := gguf.TL2DataBytes(uint64(k), uint64(m))
	if err != nil {
		return l, err
	}
	nb, err := gguf.NBytes(gguf.TypeTL2, []uint64{uint64(k), uint64(m)})
	if err != nil {
		return l, err
	}
	l.dataBytes, l.total = int(db), int(nb)
	if s := l.nib + l.sign + l.twoNB; s > l.dataBytes {
		return l, fmt.Errorf("TL2 tiling (M=%d, K=%d): stream of %d bytes exceeds the reference size %d", m, k, s, l.dataBytes)
	}
	return l, nil
}

// tl2Walk visits the TL2 stream (spec conversion.md §7.2) and calls:
// nib(pos, row, t0) for each three-part byte (triples t0, t0+1; high nibble
// first), sign(pos, word, rows, triple) for each sign word — bit 15−i holds
// row rows[i%2]… see below — and two(pos, row, u0) for each two-part byte
// (pairs u0, u0+1 counted from column threeK).
func tl2Walk(l tl2Layout, nib func(pos, row, t0 int), sign func(pos, rowBase, j, t int), two func(pos, row, u0 int)) {
	pos := 0
	for a := 0; a < l.m/l.BM; a++ {
		for b := 0; b < l.threeK/l.BK; b++ {
			for c := 0; c < l.BM/32; c++ {
				for d := 0; d < l.BK/6; d++ {
					for p := 0; p < 32; p++ {
						r := tl2RowSwap[p/8]*8 + p%8
						nib(pos, a*l.BM+c*32+r, b*l.BK/3+2*d)
						pos++
					}
				}
			}
		}
	}
	for a := 0; a < l.m/l.BM; a++ {
		for b := 0; b < l.threeK/l.BK; b++ {
			for c := 0; c < l.BM/32; c++ {
				for d4 := 0; d4 < l.BK/24; d4++ {
					for j := 0; j < 16; j++ {
						// bit 15−i of word j: row base+(i%2)·16+j, triple t+i/2.
						sign(pos, a*l.BM+c*32, j, b*l.BK/3+d4*8)
						pos += 2
					}
				}
			}
		}
	}
	for a := 0; a < l.m/l.BM; a++ {
		for b2 := 0; b2 < l.twoK/32; b2++ {
			for c := 0; c < l.BM/32; c++ {
				for d := 0; d < 8; d++ {
					for p := 0; p < 32; p++ {
						r := tl2RowSwap[p/8]*8 + p%8
						two(pos, a*l.BM+c*32+r, b2*16+2*d)
						pos++
					}
				}
			}
		}
	}
}

// tl2Code is v = 9·t0 + 3·t1 + t2 ∈ [−13, 13] for one triple.
func tl2Code(w []int8) (int, bool) {
	for _, x := range w[:3] {
		if x < -1 || x > 1 {
			return 0, false
		}
	}
	return 9*int(w[0]) + 3*int(w[1]) + int(w[2]), true
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TransformTL2 lays out ternary weights t (HF [M, K] row-major) for
// bitnet.cpp's TL2 kernels with tiling BM, BK (bm is always 32; spec
// conversion.md §7.2, codegen.md §4.3) and returns the full GGUF tensor data
// of size gguf.NBytes(TL2, [K, M]): three-part nibbles, sign words, two-part
// nibbles, zero padding to pad32(gguf.TL2DataBytes), the little-endian
// float32 scale, 28 zero bytes. It panics when len(t) != m·k; an invalid
// tiling or a value outside {-1, 0, 1} is an error.
func TransformTL2(t []int8, m, k, BM, BK int, scale float32) ([]byte, error) {
	l, err := tl2Plan(m, k, BM, BK)
	if err != nil {
		return nil, err
	}
	if len(t) != m*k {
		panic("format: TransformTL2: len(t) != m*k")
	}
	out := make([]byte, l.total)
	// Triple codes v = 9·t0 + 3·t1 + t2, once per triple (row-major).
	nt := l.threeK / 3
	codes := make([]int8, m*nt)
	for row := 0; row < m; row++ {
		r := t[row*k:]
		for tri := 0; tri < nt; tri++ {
			v, ok := tl2Code(r[3*tri:])
			if !ok {
				return nil, fmt.Errorf("TL2: row %d, columns %d..%d: value outside {-1, 0, 1}", row, 3*tri, 3*tri+2)
			}
			codes[row*nt+tri] = int8(v)
		}
	}
	var bad error
	tl2Walk(l,
		func(pos, row, t0 int) {
			c := codes[row*nt+t0:]
			out[pos] = byte(absInt(int(c[0])))<<4 | byte(absInt(int(c[1])))
		},
		func(pos, base, j, tri int) {
			var w uint16
			for i := 0; i < 16; i++ {
				if codes[(base+(i%2)*16+j)*nt+tri+i/2] < 0 {
					w |= 1 << (15 - i)
				}
			}
			binary.LittleEndian.PutUint16(out[pos:], w)
		},
		func(pos, row, u0 int) {
			r := t[row*k+l.threeK:]
			hi, ok1 := tl1Pair(r[2*u0], r[2*u0+1])
			lo, ok2 := tl1Pair(r[2*u0+2], r[2*u0+3])
			if (!ok1 || !ok2) && bad == nil {
				bad = fmt.Errorf("TL2: row %d, columns %d..%d: value outside {-1, 0, 1}", row, l.threeK+2*u0, l.threeK+2*u0+3)
			}
			out[pos] = hi<<4 | lo
		})
	if bad != nil {
		return nil, bad
	}
	binary.LittleEndian.PutUint32(out[l.total-TLTailBytes:], math.Float32bits(scale))
	return out, nil
}

// UntransformTL2 is the inverse of TransformTL2: it decodes data (at least
// up to the scale) into dst (HF [M, K] row-major) and returns the scale read
// at pad32(gguf.TL2DataBytes). Errors: invalid tiling, short data, a
// magnitude nibble > 13 or a pair index > 8. It panics when len(dst) != m·k.
func UntransformTL2(dst []int8, data []byte, m, k, BM, BK int) (scale float32, err error) {
	l, err := tl2Plan(m, k, BM, BK)
	if err != nil {
		return 0, err
	}
	if len(dst) != m*k {
		panic("format: UntransformTL2: len(dst) != m*k")
	}
	off := l.total - TLTailBytes
	if len(data) < off+4 {
		return 0, fmt.Errorf("TL2 data is %d bytes, want at least %d for M=%d K=%d", len(data), off+4, m, k)
	}
	setErr := func(e error) {
		if err == nil {
			err = e
		}
	}
	// Magnitudes first, then apply the signs.
	mag := make([]int8, m*(l.threeK/3))
	neg := make([]bool, len(mag))
	nt := l.threeK / 3
	tl2Walk(l,
		func(pos, row, t0 int) {
			b := data[pos]
			for j, v := range [2]byte{b >> 4, b & 15} {
				if v > 13 {
					setErr(fmt.Errorf("TL2 byte %d: triple magnitude %d > 13", pos, v))
					v = 0
				}
				mag[row*nt+t0+j] = int8(v)
			}
		},
		func(pos, base, j, tri int) {
			w := binary.LittleEndian.Uint16(data[pos:])
			for i := 0; i < 16; i++ {
				if w&(1<<(15-i)) != 0 {
					neg[(base+(i%2)*16+j)*nt+tri+i/2] = true
				}
			}
		},
		func(pos, row, u0 int) {
			b := data[pos]
			for j, idx := range [2]byte{b >> 4, b & 15} {
				if idx > 8 {
					setErr(fmt.Errorf("TL2 byte %d: pair index %d > 8", pos, idx))
					idx = 4
				}
				c := row*k + l.threeK + 2*(u0+j)
				dst[c] = int8(idx/3) - 1
				dst[c+1] = int8(idx%3) - 1
			}
		})
	if err != nil {
		return 0, err
	}
	for row := 0; row < m; row++ {
		for tri := 0; tri < nt; tri++ {
			v := int(mag[row*nt+tri])
			if neg[row*nt+tri] {
				v = -v
			}
			// Balanced-ternary digits of v: v = 9·t0 + 3·t1 + t2.
			c := row*k + 3*tri
			for p, w := range [3]int{9, 3, 1} {
				q := floorDiv(v+w/2, w)
				dst[c+p] = int8(q)
				v -= q * w
			}
		}
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(data[off:])), nil
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// TL2 is bitnet.cpp's x86 lookup-table type (39) with the tiling of each
// shape taken from Kernels (see TransformTL2).
type TL2 struct{ Kernels []Kernel }

// Name is "TL2".
func (TL2) Name() string { return "TL2" }

// Type is gguf.TypeTL2.
func (TL2) Type() gguf.Type { return gguf.TypeTL2 }

// ScaleGroup is 0: one scale per tensor.
func (TL2) ScaleGroup(int) int { return 0 }

// StoredScale is s unchanged: the scale is stored as float32.
func (TL2) StoredScale(s float32) float32 { return s }

// Check: the shape needs a kernel in Kernels.
func (f TL2) Check(k, m int) error { return checkKernel(f.Kernels, TL2Arch, k, m) }

// Bytes is pad32(gguf.TL2DataBytes) + 32.
func (TL2) Bytes(k, m int) (int, error) { return nbytes(gguf.TypeTL2, k, m) }

// Encode lays the codes out with the shape's kernel.
func (f TL2) Encode(dst []byte, codes []int8, scales []float32, k, m int) error {
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	kn, _ := LookupKernel(f.Kernels, m, k)
	out, err := TransformTL2(codes, m, k, kn.BM, kn.BK, scales[0])
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}

// Decode undoes the layout with the shape's kernel.
func (f TL2) Decode(codes []int8, data []byte, k, m int) ([]float32, error) {
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	kn, _ := LookupKernel(f.Kernels, m, k)
	s, err := UntransformTL2(codes, data, m, k, kn.BM, kn.BK)
	if err != nil {
		return nil, err
	}
	sc := []float32{s}
	zeroCodesOfZeroScales(codes, sc, 0)
	return sc, nil
}

// Scales returns the per-tensor scale at pad32(gguf.TL2DataBytes).
func (f TL2) Scales(data []byte, k, m int) ([]float32, error) {
	nb, err := f.Bytes(k, m)
	if err != nil {
		return nil, err
	}
	return tailScale(f, data, k, m, nb-TLTailBytes)
}
