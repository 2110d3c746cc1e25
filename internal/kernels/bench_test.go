package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// The benchmarks report bytes of weights streamed per second (b.SetBytes),
// to set beside BenchmarkMemoryRead, the machine's read bandwidth. "l2"
// sizes fit the cache (the kernel's own speed); "stream" sizes are 128 MiB,
// four times this machine's 32 MiB L3, so the weights come from memory as
// they do in a real model. docs/performance.md records the figures.

const streamBytes = 128 << 20

// split runs f over [0, n) in threads contiguous chunks, like the runtime's
// row split.
func split(n, threads int, f func(lo, hi int)) {
	if threads == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + threads - 1) / threads
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { f(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// BenchmarkDotI2S: rows of K = 2560 inputs (the 2B-4T hidden size; 640
// packed bytes each) against one quantized activation, as in a matrix-vector
// product.
func BenchmarkDotI2S(b *testing.B) {
	const k = 2560
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name  string
		bytes int
	}{{"l2", 256 << 10}, {"stream", streamBytes}} {
		rows := c.bytes / (k / 4)
		w, _ := randI2S(r, rows*k/128)
		_, q := randI2S(r, k/128)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					split(rows, th, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							DotI2S(w[i*k/4:(i+1)*k/4], q)
						}
					})
				}
			})
		}
	}
}

// BenchmarkDotI2SRows: BenchmarkDotI2S's rows through the multi-row kernel
// (one call per thread's range of rows, the epilogue included), and rows
// of K = 1536 (the bitnet_b1_58-large hidden size, 384 bytes each), where
// the per-row call of DotI2S costs the most.
func BenchmarkDotI2SRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{2560, 1536} {
		for _, c := range []struct {
			name  string
			bytes int
		}{{"l2", 256 << 10}, {"stream", streamBytes}} {
			rows := c.bytes / (k / 4)
			w, _ := randI2S(r, rows*k/128)
			_, q := randI2S(r, k/128)
			dst := make([]float32, rows)
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("k=%d/%s/threads=%d", k, c.name, th), func(b *testing.B) {
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						split(rows, th, func(lo, hi int) {
							DotI2SRows(dst[lo:hi], w[lo*k/4:hi*k/4], q, 3, 0.25, 1.5)
						})
					}
				})
			}
		}
	}
}

// BenchmarkDotIQ2BNRows: BenchmarkDotI2SRows for IQ2_BN rows of K = 2560
// (an f32 scale and 640 bytes of blocks each) through DotIQ2BNRows, with
// the Q8_K64 epilogue; the amd64 variant benchmark runs the AVX2 kernel on
// AVX-512 machines.
func BenchmarkDotIQ2BNRows(b *testing.B) {
	const k = 2560
	r := rand.New(rand.NewPCG(3, 3))
	rowB := 4 + k/4
	q := make([]int8, k)
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	d, minus := [4]float32{0.01, 0.02, 0.03, 0.04}, [4]float32{1, -2, 3, -4}
	for _, c := range []struct {
		name  string
		bytes int
	}{{"l2", 256 << 10}, {"stream", streamBytes}} {
		rows := c.bytes / rowB
		w := make([]byte, rows*rowB)
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		for i := 0; i < rows; i++ {
			binary.LittleEndian.PutUint32(w[i*rowB:], math.Float32bits(0.5))
		}
		dst := make([]float32, rows)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					split(rows, th, func(lo, hi int) {
						DotIQ2BNRows(dst[lo:hi], w[lo*rowB:hi*rowB], rowB, q, &d, &minus)
					})
				}
			})
		}
	}
}

// BenchmarkDotI2S4: BenchmarkDotI2S's rows against four activations at once
// (the batched product); bytes are the weights read, once for four tokens,
// so the figure × 4 compares with DotI2S's per-token rate.
func BenchmarkDotI2S4(b *testing.B) {
	const k = 2560
	r := rand.New(rand.NewPCG(1, 4))
	var qs [4][]int8
	for t := range qs {
		_, qs[t] = randI2S(r, k/128)
	}
	for _, c := range []struct {
		name  string
		bytes int
	}{{"l2", 256 << 10}, {"stream", streamBytes}} {
		rows := c.bytes / (k / 4)
		w, _ := randI2S(r, rows*k/128)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					split(rows, th, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							DotI2S4(w[i*k/4:(i+1)*k/4], qs[0], qs[1], qs[2], qs[3])
						}
					})
				}
			})
		}
	}
}

