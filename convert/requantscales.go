package convert

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

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
			for _, off := range offs {
				v := quantize.F16ToF32(binary.LittleEndian.Uint16(buf[o+off:]))
				if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
					return fmt.Errorf("tensor %s: %s block %d scale is %v; the input is damaged, reconvert it", ti.Name, ti.Type, b, v)
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
