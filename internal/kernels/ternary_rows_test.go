package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// sameF32 reports whether a and b are the same float32 bits, or both NaN.
func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestTernaryRowsMatchRow: each row-range kernel (and its pure-Go twin)
// gives, for every row, exactly the one-row kernel's result (AccTQ*_0 then
// hsum_float_8, DotQ2_0, SumsIQ2BN with ik's epilogue) on random rows of 1
// to 12 blocks, sane and random (NaN, infinite) scales, NaN and infinite
// activation scales.
func TestTernaryRowsMatchRow(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 7))
	const rows = 7
	for nb := 1; nb <= 12; nb++ {
		for trial := range 5 {
			q := make([]int8, 256*nb)
			for i := range q {
				q[i] = int8(r.Uint32())
			}
			d := make([]float32, 4*nb)
			for i := range d {
				d[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(40)-30))
			}
			switch trial {
			case 3:
				d[r.IntN(len(d))] = float32(math.Inf(1))
			case 4:
				d[r.IntN(len(d))] = float32(math.NaN())
			}
			bsums := make([]int16, 16*nb)
			for i := range bsums {
				bsums[i] = int16(r.IntN(4096) - 2048)
			}
			data := func(rowB int, scaleAt func(row []byte)) []byte {
				b := make([]byte, rows*rowB)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				if trial < 2 {
					for k := 0; k < rows; k++ {
						scaleAt(b[k*rowB : (k+1)*rowB])
					}
				}
				return b
			}
			saneF16 := func(blockBytes, off int) func(row []byte) {
				return func(row []byte) {
					for p := off; p+1 < len(row); p += blockBytes {
						row[p+1] = byte(0x10 + r.IntN(0x2c))
					}
				}
			}
			for _, tq1 := range []bool{false, true} {
				bytes := tq2Bytes
				if tq1 {
					bytes = tq1Bytes
				}
				rowB := bytes * nb
				w := data(rowB, saneF16(bytes, bytes-2))
				for _, fused := range []bool{false, true} {
					got, ref := make([]float32, rows), make([]float32, rows)
					if tq1 {
						AccTQ1_0Rows(got, w, rowB, q, bsums, d, fused)
					} else {
						AccTQ2_0Rows(got, w, rowB, q, bsums, d, fused)
					}
					accTQRowsRef(ref, w, rowB, q, bsums, d, fused, tq1)
					for k := range got {
						var acc [8]float32
						if tq1 {
							AccTQ1_0(&acc, w[k*rowB:(k+1)*rowB], q, bsums, d, fused)
						} else {
							AccTQ2_0(&acc, w[k*rowB:(k+1)*rowB], q, bsums, d, fused)
						}
						want := hsumF8(&acc)
						if !sameF32(got[k], want) || !sameF32(ref[k], want) {
							t.Fatalf("AccTQ rows (tq1 %v fused %v) nb=%d trial %d row %d: rows %v, ref rows %v, one row %v", tq1, fused, nb, trial, k, got[k], ref[k], want)
						}
					}
				}
			}
			{
				rowB := q2_0Bytes * nb
				w := data(rowB, saneF16(q2_0Bytes, 0))
				qq, dd := q[:64*nb], d[:2*nb]
				qp, qsum := make([]int8, len(qq)), make([]int32, 2*nb)
				PermuteQ2_0(qp, qsum, qq)
				got, ref := make([]float32, rows), make([]float32, rows)
				DotQ2_0Rows(got, w, rowB, qp, qsum, dd)
				dotQ2_0RowsRef(ref, w, rowB, qp, qsum, dd)
				for k := range got {
					want := DotQ2_0(w[k*rowB:(k+1)*rowB], qq, dd)
					if !sameF32(got[k], want) || !sameF32(ref[k], want) {
						t.Fatalf("DotQ2_0Rows nb=%d trial %d row %d: rows %v, ref rows %v, DotQ2_0 %v", nb, trial, k, got[k], ref[k], want)
					}
				}
			}
			{
				rowB := 4 + iq2bnBytes*nb
				w := data(rowB, func(row []byte) {
					binary.LittleEndian.PutUint32(row, math.Float32bits(float32(r.Float64()+0.1)))
				})
				var dg, minus [4]float32
				for g := range dg {
					dg[g] = d[g]
					minus[g] = d[g] * float32(r.IntN(20000)-10000)
				}
				if trial == 2 {
					minus[1] = float32(math.Inf(-1))
				}
				qq := q[:64*nb]
				got, ref := make([]float32, rows), make([]float32, rows)
				DotIQ2BNRows(got, w, rowB, qq, &dg, &minus)
				dotIQ2BNRowsRef(ref, w, rowB, qq, &dg, &minus)
				for k := range got {
					row := w[k*rowB : (k+1)*rowB]
					s := SumsIQ2BN(row[4:], qq)
					var v [4]float32
					for g := range v {
						v[g] = FMA32(-minus[g], dg[g], float32(s[g]))
					}
					want := math.Float32frombits(binary.LittleEndian.Uint32(row)) * ((v[0] + v[2]) + (v[1] + v[3]))
					if !sameF32(got[k], want) || !sameF32(ref[k], want) {
						t.Fatalf("DotIQ2BNRows nb=%d trial %d row %d: rows %v, ref rows %v, one row %v", nb, trial, k, got[k], ref[k], want)
					}
				}
			}
		}
	}
}