// BenchmarkDotF16Rows: BenchmarkDotF16's rows through the multi-row
// kernel, one call per thread's range of rows.
func BenchmarkDotF16Rows(b *testing.B) {
	benchF16(b, func(dst []float32, w []uint16, x []float32, k, lo, hi int) {
		DotF16Rows(dst[lo:hi], w[lo*k:hi*k], x)
	})
}

// BenchmarkDotF16: rows of K = 1536 F16 weights (the output head of the
// 1bitLLM large shape) against one F16-rounded activation.
func BenchmarkDotF16(b *testing.B) {
	benchF16(b, func(_ []float32, w []uint16, x []float32, k, lo, hi int) {
		for i := lo; i < hi; i++ {
			DotF16(w[i*k:(i+1)*k], x)
		}
	})
}

// benchF16 times rows(dst, w, x, k, lo, hi) over rows of K = 1536 F16
// weights that fit the L2 ("l2") or stream from memory ("stream"), split
// over 1 and 2 threads; bytes are the weights.
func benchF16(b *testing.B, rowsFn func(dst []float32, w []uint16, x []float32, k, lo, hi int)) {
	const k = 1536
	r := rand.New(rand.NewPCG(2, 2))
	x := make([]float32, k)
	for i := range x {
		x[i] = F16ToF32(randF16(r, 1, 1)[0])
	}
	for _, c := range []struct {
		name  string
		bytes int
	}{{"l2", 256 << 10}, {"stream", streamBytes}} {
		rows := c.bytes / (2 * k)
		w := randF16(r, rows*k, 0.05)
		dst := make([]float32, rows)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				b.SetBytes(int64(2 * len(w)))
				for b.Loop() {
					split(rows, th, func(lo, hi int) { rowsFn(dst, w, x, k, lo, hi) })
				}
			})
		}
	}
}

// BenchmarkQuantizeI8S: one activation row of 6912 floats (the 2B-4T FFN
// width); bytes are the float32 input.
func BenchmarkQuantizeI8S(b *testing.B) {
	const k = 6912
	r := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q := make([]int8, k)
	b.SetBytes(4 * k)
	for b.Loop() {
		QuantizeI8S(q, x)
	}
}

// BenchmarkMemoryRead is the machine's memory read bandwidth for the
// kernels' figures: a 128 MiB buffer read once per iteration by the
// absMaxBits kernel (two vector operations per 32 bytes, far below what
// memory delivers, so the figure is the memory's) on 1 and 2 threads.
// MemoryCopy is Go's copy (memmove) of 64 MiB; its bytes count the read
// and the write.
func BenchmarkMemoryRead(b *testing.B) {
	x := make([]float32, streamBytes/4)
	for i := range x {
		x[i] = float32(i)
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			b.SetBytes(streamBytes)
			for b.Loop() {
				split(len(x)/32, th, func(lo, hi int) { absMaxBits(x[lo*32 : hi*32]) })
			}
		})
	}
}

// BenchmarkMemoryCopy: see BenchmarkMemoryRead.
func BenchmarkMemoryCopy(b *testing.B) {
	src := make([]byte, streamBytes/2)
	dst := make([]byte, streamBytes/2)
	for i := range src {
		src[i] = byte(i)
	}
	b.SetBytes(streamBytes)
	for b.Loop() {
		copy(dst, src)
	}
}

// The converter's kernels, each over one 1536 × 4096 projection (the
// bitnet_b1_58-large FFN shape, 6.3 M values: 25 MiB as float32, beyond
// L2, partly in L3). Bytes are the kernel's input: float32 for AddAbs4x8
// and Ternarize, bf16 for DecodeBF16 and BF16ToF16, int8 codes for
// PackI2S, packed bytes for UnpackU8.
const projN = 1536 * 4096

func projInputs() (x []float32, raw []byte, codes []int8) {
	r := rand.New(rand.NewPCG(5, 5))
	x = make([]float32, projN)
	raw = make([]byte, 2*projN)
	codes = make([]int8, projN)
	for i := range x {
		x[i] = float32(r.NormFloat64()) * 0.02
		b := math.Float32bits(x[i]) >> 16
		raw[2*i], raw[2*i+1] = byte(b), byte(b>>8)
		codes[i] = int8(r.IntN(3)) - 1
	}
	return x, raw, codes
}

