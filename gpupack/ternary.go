package gpupack

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Ternary is one ternarized sub-matrix (q, k, v, o, gate, up or down):
// [Rows, Cols] codes in {-1, 0, 1}, row-major, in the GPU row order (q and
// k rows already permuted), and the bf16 scale ws written to
// weight_scale (the magnitude of every nonzero weight of the fp16 file).
type Ternary struct {
	Rows, Cols int
	Codes      []int8
	// NegZero marks the zero codes whose bf16 value in model_state_fp16.pt
	// is −0 (a negative master weight that rounded to 0: torch keeps the
	// sign through round, clamp and the division by s); nil for codes read
	// from a GGUF or a packed checkpoint, whose zeros are +0.
	NegZero []bool
	// Scale is ws as bf16 bits.
	Scale uint16
}

// bf16Floor is bf16(1e-5), the clamp_(min=1e-5) of a bf16 mean.
var bf16Floor = quantize.BF16ToF32(quantize.F32ToBF16(1e-5))

// QuantizeBF16 ternarizes the bf16 matrix w ([rows, cols] bit patterns,
// row-major) as microsoft/BitNet gpu/convert_checkpoint.py quant_weight_int8
// does on CPU in bf16 with torch ≥ 2.2:
//
//	m  = bf16(f32 Σ|w| / f32(rows·cols))   torch's float32 cascade sum
//	                                       (quantize.AbsMean), one rounding
//	m  = max(m, bf16(1e-5))
//	s  = bf16(1 / m)                       1.0/tensor is reciprocal: f32, rounded
//	p  = bf16(w · s)                       exact f32 product, rounded to nearest even
//	t  = clamp(round_half_even(p), -1, 1)
//	ws = bf16(1 / s)
//
// quant_weight_fp16's value round(p).clamp(-1, 1)/s is ±ws for t = ±1 and a
// zero with the sign of w for t = 0 (NegZero). Errors: NaN or ±Inf weights,
// named by index.
func QuantizeBF16(w []uint16, rows, cols int) (*Ternary, error) {
	var q quantizer
	return q.quantize(w, rows, cols)
}

// quantizer is QuantizeBF16 with buffers reused from call to call (the
// returned Ternary's slices are valid until the next call); w and perm are
// its caller's input buffers.
type quantizer struct {
	w, perm []uint16
	x       []float32
	codes   []int8
	neg     []bool
	t       Ternary
}

func growSlice[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (q *quantizer) quantize(w []uint16, rows, cols int) (*Ternary, error) {
	if len(w) != rows*cols {
		panic("gpupack: QuantizeBF16: len(w) != rows*cols")
	}
	q.x = growSlice(q.x, len(w))
	x := q.x
	for i, b := range w {
		if b&0x7f80 == 0x7f80 {
			return nil, fmt.Errorf("element %d (row %d) is %v: not a finite weight", i, i/max(cols, 1), quantize.BF16ToF32(b))
		}
		x[i] = quantize.BF16ToF32(b)
	}
	m := quantize.BF16ToF32(quantize.F32ToBF16(quantize.AbsMean(x)))
	if m < bf16Floor {
		m = bf16Floor
	}
	s := quantize.BF16ToF32(quantize.F32ToBF16(1 / m))
	q.codes, q.neg = growSlice(q.codes, len(w)), growSlice(q.neg, len(w))
	clear(q.codes)
	clear(q.neg)
	q.t = Ternary{Rows: rows, Cols: cols, Codes: q.codes, NegZero: q.neg}
	t := &q.t
	for i, v := range x {
		p := quantize.BF16ToF32(quantize.F32ToBF16(v * s))
		switch {
		case p > 0.5:
			t.Codes[i] = 1
		case p < -0.5:
			t.Codes[i] = -1
		default:
			t.NegZero[i] = math.Signbit(float64(v))
		}
	}
	t.Scale = quantize.F32ToBF16(1 / s)
	return t, nil
}

// FromCodes wraps codes read from a GGUF or a packed checkpoint: their one
// float32 scale is rounded once to bf16 (nearest even). Errors: a scale that
// is not finite and positive.
func FromCodes(codes []int8, rows, cols int, scale float32) (*Ternary, error) {
	if len(codes) != rows*cols {
		panic("gpupack: FromCodes: len(codes) != rows*cols")
	}
	ws := quantize.F32ToBF16(scale)
	if !(scale > 0) || math.IsInf(float64(quantize.BF16ToF32(ws)), 0) {
		return nil, fmt.Errorf("scale %v is not a finite positive bf16", scale)
	}
	return &Ternary{Rows: rows, Cols: cols, Codes: codes, Scale: ws}, nil
}

// appendFP16 appends the bf16 bytes of the dequantized matrix (t·ws, signed
// zeros as NegZero says) to dst.
func (t *Ternary) appendFP16(dst []byte) []byte {
	pos, neg := byte(t.Scale), byte(t.Scale>>8)
	for i, c := range t.Codes {
		switch {
		case c > 0:
			dst = append(dst, pos, neg&0x7f)
		case c < 0:
			dst = append(dst, pos, neg|0x80)
		case t.NegZero != nil && t.NegZero[i]:
			dst = append(dst, 0, 0x80)
		default:
			dst = append(dst, 0, 0)
		}
	}
	return dst
}

// permuteRows reorders the rows of a [heads·headDim, cols] matrix from the
// Hugging Face order (per head: the first half of the rotary pairs, then
// the second) to the interleaved pairs xformers' rope_padded expects:
// new row h·hd + 2d + l = old row h·hd + l·hd/2 + d, the rearrange
// '(h l d) i -> (h d l) i' (l = 2) of gpu/convert_safetensors.py.
func permuteRows[T any](src []T, rows, cols, heads int) ([]T, error) {
	dst := make([]T, len(src))
	return dst, permuteRowsInto(dst, src, rows, cols, heads)
}

// permuteRowsInto is permuteRows writing into dst (len(src)).
func permuteRowsInto[T any](dst, src []T, rows, cols, heads int) error {
	if heads <= 0 || rows%(2*heads) != 0 {
		return fmt.Errorf("%d rows do not split into %d heads of an even size", rows, heads)
	}
	hd := rows / heads
	for h := range heads {
		for d := range hd / 2 {
			for l := range 2 {
				nr, or := h*hd+2*d+l, h*hd+l*hd/2+d
				copy(dst[nr*cols:(nr+1)*cols], src[or*cols:(or+1)*cols])
			}
		}
	}
	return nil
}
