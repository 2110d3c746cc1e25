package quantize

import "sync"

// AbsMeanParallel is AbsMean computed on up to threads goroutines, with the
// same bits as AbsMean for every input. Torch's cascade resets its level-0
// accumulators after every block of rows, so the block sums are independent:
// they are computed concurrently, then combined through the cascade in the
// original order (multiRowSum's replay).
func AbsMeanParallel(x []float32, threads int) float32 {
	o := DefaultSumOrder
	w := min(max(o.VecWidth, 1), maxVecWidth)
	if threads <= 1 || o.Threads != 1 || len(x) < 1<<18 {
		return o.AbsMean(x)
	}
	nvec := len(x) / w
	nilp := nvec / torchILP
	acc := multiRowSumParallel(x, w, nilp, threads)
	for i := nilp * torchILP; i < nvec; i++ {
		addAbs(&acc[0], x[i*w:i*w+w])
	}
	for k := 1; k < torchILP; k++ {
		for l := 0; l < w; l++ {
			acc[0][l] += acc[k][l]
		}
	}
	var s float32
	for k := nvec * w; k < len(x); k++ {
		s += abs32(x[k])
	}
	for _, v := range acc[0][:w] {
		s += v
	}
	return s / float32(len(x))
}

// partialPool keeps the block-sum buffers (256 bytes per 512 input floats)
// from one tensor to the next, so a conversion does not leave megabytes of
// garbage per tensor behind.
var partialPool = sync.Pool{New: func() any { return new([][torchILP]lanes) }}

// multiRowSumParallel equals multiRowSum(x, w, n).
func multiRowSumParallel(x []float32, w, n, threads int) [torchILP]lanes {
	levelPower := max(4, ceilLog2(n)/torchLevels)
	levelStep := 1 << levelPower
	levelMask := levelStep - 1
	stride := torchILP * w
	nblocks := n / levelStep
	pp := partialPool.Get().(*[][torchILP]lanes)
	defer partialPool.Put(pp)
	if cap(*pp) < nblocks {
		*pp = make([][torchILP]lanes, nblocks)
	}
	partial := (*pp)[:nblocks]
	per := (nblocks + threads - 1) / threads
	var wg sync.WaitGroup
	for b0 := 0; b0 < nblocks; b0 += per {
		b1 := min(nblocks, b0+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := b0; b < b1; b++ {
				var a [torchILP]lanes
				for i := b * levelStep; i < (b+1)*levelStep; i++ {
					row := x[i*stride : i*stride+stride]
					for k := 0; k < torchILP; k++ {
						addAbs(&a[k], row[k*w:k*w+w])
					}
				}
				partial[b] = a
			}
		}()
	}
	wg.Wait()
	var acc [torchLevels][torchILP]lanes
	i := 0
	for b := 0; b < nblocks; b++ {
		acc[0] = partial[b]
		i += levelStep
		for j := 1; j < torchLevels; j++ {
			for k := 0; k < torchILP; k++ {
				for l := 0; l < w; l++ {
					acc[j][k][l] += acc[j-1][k][l]
				}
				acc[j-1][k] = lanes{}
			}
			if i&(levelMask<<(j*levelPower)) != 0 {
				break
			}
		}
	}
	for ; i < n; i++ {
		row := x[i*stride : i*stride+stride]
		for k := 0; k < torchILP; k++ {
			addAbs(&acc[0][k], row[k*w:k*w+w])
		}
	}
	for j := 1; j < torchLevels; j++ {
		for k := 0; k < torchILP; k++ {
			for l := 0; l < w; l++ {
				acc[0][k][l] += acc[j][k][l]
			}
		}
	}
	return acc[0]
}