func BenchmarkAddAbs4x8(b *testing.B) {
	x, _, _ := projInputs()
	var acc [32]float32
	b.SetBytes(4 * projN)
	for b.Loop() {
		AddAbs4x8(&acc, x)
	}
}

func BenchmarkDecodeBF16(b *testing.B) {
	_, raw, _ := projInputs()
	dst := make([]float32, projN)
	b.SetBytes(2 * projN)
	for b.Loop() {
		DecodeBF16(dst, raw)
	}
}

func BenchmarkTernarize(b *testing.B) {
	x, _, _ := projInputs()
	dst := make([]int8, projN)
	b.SetBytes(4 * projN)
	for b.Loop() {
		Ternarize(dst, x, 50)
	}
}

func BenchmarkPackI2S(b *testing.B) {
	_, _, codes := projInputs()
	dst := make([]byte, projN/4)
	b.SetBytes(projN)
	for b.Loop() {
		PackI2S(dst, codes)
	}
}

func BenchmarkBF16ToF16(b *testing.B) {
	_, raw, _ := projInputs()
	out := make([]byte, 2*projN)
	b.SetBytes(2 * projN)
	for b.Loop() {
		BF16ToF16(out, raw)
	}
}

func BenchmarkUnpackU8(b *testing.B) {
	_, raw, _ := projInputs()
	packed := raw[:projN/4]
	codes := make([]int8, projN)
	b.SetBytes(projN / 4)
	for b.Loop() {
		UnpackU8(codes, projN/4, packed)
	}
}

func BenchmarkAbsSumBF16Blocks(b *testing.B) {
	_, raw, _ := projInputs()
	sums := make([]float32, projN/512*32)
	b.SetBytes(2 * projN)
	for b.Loop() {
		AbsSumBF16Blocks(sums, raw, 512)
	}
}

func BenchmarkTernarizePackI2S(b *testing.B) {
	_, raw, _ := projInputs()
	dst := make([]byte, projN/4)
	b.SetBytes(2 * projN)
	for b.Loop() {
		TernarizePackI2S(dst, raw, 50)
	}
}

// BenchmarkTernarySums: the integer cores of Q2_0, IQ2_BN, IQ1_BN, TQ2_0 and
// TQ1_0 over 64 rows of K = 2560 weights (the 2B-4T hidden size; in L2)
// against one activation, the selected kernel beside its pure-Go reference
// in the same run; MB/s is weight bytes per second.
func BenchmarkTernarySums(b *testing.B) {
	const k, rows = 2560, 64
	r := rand.New(rand.NewPCG(7, 7))
	q := make([]int8, k)
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	for _, c := range ternaryCases {
		rowB := c.bytes * k / c.weights
		data := make([]byte, rowB*rows)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		for _, impl := range []struct {
			name string
			f    func(row []byte, q []int8) []int32
		}{{"kernel", c.kernel}, {"ref", c.ref}} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					for r := 0; r < rows; r++ {
						impl.f(data[r*rowB:(r+1)*rowB], q)
					}
				}
			})
		}
	}
}

