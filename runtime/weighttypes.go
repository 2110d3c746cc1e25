package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// weightKernel is the runtime's arithmetic for one weight type: how a
// Matrix holds the stored data, how an activation row is prepared (ggml's
// vec_dot_type conversion), the dot product of one weight row, and get_rows
// for a token embedding of the type. NewMatrix, Prepare, Row and embedRow
// dispatch through the table of these (weightKernels); a kernel file adds
// its type with registerWeightKernel, so a new weight type is one file.
type weightKernel struct {
	typ gguf.Type
	// setup checks the shape rule of the kernel and fills the stored-form
	// fields of w (data holds need = gguf.NBytes bytes). It may return
	// another Matrix to use instead (nil keeps w).
	setup func(w *Matrix, data []byte, need int) (*Matrix, error)
	// prepare converts x (len w.K) into a.
	prepare func(w *Matrix, a *Activation, x []float32)
	// row is output row r for the prepared a.
	row func(w *Matrix, r int, a *Activation) float32
	// embed writes row id as float32 (ggml's get_rows: the type's
	// dequantize_row); nil when the type is never a token embedding.
	embed func(w *Matrix, dst []float32, id int)
}

// weightKernels is the runtime's type table (registerWeightKernel).
var weightKernels = map[gguf.Type]*weightKernel{}

// registerWeightKernel adds k to the type table; it returns true so that a
// kernel file registers with a package-level var.
func registerWeightKernel(k weightKernel) bool {
	if _, dup := weightKernels[k.typ]; dup {
		panic("runtime: weight type registered twice: " + k.typ.String())
	}
	weightKernels[k.typ] = &k
	return true
}