// TestTernaryRowsPanics: the row-range kernels refuse short or misshapen
// arguments.
func TestTernaryRowsPanics(t *testing.T) {
	var d4, m4 [4]float32
	for name, f := range map[string]func(){
		"tq2 rowB": func() {
			AccTQ2_0Rows(make([]float32, 1), make([]byte, 65), 65, make([]int8, 256), make([]int16, 16), make([]float32, 1), false)
		},
		"tq1 rows": func() {
			AccTQ1_0Rows(make([]float32, 2), make([]byte, 54), 54, make([]int8, 256), make([]int16, 16), make([]float32, 1), true)
		},
		"q2 qsum": func() {
			DotQ2_0Rows(make([]float32, 1), make([]byte, 18), 18, make([]int8, 64), make([]int32, 1), make([]float32, 2))
		},
		"q2 perm":    func() { PermuteQ2_0(make([]int8, 64), make([]int32, 2), make([]int8, 63)) },
		"iq2 q":      func() { DotIQ2BNRows(make([]float32, 1), make([]byte, 20), 20, make([]int8, 63), &d4, &m4) },
		"iq2 no blk": func() { DotIQ2BNRows(make([]float32, 1), make([]byte, 4), 4, nil, &d4, &m4) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestAccTQ2_0RowsLong: rows of more blocks than the AVX-512 kernel's
// stack buffer of bsums pairs holds (the heap path) give the reference's
// results too.
func TestAccTQ2_0RowsLong(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 11))
	const nb, rows = 131, 5
	q := make([]int8, 256*nb)
	for i := range q {
		q[i] = int8(r.Uint32())
	}
	bsums := make([]int16, 16*nb)
	for i := range bsums {
		bsums[i] = int16(r.IntN(4096) - 2048)
	}
	d := make([]float32, nb)
	for i := range d {
		d[i] = float32(r.Float64()-0.5) / 64
	}
	rowB := nb * tq2Bytes
	w := make([]byte, rows*rowB)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for p := tq2Bytes - 2; p+1 < len(w); p += tq2Bytes {
		w[p+1] = byte(0x10 + r.IntN(0x2c))
	}
	for _, fused := range []bool{false, true} {
		got, want := make([]float32, rows), make([]float32, rows)
		AccTQ2_0Rows(got, w, rowB, q, bsums, d, fused)
		accTQRowsRef(want, w, rowB, q, bsums, d, fused, false)
		for k := range got {
			if !sameF32(got[k], want[k]) {
				t.Fatalf("fused %v row %d: kernel %v, reference %v", fused, k, got[k], want[k])
			}
		}
	}
}

// checkQ2_0Rows compares DotQ2_0Rows on the m rows of rowB bytes in w with
// the one-row reference dotQ2_0Ref, row by row and bit for bit.
func checkQ2_0Rows(t *testing.T, w []byte, m, rowB int, q []int8, d []float32) {
	t.Helper()
	nb := rowB / q2_0Bytes
	q, d = q[:64*nb], d[:2*nb]
	qp, qsum := make([]int8, len(q)), make([]int32, 2*nb)
	PermuteQ2_0(qp, qsum, q)
	got := make([]float32, m)
	DotQ2_0Rows(got, w[:m*rowB:m*rowB], rowB, qp, qsum, d)
	for k := range got {
		if want := dotQ2_0Ref(w[k*rowB:(k+1)*rowB], q, d); !sameF32(got[k], want) {
			t.Fatalf("DotQ2_0Rows rows=%d nb=%d row %d: %v (%#x), dotQ2_0Ref %v (%#x)", m, nb, k, got[k], math.Float32bits(got[k]), want, math.Float32bits(want))
		}
	}
}

// TestDotQ2_0RowsCounts: DotQ2_0Rows equals dotQ2_0Ref row for row for
// every row count from 1 to 50 (the AVX-512 kernel's sixteen-row groups
// and its masked last group) and block counts 1 to 9 and 40 (K = 2560),
// with random codes (code 3 included), sane f16 scales and random
// activations; the row data ends exactly at the slice end.
func TestDotQ2_0RowsCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 64))
	for _, nb := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 40} {
		rowB := q2_0Bytes * nb
		q := make([]int8, 64*nb)
		for i := range q {
			q[i] = int8(r.Uint32())
		}
		d := make([]float32, 2*nb)
		for i := range d {
			d[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(20)-14))
		}
		for m := 1; m <= 50; m++ {
			w := make([]byte, m*rowB)
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for p := 0; p < len(w); p += q2_0Bytes {
				w[p+1] = byte(0x10 + r.IntN(0x2c))
			}
			checkQ2_0Rows(t, w, m, rowB, q, d)
		}
	}
}

// FuzzDotQ2_0Rows: DotQ2_0Rows against dotQ2_0Ref on fuzzed rows (any
// scale bits: subnormal, infinite, NaN), activation codes and scales.
func FuzzDotQ2_0Rows(f *testing.F) {
	f.Add(make([]byte, 18*17), uint8(1), int64(1), float32(0.5), float32(-2))
	f.Add(make([]byte, 18*3*5), uint8(3), int64(7), float32(1e-30), float32(3e38))
	f.Fuzz(func(t *testing.T, data []byte, nb8 uint8, seed int64, d0, d1 float32) {
		nb := int(nb8)%6 + 1
		rowB := q2_0Bytes * nb
		m := len(data) / rowB
		if m == 0 {
			return
		}
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		q := make([]int8, 64*nb)
		for i := range q {
			q[i] = int8(r.Uint32())
		}
		d := make([]float32, 2*nb)
		for i := range d {
			d[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(40)-20))
		}
		d[0], d[len(d)-1] = d0, d1
		checkQ2_0Rows(t, data, m, rowB, q, d)
	})
}
