package quantize

import (
	"math"

	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// AbsMeanFloor is the lower bound applied to the abs-mean before inverting
// it (weight_quant: m.clamp_(min=1e-5)), so an all-zero tensor gets a finite
// scale.
const AbsMeanFloor float32 = 1e-5

// Torch CPU reduction constants (aten/src/ATen/native/cpu/SumKernel.cpp and
// TensorIteratorReduce.cpp): a 1-D float sum is split into at most
// numThreads chunks of ≥ grainSize elements, and each chunk is summed by a
// cascade of vector accumulators.
const (
	torchGrainSize = 32768 // at::internal::GRAIN_SIZE
	torchILP       = 4     // row_sum ilp_factor
	torchLevels    = 4     // multi_row_sum num_levels
)

// TorchSumOrder describes the float32 summation order of torch's CPU sum
// (SumKernel.cpp cascade_sum) for one contiguous tensor.
//
// VecWidth is the number of float lanes of at::vec::Vectorized<float> (8 for
// AVX2, 16 for AVX-512; values outside 1..16 are clamped). Threads is torch's intra-op thread count; a sum of n
// elements is split into min(Threads, ceil(n/32768)) equal chunks whose sums
// are added in order (two_pass_reduction).
type TorchSumOrder struct {
	VecWidth int
	Threads  int
}

// DefaultSumOrder is the summation order that reproduces the abs-mean
// scales of the golden tiny-bitnet conversion (see ternary_golden_test.go
// for how many of its 14 scales are bit-exact).
var DefaultSumOrder = TorchSumOrder{VecWidth: 8, Threads: 1}

// AbsMean returns mean(|x|) as torch computes x.abs().mean() in float32 on an
// x86 CPU: the float32 sum in DefaultSumOrder, divided by float32(len(x)).
// It returns 0 for an empty slice (torch would return NaN; callers floor the
// value with AbsMeanFloor anyway).
func AbsMean(x []float32) float32 {
	return DefaultSumOrder.AbsMean(x)
}

// AbsMean is AbsMean with the summation order o.
func (o TorchSumOrder) AbsMean(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return o.sumAbs(x) / float32(len(x))
}

// sumAbs is torch's sum of |x| for a contiguous float32 tensor.
func (o TorchSumOrder) sumAbs(x []float32) float32 {
	n := len(x)
	chunks := 1
	if o.Threads > 1 && n >= torchGrainSize {
		chunks = min(o.Threads, (n+torchGrainSize-1)/torchGrainSize)
	}
	if chunks == 1 {
		return o.chunkSum(x, nil)
	}
	size := (n + chunks - 1) / chunks
	var total float32
	for b := 0; b < n; b += size {
		total += o.chunkSum(x[b:min(n, b+size)], nil)
	}
	return total
}

// chunkSum mirrors vectorized_inner_sum (contiguous inner reduction, n ≥ VecWidth)
// or, for short inputs, the scalar path with four scalar accumulators.
// partial, when not nil, holds multiRowSum's block sums already computed
// (see AbsMeanParallel).
func (o TorchSumOrder) chunkSum(x []float32, partial [][torchILP]lanes) float32 {
	w := min(max(o.VecWidth, 1), maxVecWidth)
	if len(x) < w {
		w = 1
	}
	nvec := len(x) / w
	lanes := rowSum(x, w, nvec, partial)
	var acc float32
	for k := nvec * w; k < len(x); k++ {
		acc += abs32(x[k])
	}
	for _, v := range lanes {
		acc += v
	}
	return acc
}

// maxVecWidth bounds TorchSumOrder.VecWidth (AVX-512 has 16 float lanes).
const maxVecWidth = 16

type lanes = [maxVecWidth]float32

// rowSum is torch's row_sum over nvec vectors of width w: four interleaved
// accumulators (ilp), each a cascade, then the leftover vectors, then the
// accumulators added in order. It returns the w lanes. partial is passed on
// to multiRowSum.
func rowSum(x []float32, w, nvec int, partial [][torchILP]lanes) []float32 {
	nilp := nvec / torchILP
	acc := multiRowSum(x, w, nilp, partial)
	for i := nilp * torchILP; i < nvec; i++ {
		addAbs(&acc[0], x[i*w:i*w+w])
	}
	for k := 1; k < torchILP; k++ {
		for l := 0; l < w; l++ {
			acc[0][l] += acc[k][l]
		}
	}
	return acc[0][:w]
}

// addAbs adds |v[l]| to lane l.
func addAbs(acc *lanes, v []float32) {
	for l, f := range v {
		acc[l] += abs32(f)
	}
}

// cascadeLevel returns multi_row_sum's level width for n rows:
// 2^max(4, ceil(log2 n)/4) rows, as the power and the row count.
func cascadeLevel(n int) (power, step int) {
	power = max(4, ceilLog2(n)/torchLevels)
	return power, 1 << power
}

// blockSum is the level-0 sum of block b (rows [b·step, (b+1)·step) of
// torchILP vectors of width w), accumulated from zero as multi_row_sum does
// after every carry.
func blockSum(x []float32, w, step, b int) (a [torchILP]lanes) {
	stride := torchILP * w
	if w == 8 {
		// The same additions in the same order, eight lanes at a time
		// (internal/kernels.AddAbs4x8: assembly where available).
		var t [32]float32
		kernels.AddAbs4x8(&t, x[b*step*stride:(b+1)*step*stride])
		for k := range a {
			copy(a[k][:8], t[8*k:8*k+8])
		}
		return a
	}
	for i := b * step; i < (b+1)*step; i++ {
		row := x[i*stride : i*stride+stride]
		for k := 0; k < torchILP; k++ {
			addAbs(&a[k], row[k*w:k*w+w])
		}
	}
	return a
}

// multiRowSum is torch's multi_row_sum with nrows = 4 vector columns: a
// four-level cascade (see cascadeLevel). Level 0 is reset after every full
// block, so block sums are independent: partial, when not nil, holds them
// precomputed (partial[b] = blockSum(x, w, step, b)); the cascade replays
// them in order, which gives the same bits.
func multiRowSum(x []float32, w, n int, partial [][torchILP]lanes) [torchILP]lanes {
	levelPower, levelStep := cascadeLevel(n)
	levelMask := levelStep - 1
	var acc [torchLevels][torchILP]lanes
	stride := torchILP * w
	i := 0
	for b := 0; b < n/levelStep; b++ {
		if partial != nil {
			acc[0] = partial[b]
		} else {
			acc[0] = blockSum(x, w, levelStep, b)
		}
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

// ceilLog2 is c10's CeilLog2: 1 for x ≤ 2, else ceil(log2 x).
func ceilLog2(x int) int {
	if x <= 2 {
		return 1
	}
	b := 0
	for v := uint64(x - 1); v != 0; v >>= 1 {
		b++
	}
	return b
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// Ternarize applies BitNet abs-mean ternarization to one whole tensor x (any
// shape, flat; one scale per tensor), as BitnetModel.weight_quant in
// bitnet.cpp's convert-hf-to-gguf-bitnet.py does (spec conversion.md §2.1):
//
//	m = max(AbsMean(x), 1e-5)      float32
//	s = f32(1/m)
//	t = clamp(roundHalfEven(f32(x·s)), -1, 1)
//
// It writes the codes t ∈ {-1, 0, +1} into dst and returns scale = f32(1/s),
// the magnitude of every nonzero dequantized value (what the reference stores
// as the I2_S scale), and absMean = m (after the floor). NaN inputs give code 0
// and ±Inf saturate to ±1, but an Inf or NaN anywhere also makes m non-finite;
// callers should reject such tensors first (F16Overflow reports them).
// It panics if len(dst) != len(x).
func Ternarize(dst []int8, x []float32) (scale float32, absMean float32) {
	if len(dst) != len(x) {
		panic("quantize: Ternarize: len(dst) != len(x)")
	}
	m := max(AbsMean(x), AbsMeanFloor)
	s := 1 / m
	TernarizeWith(dst, x, s)
	return 1 / s, m
}

// TernarizeWith writes t = clamp(roundHalfEven(f32(x·inv)), -1, 1) for every
// element (the second half of weight_quant, with inv = 1/m already computed).
// It panics if len(dst) != len(x).
func TernarizeWith(dst []int8, x []float32, inv float32) {
	if len(dst) != len(x) {
		panic("quantize: TernarizeWith: len(dst) != len(x)")
	}
	// round-half-even then clamp to [-1, 1] is: +1 above 0.5, -1 below
	// -0.5, else 0 (0.5 itself rounds to 0; NaN compares false);
	// internal/kernels.Ternarize has the assembly and the pure-Go loop.
	kernels.Ternarize(dst, x, inv)
}