// supportedTypes is the sorted list of the runtime's weight types, for
// messages ("F32, F16, …").
func supportedTypes() string {
	ts := make([]gguf.Type, 0, len(weightKernels))
	for t := range weightKernels {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// rowMultiple returns a setup step refusing row lengths that are not a
// multiple of n (the kernel's block, named by why).
func rowMultiple(n int, why string, next func(w *Matrix, data []byte, need int) (*Matrix, error)) func(w *Matrix, data []byte, need int) (*Matrix, error) {
	return func(w *Matrix, data []byte, need int) (*Matrix, error) {
		if w.K%n != 0 {
			return nil, fmt.Errorf("%s row length %d is not a multiple of %d (%s)", w.Type, w.K, n, why)
		}
		return next(w, data, need)
	}
}

// rawBlocks keeps the stored blocks as they are, rows of need/M bytes.
func rawBlocks(w *Matrix, data []byte, need int) (*Matrix, error) {
	w.raw = data[:need]
	w.rowB = need / w.M
	return nil, nil
}

// The types whose arithmetic lives in this package's other files (the
// float types and Q8_0 in dot.go and act.go, I2_S in i2s_batch.go and
// internal/kernels, TQ in tq.go, Q6_K/Q4_K in q6k.go/q4k.go, IQ*_BN in
// iqbn.go).
var (
	_ = registerWeightKernel(weightKernel{
		typ: gguf.TypeF32,
		setup: func(w *Matrix, data []byte, _ int) (*Matrix, error) {
			w.f32 = viewF32(data, w.K*w.M)
			return nil, nil
		},
		prepare: func(_ *Matrix, a *Activation, x []float32) { a.f = append(a.f[:0], x...) },
		row:     func(w *Matrix, r int, a *Activation) float32 { return dotF32ggml(w.f32[r*w.K:(r+1)*w.K], a.f) },
		embed:   func(w *Matrix, dst []float32, id int) { copy(dst, w.f32[id*w.K:(id+1)*w.K]) },
	})
	_ = registerWeightKernel(weightKernel{
		typ:   gguf.TypeF16,
		setup: viewHalves,
		prepare: func(_ *Matrix, a *Activation, x []float32) {
			a.f = resizeF32(a.f, len(x))
			kernels.RoundF16(a.f, x)
		},
		row: func(w *Matrix, r int, a *Activation) float32 { return dotF16ggml(w.u16[r*w.K:(r+1)*w.K], a.f) },
		embed: func(w *Matrix, dst []float32, id int) {
			for i, h := range w.u16[id*w.K : (id+1)*w.K] {
				dst[i] = f16ToF32(h)
			}
		},
	})
	_ = registerWeightKernel(weightKernel{
		typ:     gguf.TypeBF16,
		setup:   viewHalves,
		prepare: func(_ *Matrix, a *Activation, x []float32) { a.f = append(a.f[:0], x...) },
		// Exact products summed in float64, rounded once.
		row: func(w *Matrix, r int, a *Activation) float32 {
			row := w.u16[r*w.K : (r+1)*w.K]
			x := a.f[:len(row)]
			var acc float64
			for i, h := range row {
				acc += float64(bf16ToF32(h)) * float64(x[i])
			}
			return float32(acc)
		},
		embed: func(w *Matrix, dst []float32, id int) {
			for i, h := range w.u16[id*w.K : (id+1)*w.K] {
				dst[i] = bf16ToF32(h)
			}
		},
	})
	_ = registerWeightKernel(weightKernel{
		typ: gguf.TypeQ8_0,
		setup: func(w *Matrix, data []byte, need int) (*Matrix, error) {
			w.raw = data[:need]
			w.rowB = w.K / q8Block * 34
			return nil, nil
		},
		prepare: prepareQ8_0,
		row: func(w *Matrix, r int, a *Activation) float32 {
			return dotQ8_0(w.raw[r*w.rowB:(r+1)*w.rowB], a.q, a.d)
		},
		embed: func(w *Matrix, dst []float32, id int) {
			row := w.raw[id*w.rowB : (id+1)*w.rowB]
			for b := 0; b < w.K/q8Block; b++ {
				blk := row[b*34 : b*34+34]
				d := f16ToF32(binary.LittleEndian.Uint16(blk))
				for i, q := range blk[2:] {
					dst[b*q8Block+i] = d * float32(int8(q))
				}
			}
		},
	})
	_ = registerWeightKernel(weightKernel{
		typ: gguf.TypeI2S,
		// x86 layout, QK 128, as bitnet.cpp's kernel requires (§3.1 of
		// the conversion spec); the scale is the float32 at byte K·M/4.
		setup: rowMultiple(128, "x86 layout, QK_I2_S = 128", func(w *Matrix, data []byte, _ int) (*Matrix, error) {
			n := w.K * w.M
			w.raw = data[:n/4]
			w.rowB = w.K / 4
			w.kPad = w.K
			w.Scale = math.Float32frombits(binary.LittleEndian.Uint32(data[n/4:]))
			if math.IsNaN(float64(w.Scale)) || math.IsInf(float64(w.Scale), 0) {
				return nil, fmt.Errorf("I2_S scale is %v", w.Scale)
			}
			return nil, nil
		}),
		prepare: func(w *Matrix, a *Activation, x []float32) {
			a.q = resizeI8(a.q, w.kPad)
			a.s, a.sum = QuantizeI8S(a.q[:len(x)], x)
			clear(a.q[len(x):])
		},
		row: func(w *Matrix, r int, a *Activation) float32 {
			return i2sOut(dotI2S(w.raw[r*w.rowB:(r+1)*w.rowB], a.q), a, w.Scale)
		},
		embed: func(w *Matrix, dst []float32, id int) {
			for i := range w.K {
				e := id*w.kPad + i
				g, j := e/128, e%128
				c := w.raw[g*32+j%32] >> (6 - 2*uint(j/32)) & 3
				dst[i] = float32(int(c)-1) * w.Scale
			}
		},
	})
	_ = registerWeightKernel(q8KKernel(gguf.TypeTQ1_0, dotTQ1_0, func(w *Matrix, dst []float32, id int) { w.embedRowTQ(dst, id, true) }))
	_ = registerWeightKernel(q8KKernel(gguf.TypeTQ2_0, dotTQ2_0, func(w *Matrix, dst []float32, id int) { w.embedRowTQ(dst, id, false) }))
	_ = registerWeightKernel(q8KKernel(gguf.TypeQ6_K, dotQ6K, (*Matrix).embedRowQ6K))
	_ = registerWeightKernel(q8KKernel(gguf.TypeQ4_K, dotQ4K, (*Matrix).embedRowQ4K))
	_ = registerWeightKernel(iqbnKernel(gguf.TypeIQ1BN))
	_ = registerWeightKernel(iqbnKernel(gguf.TypeIQ2BN))
)

// viewHalves keeps F16/BF16 data as uint16 bits in place.
func viewHalves(w *Matrix, data []byte, _ int) (*Matrix, error) {
	w.u16 = viewU16(data, w.K*w.M)
	return nil, nil
}

// prepareQ8_0 quantizes x to Q8_0 blocks (QuantizeQ8_0).
func prepareQ8_0(_ *Matrix, a *Activation, x []float32) {
	a.q = resizeI8(a.q, len(x))
	a.d = resizeF32(a.d, len(x)/q8Block)
	QuantizeQ8_0(a.q, a.d, x)
}

// q8KKernel is the table row of a type whose activations are Q8_K (TQ1_0,
// TQ2_0, Q6_K, Q4_K: k % 256 == 0).
func q8KKernel(t gguf.Type, dot func(row []byte, a *Activation) float32, embed func(w *Matrix, dst []float32, id int)) weightKernel {
	return weightKernel{
		typ:     t,
		setup:   rowMultiple(qkK, "QK_K", rawBlocks),
		prepare: func(w *Matrix, a *Activation, x []float32) { a.prepareQ8K(x, w.Type, w.M) },
		row:     func(w *Matrix, r int, a *Activation) float32 { return dot(w.raw[r*w.rowB:(r+1)*w.rowB], a) },
		embed:   embed,
	}
}

// iqbnKernel is the table row of IQ1_BN / IQ2_BN (k % 64 == 0, k ≥ 512,
// as ik_llama.cpp multiplies them; iqbn.go).
func iqbnKernel(t gguf.Type) weightKernel {
	return weightKernel{
		typ: t,
		setup: func(w *Matrix, data []byte, _ int) (*Matrix, error) {
			return newIQBNMatrix(w.Type, w.K, w.M, data)
		},
		prepare: func(_ *Matrix, a *Activation, x []float32) { a.prepareQ8K64(x) },
		row:     (*Matrix).iqbnRow,
		embed:   (*Matrix).iqbnEmbedRow,
	}
}
