package quantize

import "github.com/bitnet-convert/bitnet-convert/internal/kernels"

// AbsMeanBlocks returns how AbsMeanFromBlocks splits an n-value tensor: the
// level-0 block length of torch's cascade sum (in values, a multiple of 32)
// and the number of whole blocks, which cover x[:nblocks·blockLen]. ok is
// false when the block form does not apply — fewer than 1024 values, or a
// DefaultSumOrder other than 8 lanes on one thread — and callers then use
// AbsMean on the whole tensor.
func AbsMeanBlocks(n int) (blockLen, nblocks int, ok bool) {
	if n < 1024 || DefaultSumOrder != (TorchSumOrder{VecWidth: 8, Threads: 1}) {
		return 0, 0, false
	}
	rows := n / 8 / torchILP // multiRowSum's rows of 4 vectors of 8
	_, step := cascadeLevel(rows)
	return step * 8 * torchILP, rows / step, true
}

// AbsMeanFromBlocks returns AbsMean(x) (the same bits) for an n-value tensor
// x given as its level-0 block sums and its tail: with blockLen and nblocks
// from AbsMeanBlocks(n), sums[32b+8k+l] is the float32 sum from zero, row by
// row, of |x[b·blockLen+32i+8k+l]| (internal/kernels.AbsSumBF16Blocks, or
// AddAbs4x8 of the block from a zero accumulator), and tail is
// x[nblocks·blockLen:]. Torch's cascade (SumKernel.cpp multi_row_sum) resets
// its level-0 accumulators after every block, so the sums can be computed
// anywhere, in any order, straight from the checkpoint's bytes; this
// function replays the carries above level 0, the leftover rows, vectors
// and scalars in torch's order, as chunkSum does with AbsMeanParallel's
// partial sums. It panics when the lengths do not match AbsMeanBlocks(n).
func AbsMeanFromBlocks(n int, sums, tail []float32) float32 {
	blockLen, nb, ok := AbsMeanBlocks(n)
	if !ok || len(sums) != 32*nb || len(tail) != n-nb*blockLen {
		panic("quantize: AbsMeanFromBlocks: lengths do not match AbsMeanBlocks")
	}
	const w = 8
	nvec := n / w
	nrows := nvec / torchILP
	power, step := cascadeLevel(nrows)
	base := nb * blockLen // index of tail[0] in x
	var acc [torchLevels][w * torchILP]float32
	// After block b, level 0 (the block's sum) is carried into level 1;
	// level 1 into level 2 when b+1 is a multiple of step, and level 2 into
	// level 3 when it is a multiple of step² (multi_row_sum's carry with
	// i = (b+1)·step). Level 1 is thus a plain running sum of the block sums
	// between those points, added lane by lane in order: AddAbs4x8 (the
	// sums are sums of absolute values from +0, so |sum| is the sum).
	for b := 0; b < nb; {
		e := min(nb, (b/step+1)*step)
		kernels.AddAbs4x8(&acc[1], sums[32*b:32*e])
		b = e
		if b%step != 0 {
			continue
		}
		for j := 2; j < torchLevels; j++ {
			for q := range acc[j] {
				acc[j][q] += acc[j-1][q]
			}
			acc[j-1] = [w * torchILP]float32{}
			if (b/step)%(step<<((j-2)*power)) != 0 {
				break
			}
		}
	}
	i := nb * step
	for ; i < nrows; i++ { // rows after the last whole block
		row := tail[i*32-base : i*32-base+32]
		for q, f := range row {
			acc[0][q] += abs32(f)
		}
	}
	for j := 1; j < torchLevels; j++ {
		for q := range acc[0] {
			acc[0][q] += acc[j][q]
		}
	}
	// rowSum: the vectors after the last row join accumulator 0, then the
	// four accumulators are added in order.
	for v := nrows * torchILP; v < nvec; v++ {
		for l, f := range tail[v*w-base : v*w-base+w] {
			acc[0][l] += abs32(f)
		}
	}
	for k := 1; k < torchILP; k++ {
		for l := 0; l < w; l++ {
			acc[0][l] += acc[0][k*w+l]
		}
	}
	// chunkSum: the scalar tail, then the lanes in order.
	var s float32
	for _, f := range tail[nvec*w-base:] {
		s += abs32(f)
	}
	for l := 0; l < w; l++ {
		s += acc[0][l]
	}
	return s / float32(n)
}
