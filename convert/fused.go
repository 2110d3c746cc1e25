package convert

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// fusedPiece is the number of values a worker reads (pread) and processes
// at a time on the fused bf16 → I2_S path: 128 KiB of bf16, a multiple of
// every cascade block length (512 or 1024 values for any real tensor) and of
// the 128-value I2_S block.
const fusedPiece = 1 << 16

// fusedOff sends every projection down the general path; only tests set it,
// to compare the two paths' bytes.
var fusedOff = false

// fusedI2S reports whether projection t, stored as d, takes the fused path
// (projectionI2S): bf16 master weights to the x86 I2_S layout without rope
// reordering, with torch's abs-mean in block form (quantize.AbsMeanBlocks)
// and the block length dividing fusedPiece. Everything else — packed U8,
// F16/F32 masters, other formats and layouts, rope-permuted rows — takes
// the general path (ternary, projection), which gives the same bytes.
func (c *converter) fusedI2S(t *PlannedTensor, d *hf.TensorData) bool {
	if fusedOff {
		return false
	}
	f, ok := t.Format.(format.I2S)
	if !ok || (f.Layout != "" && f.Layout != format.LayoutX86) || t.Packed || d.Ref.DType != hf.BF16 || len(t.HFShape) != 2 {
		return false
	}
	if rp, ok := c.plan.Converter.(RopePermuter); ok && rp.RopeHeads(t.GGUFName) > 0 {
		return false
	}
	n := t.HFShape[0] * t.HFShape[1]
	if n%128 != 0 || n != d.Ref.NElements() || uint64(len(d.Raw)) != 2*n || n > math.MaxInt/2 || t.Bytes != n/4+format.I2STailBytes {
		return false
	}
	blockLen, _, ok := quantize.AbsMeanBlocks(int(n))
	return ok && fusedPiece%blockLen == 0
}

// projectionI2S converts a bf16 projection to I2_S in two passes over
// pieces of fusedPiece values, without a float32 copy or a code buffer:
// pass 1 reads each piece from the shard (TensorData.ReadAt, not the
// mapping) into a reused bf16 buffer and computes its abs-mean block sums
// (kernels.AbsSumBF16Blocks); the abs-mean is then replayed in torch's
// order (quantize.AbsMeanFromBlocks); pass 2 ternarizes and packs every
// piece into the output (kernels.TernarizePackI2S). Both passes run on
// c.threads goroutines, each taking the same contiguous run of pieces in
// both, so pass 2 finds its bytes where pass 1 left them in the cache. The
// bytes equal the general path's (ternary + I2S.Encode). ok is false, with
// nothing written, when a value is ±Inf or NaN: the general path then
// reports it with its index.
func (c *converter) projectionI2S(ctx context.Context, t *PlannedTensor, d *hf.TensorData) (out []byte, ok bool, err error) {
	n := int(t.HFShape[0] * t.HFShape[1])
	blockLen, nb, _ := quantize.AbsMeanBlocks(n)
	if c.bf16 == nil {
		c.bf16 = &osx.Buffer{}
	}
	c.bf16.Grow(2 * n)
	c.sums = grow(c.sums, 32*nb)
	raw, sums := c.bf16.Bytes()[:2*n], c.sums
	pieces := (n + fusedPiece - 1) / fusedPiece
	var mu sync.Mutex
	var readErr error
	bad := false
	parallel.For(pieces, c.threads, func(p0, p1 int) {
		for p := p0; p < p1 && ctx.Err() == nil; p++ {
			lo, hi := p*fusedPiece, min(n, (p+1)*fusedPiece)
			if _, err := d.ReadAt(raw[2*lo:2*hi], int64(2*lo)); err != nil {
				mu.Lock()
				if readErr == nil {
					readErr = err
				}
				mu.Unlock()
				return
			}
			b0, b1 := lo/blockLen, min(hi, nb*blockLen)/blockLen
			if b1 > b0 && kernels.AbsSumBF16Blocks(sums[32*b0:32*b1], raw[2*b0*blockLen:2*b1*blockLen], blockLen) {
				mu.Lock()
				bad = true
				mu.Unlock()
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if readErr != nil {
		return nil, false, readErr
	}
	c.f32 = grow(c.f32, n-nb*blockLen)
	tail := c.f32
	if bad || hf.DecodeFloats(tail, raw[2*nb*blockLen:], hf.BF16) >= 0 {
		return nil, false, nil
	}
	m := max(quantize.AbsMeanFromBlocks(n, sums, tail), quantize.AbsMeanFloor)
	if math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
		return nil, false, absMeanOverflow(t, m)
	}
	inv := 1 / m
	scale := 1 / inv
	c.out = grow(c.out, int(t.Bytes))
	out = c.out
	parallel.For(pieces, c.threads, func(p0, p1 int) {
		for p := p0; p < p1 && ctx.Err() == nil; p++ {
			lo, hi := p*fusedPiece, min(n, (p+1)*fusedPiece)
			kernels.TernarizePackI2S(out[lo/4:hi/4], raw[2*lo:2*hi], inv)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	// The tail of I2S.Encode: the float32 scale and a zero pad.
	binary.LittleEndian.PutUint32(out[n/4:], math.Float32bits(scale))
	clear(out[n/4+4:])
	if m == quantize.AbsMeanFloor {
		c.warn("tensor %s: abs-mean is %g (all weights ~0); its ternary codes are all zero", t.HFName, m)
	}
	if c0, same := samePacked(out[:n/4]); same {
		c.warn("tensor %s: every ternary code is %d", t.HFName, c0)
	}
	return out, true, nil
}

// samePacked reports whether every code of the packed I2_S bytes is the
// same, and which: each byte holds four codes, so that is every byte being
// 0x00 (−1), 0x55 (0) or 0xaa (+1).
func samePacked(b []byte) (code int8, same bool) {
	if len(b) == 0 || b[0]%0x55 != 0 || b[0] == 0xff {
		return 0, false
	}
	for _, v := range b {
		if v != b[0] {
			return 0, false
		}
	}
	return int8(b[0]/0x55) - 1, true
}

// absMeanOverflow is the error for an abs-mean that overflows float32.
func absMeanOverflow(t *PlannedTensor, m float32) error {
	// Finite weights near the float32 maximum overflow torch's float32
	// abs-mean too; summing in float64 instead would change the golden
	// scales, so the tensor is refused rather than written with a +Inf
	// scale no runtime accepts (defect D5).
	return fmt.Errorf("tensor %s: the abs-mean of its weights overflows float32 (%v); the weights are not a trained model's (values near 3.4e38), fix the checkpoint", t.HFName, m)
}
