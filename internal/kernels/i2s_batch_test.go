package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkI2SBatch compares DotI2SBatch on rows (rowB bytes each) and the
// token rows qs with dotI2SRef of each pair.
func checkI2SBatch(t *testing.T, rows []byte, rowB int, qs [][]int8) {
	t.Helper()
	k := 4 * rowB
	xt := make([]int8, I2SBatchLen(k))
	PackI2SBatch(xt, qs, k)
	nr := len(rows) / rowB
	// The whole row in one call, and in segments of I2SBatchSegment
	// blocks (as the runtime calls it); both must give dotI2SRef's sums.
	sums := make([]int32, nr*I2SBatchTokens)
	DotI2SBatch(sums, rows, rowB, rowB/32, xt)
	seg := make([]int32, nr*I2SBatchTokens)
	for b0 := 0; b0 < rowB/32; b0 += I2SBatchSegment {
		nb := min(I2SBatchSegment, rowB/32-b0)
		DotI2SBatch(seg, rows[32*b0:], rowB, nb, xt[b0/2*I2SBatchTokens*i2sBatchChunk:])
	}
	for i := range seg {
		if seg[i] != sums[i] {
			t.Fatalf("nb=%d: segmented sum %d of %d, whole row %d", rowB/32, i, seg[i], sums[i])
		}
	}
	zero := make([]int8, k)
	for r := 0; r < nr; r++ {
		for tok := 0; tok < I2SBatchTokens; tok++ {
			q := zero
			if tok < len(qs) {
				q = qs[tok][:k]
			}
			if want := dotI2SRef(rows[r*rowB:(r+1)*rowB], q); sums[r*I2SBatchTokens+tok] != want {
				t.Fatalf("nb=%d row %d token %d: kernel %d, reference %d (%s)", rowB/32, r, tok, sums[r*I2SBatchTokens+tok], want, Impl())
			}
		}
	}
}

// TestDotI2SBatchMatchesReference: random rows (codes 0-2, and rows with
// code 3), activations at the int8 extremes so the int16 lanes wrap, odd
// block counts and rows of more than one 32-block group.
func TestDotI2SBatchMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	for _, nb := range []int{1, 2, 3, 20, 31, 32, 33, 54, 65, 96} {
		for trial := 0; trial < 6; trial++ {
			rowB := 32 * nb
			nr := 1 + r.IntN(5)
			rows := make([]byte, nr*rowB)
			for i := range rows {
				switch trial {
				case 0: // codes 0-2
					var b byte
					for f := 0; f < 4; f++ {
						b = b<<2 | byte(r.IntN(3))
					}
					rows[i] = b
				case 1: // all code 3: the largest sums
					rows[i] = 0xff
				case 2: // all code 2
					rows[i] = 0xaa
				default:
					rows[i] = byte(r.IntN(256))
				}
			}
			ntok := I2SBatchTokens
			if trial == 5 {
				ntok = 1 + r.IntN(I2SBatchTokens)
			}
			qs := make([][]int8, ntok)
			for tok := range qs {
				qs[tok] = make([]int8, 4*rowB)
				for i := range qs[tok] {
					switch {
					case trial < 3 && tok%2 == 0:
						qs[tok][i] = 127
					case trial < 3:
						qs[tok][i] = -128
					default:
						qs[tok][i] = int8(r.IntN(256))
					}
				}
			}
			checkI2SBatch(t, rows, rowB, qs)
		}
	}
}

// TestI2SBatchPermIsBijective: every input of a chunk appears once.
func TestI2SBatchPermIsBijective(t *testing.T) {
	var seen [i2sBatchChunk]bool
	for p, e := range i2sBatchPerm {
		if seen[e] {
			t.Fatalf("input %d appears twice (byte %d)", e, p)
		}
		seen[e] = true
	}
}

