package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TestDotI2SLUTEqualsDotI2S: the batched kernel's integer sums equal
// dotI2S's for every token row, over row lengths that do and do not reach
// the int16 lane wrap, extreme and random activations, 1 to 4 rows per
// table; a row with code 3 is refused.
func TestDotI2SLUTEqualsDotI2S(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	for _, k := range []int{128, 256, 1536, 4096, 4096 + 128, 8192} {
		for trial := 0; trial < 6; trial++ {
			row := make([]byte, k/4)
			for i := range row {
				var b byte
				for c := 0; c < 4; c++ {
					code := byte(r.IntN(3))
					if trial == 0 {
						code = 2 // every weight +1: largest lanes
					}
					b = b<<2 | code
				}
				row[i] = b
			}
			n := 1 + trial%i2sLanes
			qs := make([][]int8, n)
			for t := range qs {
				qs[t] = make([]int8, k)
				for i := range qs[t] {
					switch {
					case trial == 0 && t%2 == 0:
						qs[t][i] = 127
					case trial == 0:
						qs[t][i] = -128
					default:
						qs[t][i] = int8(r.IntN(256) - 128)
					}
				}
			}
			lut := make([]uint64, k/128*i2sLUTPerBlock)
			buildI2SLUT(lut, qs, k)
			got, ok := dotI2SLUT(row, lut)
			if !ok {
				t.Fatalf("k %d trial %d: refused a row without code 3", k, trial)
			}
			for ti := range qs {
				if want := dotI2S(row, qs[ti]); got[ti] != want {
					t.Fatalf("k %d trial %d token %d: %d, dotI2S %d", k, trial, ti, got[ti], want)
				}
			}
			row[len(row)-1] |= 0x0c // one code 3
			if _, ok := dotI2SLUT(row, lut); ok {
				t.Fatalf("k %d: row with code 3 accepted", k)
			}
		}
	}
}

// TestMatMulI2SEqualsMatVec: MatMul over 1…9, 16 and 17 tokens (one and
// two groups of the eight-token kernel, with and without a remainder) and MatVec equal
// Row (dotI2S) per token bit for bit, with rows holding code 3 (which take
// dotI2S in the batched kernel) between ordinary rows, K spanning one and
// two lane windows, matrices below and above lut1MinRows, 1 and 3 threads.
func TestMatMulI2SEqualsMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 14))
	for _, km := range [][2]int{{128, 37}, {4096 + 256, 37}, {1536, lut1MinRows + 44}} {
		k, m := km[0], km[1]
		data, _ := randomI2S(k, m, 0.25, uint64(k))
		for _, row := range []int{0, 5, 16, 17, 36} {
			data[row*k/4+3] |= 0x03 // code 3 in the last slot of a byte
		}
		w, err := NewMatrix(gguf.TypeI2S, k, m, data)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([][]float32, 17)
		want := make([][]float32, len(xs))
		for i := range xs {
			xs[i] = make([]float32, k)
			for j := range xs[i] {
				xs[i][j] = float32(r.NormFloat64()) * float32(1+i)
			}
			want[i] = make([]float32, m)
			var a Activation
			w.Prepare(&a, xs[i])
			for row := range want[i] {
				want[i][row] = w.Row(row, &a)
			}
			got := make([]float32, m)
			w.MatVec(got, xs[i], nil, 3)
			for row := range got {
				if math.Float32bits(got[row]) != math.Float32bits(want[i][row]) {
					t.Fatalf("k %d m %d MatVec token %d row %d: %v, Row %v", k, m, i, row, got[row], want[i][row])
				}
			}
		}
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17} {
			for _, th := range []int{1, 3} {
				dst := make([][]float32, n)
				for i := range dst {
					dst[i] = make([]float32, m)
				}
				w.MatMul(dst, xs[:n], th)
				for i := range dst {
					for row := range dst[i] {
						if math.Float32bits(dst[i][row]) != math.Float32bits(want[i][row]) {
							t.Fatalf("k %d n %d threads %d token %d row %d: %v, MatVec %v", k, n, th, i, row, dst[i][row], want[i][row])
						}
					}
				}
			}
		}
	}
}

// TestDotI2SLUT1EqualsDotI2S: the one-token table kernel gives dotI2S's
// sums for 1…16 rows, with and without the int16 lane wrap, code 3
// included.
func TestDotI2SLUT1EqualsDotI2S(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 14))
	for _, k := range []int{128, 1536, 4096, 8192 + 128} {
		const m = 16
		raw := make([]byte, m*k/4)
		for i := range raw {
			raw[i] = byte(r.IntN(256)) // every code 0…3
		}
		for i := 0; i < k/4; i++ {
			raw[i] = 0xAA // row 0: every code 2, the wrap case below
		}
		q := make([]int8, k)
		for i := range q {
			q[i] = int8(r.IntN(256) - 128)
		}
		for i := 0; i < k/2; i++ {
			q[i] = 127
		}
		lut := make([]int16, k/128*i2sLUT1PerBlock)
		buildI2SLUT1(lut, q)
		for nr := 1; nr <= m; nr += 5 {
			sums := make([]int32, nr)
			dotI2SLUT1Rows(raw, k/4, lut, sums)
			for row := range sums {
				if want := dotI2S(raw[row*k/4:(row+1)*k/4], q); sums[row] != want {
					t.Fatalf("k %d row %d: %d, dotI2S %d", k, row, sums[row], want)
				}
			}
		}
	}
}

// BenchmarkMatMulI2SPrompt: MatMul of 128 token rows with the 2B-4T
// gate/up (K 2560, M 6912) and down (K 6912, M 2560) shapes through the
// AVX-512 batched kernel with the L2 row tile, with 16-row tiles, and
// through the AVX2 four-token kernel: run the sub-benchmarks alternately
// (-count) and compare ratios on a loaded machine.
func BenchmarkMatMulI2SPrompt(b *testing.B) {
	if !useI2SBatch {
		b.Skip("no AVX-512 VNNI batched kernel here")
	}
	r := rand.New(rand.NewPCG(25, 3))
	for _, km := range [][2]int{{2560, 6912}, {6912, 2560}} {
		k, m := km[0], km[1]
		data, _ := randomI2S(k, m, 0.25, uint64(k))
		w, err := NewMatrix(gguf.TypeI2S, k, m, data)
		if err != nil {
			b.Fatal(err)
		}
		xs, dst := make([][]float32, 128), make([][]float32, 128)
		for i := range xs {
			xs[i], dst[i] = make([]float32, k), make([]float32, m)
			for j := range xs[i] {
				xs[i][j] = float32(r.NormFloat64())
			}
		}
		for _, v := range []struct {
			name  string
			batch bool
			tile  int
		}{{"batch-l2tile", true, 192 << 10}, {"batch-16rows", true, 0}, {"avx2-dot4", false, 0}} {
			b.Run(fmt.Sprintf("k=%d/%s", k, v.name), func(b *testing.B) {
				savedB, savedT := useI2SBatch, i2sBatchTileBytes
				useI2SBatch, i2sBatchTileBytes = v.batch, v.tile
				defer func() { useI2SBatch, i2sBatchTileBytes = savedB, savedT }()
				sc := new(batchScratch)
				for b.Loop() {
					w.matMul(dst, xs, sc, 1)
				}
			})
		}
	}
}