// BenchmarkTernaryFloat: the kernels with float epilogues (DotQ2_0, AccQ8_0,
// AccQ6K, AccTQ2_0, AccTQ1_0) over 64 rows of K = 2560 weights (in L2)
// with finite block scales, the selected kernel beside its pure-Go
// reference in the same run; MB/s is weight bytes per second.
func BenchmarkTernaryFloat(b *testing.B) {
	const k, rows = 2560, 64
	r := rand.New(rand.NewPCG(8, 8))
	q := make([]int8, k)
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	d := make([]float32, k/32)
	for i := range d {
		d[i] = float32(r.Float64()) / 64
	}
	bsums := make([]int16, k/16)
	for i := range bsums {
		bsums[i] = int16(r.IntN(2048) - 1024)
	}
	type dot func(acc *[8]float32, row []byte)
	for _, c := range []struct {
		name              string
		bytes, weights    int
		scaleAt           int
		kernel, reference dot
	}{
		{"Q2_0", q2_0Bytes, 64, 0,
			func(acc *[8]float32, row []byte) { acc[0] = DotQ2_0(row, q, d) },
			func(acc *[8]float32, row []byte) { acc[0] = dotQ2_0Ref(row, q, d) }},
		{"Q8_0", q8_0Bytes, 32, 0,
			func(acc *[8]float32, row []byte) { AccQ8_0(acc, row, q, d) },
			func(acc *[8]float32, row []byte) { accQ8_0Ref(acc, row, q, d) }},
		{"Q6_K", q6KBytes, 256, 208,
			func(acc *[8]float32, row []byte) { AccQ6K(acc, row, q, d) },
			func(acc *[8]float32, row []byte) { accQ6KRef(acc, row, q, d) }},
		{"TQ2_0", tq2Bytes, 256, 64,
			func(acc *[8]float32, row []byte) { AccTQ2_0(acc, row, q, bsums, d, true) },
			func(acc *[8]float32, row []byte) { accTQRef(acc, row, q, bsums, d, true, false) }},
		{"TQ1_0", tq1Bytes, 256, 52,
			func(acc *[8]float32, row []byte) { AccTQ1_0(acc, row, q, bsums, d, true) },
			func(acc *[8]float32, row []byte) { accTQRef(acc, row, q, bsums, d, true, true) }},
	} {
		rowB := c.bytes * k / c.weights
		data := make([]byte, rowB*rows)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		for p := c.scaleAt; p+1 < len(data); p += c.bytes {
			data[p+1] = byte(0x20 + r.IntN(8))
		}
		for _, impl := range []struct {
			name string
			f    dot
		}{{"kernel", c.kernel}, {"ref", c.reference}} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				var acc [8]float32
				for b.Loop() {
					for r := 0; r < rows; r++ {
						impl.f(&acc, data[r*rowB:(r+1)*rowB])
					}
				}
			})
		}
	}
}

// BenchmarkAccTQ2_0Rows: BenchmarkDotI2SRows's sizes for TQ2_0 rows of
// K = 2560 (660 bytes each) through the row-range kernel, the float
// epilogue included.
func BenchmarkAccTQ2_0Rows(b *testing.B) {
	const k = 2560
	r := rand.New(rand.NewPCG(9, 9))
	q := make([]int8, k)
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	d := make([]float32, k/256)
	for i := range d {
		d[i] = float32(r.Float64()) / 64
	}
	bsums := make([]int16, k/16)
	for i := range bsums {
		bsums[i] = int16(r.IntN(2048) - 1024)
	}
	rowB := k / 256 * tq2Bytes
	for _, c := range []struct {
		name  string
		bytes int
	}{{"l2", 256 << 10}, {"stream", streamBytes}} {
		rows := c.bytes / rowB
		w := make([]byte, rows*rowB)
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		for p := 64; p+1 < len(w); p += tq2Bytes {
			w[p+1] = byte(0x20 + r.IntN(8))
		}
		dst := make([]float32, rows)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					split(rows, th, func(lo, hi int) {
						AccTQ2_0Rows(dst[lo:hi], w[lo*rowB:hi*rowB], rowB, q, bsums, d, true)
					})
				}
			})
		}
	}
}

// BenchmarkDotQ2_0Rows: DotQ2_0Rows over rows of K = 2560 (the 2B-4T
// attention width) and K = 6912 (ffn_down), 256 KiB of rows (in L2) and
// streamBytes (from memory), one call per row range of each thread as the
// runtime makes them; MB/s is weight bytes per second.
func BenchmarkDotQ2_0Rows(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, k := range []int{2560, 6912} {
		nb := k / 64
		rowB := q2_0Bytes * nb
		q := make([]int8, k)
		for i := range q {
			q[i] = int8(r.Uint32())
		}
		d := make([]float32, 2*nb)
		for i := range d {
			d[i] = float32(r.Float64()) / 64
		}
		qp, qsum := make([]int8, k), make([]int32, 2*nb)
		PermuteQ2_0(qp, qsum, q)
		for _, c := range []struct {
			name  string
			bytes int
		}{{"l2", 256 << 10}, {"stream", streamBytes}} {
			rows := c.bytes / rowB &^ 31
			w := make([]byte, rows*rowB)
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for p := 0; p < len(w); p += q2_0Bytes {
				w[p+1] = byte(0x20 + r.IntN(8))
			}
			dst := make([]float32, rows)
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("K=%d/%s/threads=%d", k, c.name, th), func(b *testing.B) {
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						split(rows, th, func(lo, hi int) {
							DotQ2_0Rows(dst[lo:hi], w[lo*rowB:hi*rowB], rowB, qp, qsum, d)
						})
					}
				})
			}
		}
	}
}
