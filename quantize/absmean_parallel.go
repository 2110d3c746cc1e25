package quantize

import (
	"sync"

	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
)

// AbsMeanParallel is AbsMean computed on up to threads goroutines, with the
// same bits as AbsMean for every input. Torch's cascade resets its level-0
// accumulators after every block of rows, so the block sums are independent:
// they are computed concurrently, then combined through the cascade in the
// original order (multiRowSum with precomputed block sums).
func AbsMeanParallel(x []float32, threads int) float32 {
	o := DefaultSumOrder
	if threads <= 1 || o.Threads != 1 || len(x) < 1<<18 {
		return o.AbsMean(x)
	}
	w := min(max(o.VecWidth, 1), maxVecWidth)
	n := len(x) / w / torchILP // multiRowSum's rows
	_, step := cascadeLevel(n)
	nblocks := n / step
	pp := partialPool.Get().(*[][torchILP]lanes)
	defer partialPool.Put(pp)
	if cap(*pp) < nblocks {
		*pp = make([][torchILP]lanes, nblocks)
	}
	partial := (*pp)[:nblocks]
	parallel.For(nblocks, threads, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			partial[b] = blockSum(x, w, step, b)
		}
	})
	return o.chunkSum(x, partial) / float32(len(x))
}

// partialPool keeps the block-sum buffers (256 bytes per 512 input floats)
// from one tensor to the next, so a conversion does not leave megabytes of
// garbage per tensor behind.
var partialPool = sync.Pool{New: func() any { return new([][torchILP]lanes) }}
