package convert

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// blockScaleOffsets are the byte offsets of the f16 scales (d, and dmin or
// m) inside one block of each ggml block type requant may meet, from the
// block structs of ggml-org/llama.cpp ggml/src/ggml-common.h (block_q4_0 …
// block_q6_K, block_tq1_0, block_tq2_0).
var blockScaleOffsets = map[gguf.Type][]int{
	gguf.TypeQ4_0:  {0},
	gguf.TypeQ4_1:  {0, 2},
	gguf.TypeQ5_0:  {0},
	gguf.TypeQ5_1:  {0, 2},
	gguf.TypeQ8_0:  {0},
	gguf.TypeQ2_K:  {80, 82},
	gguf.TypeQ3_K:  {108},
	gguf.TypeQ4_K:  {0, 2},
	gguf.TypeQ5_K:  {0, 2},
	gguf.TypeQ6_K:  {208},
	gguf.TypeTQ1_0: {52},
	gguf.TypeTQ2_0: {64},
}

// checkBlockScales reads tensor ti of a block type in blockScaleOffsets a
// chunk of blocks at a time and returns an error naming the tensor and the
// block whose stored f16 scale is NaN or ±Inf (the runtime refuses such
// data too; requant must not pass it on). Other types return nil.
func (r *requanter) checkBlockScales(ti gguf.TensorInfo) error {
	offs, ok := blockScaleOffsets[ti.Type]
	if !ok {
		return nil
	}
	tr, _ := ti.Type.Traits()
	bs := int(tr.TypeSize)
	s, n, err := r.section(ti)
	if err != nil {
		return err
	}
	buf := make([]byte, bs*max(1, (1<<20)/bs))
	for b, done := 0, int64(0); done < n; {
		c := min(int64(len(buf)), n-done)
		if _, err := io.ReadFull(s, buf[:c]); err != nil {
			return fmt.Errorf("tensor %s: %w", ti.Name, err)
		}
		for o := 0; o+bs <= int(c); o, b = o+bs, b+1 {
			for j, off := range offs {
				v := quantize.F16ToF32(binary.LittleEndian.Uint16(buf[o+off:]))
				if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
					what := "scale"
					if j == 1 {
						// ggml-common.h: dmin of the K-quants, m of Q4_1/Q5_1
						what = "min scale dmin"
						if ti.Type == gguf.TypeQ4_1 || ti.Type == gguf.TypeQ5_1 {
							what = "min m"
						}
					}
					return fmt.Errorf("tensor %s: %s block %d %s is %v; the input is damaged, reconvert it", ti.Name, ti.Type, b, what, v)
				}
			}
		}
		done += c
	}
	return nil
}

// finiteScales returns an error naming the tensor and the first of sc, the
// scales a format decoded, that is NaN or ±Inf.
func finiteScales(ti gguf.TensorInfo, sc []float32) error {
	for g, v := range sc {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("tensor %s: %s scale %d is %v; the input is damaged, reconvert it", ti.Name, ti.Type, g, v)
		}
	}
	return nil
}

// storableScales returns an error naming the tensor, the scale's block or
// row and its value when a scale of sc (grouped as to stores them,
// to.ScaleGroup) is not finite once stored by to: TQ1_0, TQ2_0 and IQ1_BN
// keep f16 scales (ggml-common.h block_tq1_0, block_tq2_0; ik_llama.cpp's
// IQ1_BN row scale), so a source scale beyond 65504 would become +Inf.
func storableScales(ti gguf.TensorInfo, to format.Format, sc []float32) error {
	k := int(ti.Ne[0])
	g := to.ScaleGroup(k)
	for i, v := range sc {
		if f := float64(to.StoredScale(v)); !math.IsNaN(f) && !math.IsInf(f, 0) {
			continue
		}
		where := "the tensor scale"
		switch {
		case g == k:
			where = fmt.Sprintf("the scale of row %d", i)
		case g > 0:
			where = fmt.Sprintf("the scale of block %d (row %d)", i, i*g/k)
		}
		return fmt.Errorf("tensor %s: %s is %v, out of %s's range (f16 scales, max 65504); the input cannot be stored as %s; keep a type with f32 scales (--outtype %s)", ti.Name, where, v, to.Name(), to.Name(), strings.Join(format.F32ScaleNames(), ", "))
	}
	return nil
}

// encodedScalesFinite returns an error naming the block, its f16 scale and
// the largest |value| of the block when quantizing x into dst (of type t,
// Q8_0 or Q6_K) left a scale that is not finite: values beyond the type's
// range (f16 scale max 65504 times the largest level).
func encodedScalesFinite(dst []byte, t gguf.Type, x []float32) error {
	tr, _ := t.Traits()
	bs, be := int(tr.TypeSize), int(tr.BlockSize)
	for b, o := 0, 0; o+bs <= len(dst); b, o = b+1, o+bs {
		for _, off := range blockScaleOffsets[t] {
			v := quantize.F16ToF32(binary.LittleEndian.Uint16(dst[o+off:]))
			if f := float64(v); !math.IsNaN(f) && !math.IsInf(f, 0) {
				continue
			}
			var amax float64
			for _, e := range x[b*be : min(len(x), (b+1)*be)] {
				amax = math.Max(amax, math.Abs(float64(e)))
			}
			return fmt.Errorf("%s block %d (elements %d…%d): max |value| %g gives scale %v, out of %s's range (f16 scales, max 65504); keep this tensor F32 (or BF16) instead", t, b, b*be, (b+1)*be-1, amax, v, t)
		}
	}
	return nil
}