// TestExpSubMatchesExp: ExpSub against Exp on random, range-edge and
// special arguments, lengths around the sixteen-lane groups.
func TestExpSubMatchesExp(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2))
	specials := []float32{0, float32(math.Copysign(0, -1)), 87.3, -87.3, 87.4, -87.4, 88.8, -88.8, 103, -104,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40, -200, 200}
	for _, n := range []int{0, 1, 15, 16, 17, 48, 130, 4096 + 7} {
		for trial := 0; trial < 12; trial++ {
			src := make([]float32, n)
			for i := range src {
				if trial%3 == 2 && r.IntN(16) == 0 {
					src[i] = specials[r.IntN(len(specials))]
				} else {
					src[i] = float32(r.NormFloat64() * float64([]float32{0.5, 5, 40}[trial%3]))
				}
			}
			m := []float32{0, 3.25, -1.5, 80}[trial%4]
			dst := make([]float32, n)
			ExpSub(dst, src, m)
			for i := range src {
				want := Exp(src[i] - m)
				if math.Float32bits(dst[i]) != math.Float32bits(want) && !(dst[i] != dst[i] && want != want) {
					t.Fatalf("n=%d trial %d element %d (x=%v m=%v): kernel %v, reference %v (%s)", n, trial, i, src[i], m, dst[i], want, Impl())
				}
			}
		}
	}
}

// FuzzDotI2SBatch: DotI2SBatch equals dotI2SRef for any packed rows and
// activations (the input's first fifth is the rows' bytes, the activations
// of the eight tokens repeat the input from different offsets).
func FuzzDotI2SBatch(f *testing.F) {
	f.Add([]byte{0xff, 0x7f, 0x80, 0x01}, uint8(1))
	f.Add(make([]byte, 32*40+3), uint8(33))
	f.Fuzz(func(t *testing.T, data []byte, nbArg uint8) {
		if len(data) == 0 {
			return
		}
		nb := 1 + int(nbArg)%70
		rowB := 32 * nb
		nr := 1 + len(data)%3
		rows := make([]byte, nr*rowB)
		for i := range rows {
			rows[i] = data[i%len(data)]
		}
		qs := make([][]int8, I2SBatchTokens)
		for tok := range qs {
			qs[tok] = make([]int8, 4*rowB)
			for i := range qs[tok] {
				qs[tok][i] = int8(data[(i*(tok+1)+tok*7)%len(data)])
			}
		}
		checkI2SBatch(t, rows, rowB, qs)
	})
}

// BenchmarkI2SBatchVsDotI2S4: eight tokens against 256 KiB of rows of
// 2560 inputs (L2-resident), through DotI2SBatch (one call per 16 rows)
// and through two DotI2S4 calls per row; ns/op compare directly (the same
// products).
func BenchmarkI2SBatchVsDotI2S4(b *testing.B) {
	const k = 2560
	r := rand.New(rand.NewPCG(1, 8))
	qs := make([][]int8, I2SBatchTokens)
	for t := range qs {
		_, qs[t] = randI2S(r, k/128)
	}
	rows := (256 << 10) / (k / 4) &^ 15
	w, _ := randI2S(r, rows*k/128)
	xt := make([]int8, I2SBatchLen(k))
	PackI2SBatch(xt, qs, k)
	b.Run("batch", func(b *testing.B) {
		sums := make([]int32, 16*I2SBatchTokens)
		for b.Loop() {
			for r0 := 0; r0 < rows; r0 += 16 {
				DotI2SBatch(sums, w[r0*k/4:(r0+16)*k/4], k/4, k/128, xt)
			}
		}
	})
	b.Run("dot4", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < rows; i++ {
				row := w[i*k/4 : (i+1)*k/4]
				DotI2S4(row, qs[0], qs[1], qs[2], qs[3])
				DotI2S4(row, qs[4], qs[5], qs[6], qs[7])
			}
		}
	})
}

// TestDotF16RowsAnyActivation: DotF16Rows against dotF16RowsRef with
// float32 activations that are not F16 values (so each product's rounding
// shows; the attention's F32 paths pass such values), odd row counts.
func TestDotF16RowsAnyActivation(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 4))
	for _, k := range []int{32, 128, 2560} {
		for _, nr := range []int{1, 3, 4, 7, 9} {
			w := randF16(r, nr*k, 30)
			x := make([]float32, k)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 7)
			}
			got, want := make([]float32, nr), make([]float32, nr)
			DotF16Rows(got, w, x)
			dotF16RowsRef(want, w, k, x)
			for row := range got {
				if math.Float32bits(got[row]) != math.Float32bits(want[row]) {
					t.Fatalf("k=%d rows=%d row %d: kernel %v, reference %v (%s)", k, nr, row, got[row], want[row], Impl())
				}
			}
		}
	}
}
