package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ternaryCase is one of the five integer cores: its block size in bytes and
// weights, and the kernel and reference as functions of (row, q) returning
// every integer they produce.
type ternaryCase struct {
	name           string
	bytes, weights int
	kernel, ref    func(row []byte, q []int8) []int32
}

var ternaryCases = []ternaryCase{
	{"Q2_0", q2_0Bytes, 64,
		func(row []byte, q []int8) []int32 {
			s := make([]int32, 2*len(row)/q2_0Bytes)
			SumsQ2_0(s, row, q)
			return s
		},
		func(row []byte, q []int8) []int32 {
			s := make([]int32, 2*len(row)/q2_0Bytes)
			sumsQ2_0Ref(s, row, q)
			return s
		}},
	{"IQ2_BN", iq2bnBytes, 64,
		func(row []byte, q []int8) []int32 { s := SumsIQ2BN(row, q); return s[:] },
		func(row []byte, q []int8) []int32 { var s [4]int32; sumsIQ2BNRef(&s, row, q); return s[:] }},
	{"IQ1_BN", iq1bnBytes, 64,
		func(row []byte, q []int8) []int32 { s := SumsIQ1BN(row, q); return s[:] },
		func(row []byte, q []int8) []int32 { var s [4]int32; sumsIQ1BNRef(&s, row, q); return s[:] }},
	{"TQ2_0", tq2Bytes, 256,
		func(row []byte, q []int8) []int32 {
			l := make([]int32, 8*len(row)/tq2Bytes)
			LanesTQ2_0(l, row, q)
			return l
		},
		func(row []byte, q []int8) []int32 {
			l := make([]int32, 8*len(row)/tq2Bytes)
			lanesTQ2_0Ref(l, row, q)
			return l
		}},
	{"TQ1_0", tq1Bytes, 256,
		func(row []byte, q []int8) []int32 {
			l := make([]int32, 8*len(row)/tq1Bytes)
			LanesTQ1_0(l, row, q)
			return l
		},
		func(row []byte, q []int8) []int32 {
			l := make([]int32, 8*len(row)/tq1Bytes)
			lanesTQ1_0Ref(l, row, q)
			return l
		}},
}

// TestTernaryKnown pins the references (and kernels) on inputs whose sums
// follow from the layouts alone: every code 1 (byte 0x55 for the 2-bit
// types, 0x80 — all five base-3 digits 1 — for TQ1_0/IQ1_BN) gives the plain
// sums of q over each output's weights; Q2_0 code 2 (0xaa, value +1) and
// code 0 (value −1) give ±Σq per 32-weight half. q[i] = i mod 251 − 125.
func TestTernaryKnown(t *testing.T) {
	const nb = 3
	q := make([]int8, 256*nb)
	for i := range q {
		q[i] = int8(i%251 - 125)
	}
	fill := func(n int, v byte) []byte { return slices.Repeat([]byte{v}, n) }
	// Expected sums from the layout: group (e mod 16)/4 per 64-weight row,
	// lane (i mod 32)/4 per block of 256, half per 32.
	var groups [4]int32
	for e := range 64 * nb {
		groups[e%16/4] += int32(q[e])
	}
	lanes := make([]int32, 8*nb)
	for i := range 256 * nb {
		lanes[8*(i/256)+i%32/4] += int32(q[i])
	}
	halves := make([]int32, 2*nb)
	for i := range 64 * nb {
		halves[i/32] += int32(q[i])
	}
	neg := make([]int32, len(halves))
	for i, v := range halves {
		neg[i] = -v
	}
	q2 := func(code byte) []byte {
		row := fill(q2_0Bytes*nb, code)
		for b := range nb {
			row[q2_0Bytes*b], row[q2_0Bytes*b+1] = 0x00, 0x3c // d = 1, not read
		}
		return row
	}
	for _, c := range []struct {
		name string
		got  []int32
		want []int32
	}{
		{"Q2_0 +1", ternaryCases[0].kernel(q2(0xaa), q), halves},
		{"Q2_0 -1", ternaryCases[0].kernel(q2(0x00), q), neg},
		{"Q2_0 0", ternaryCases[0].kernel(q2(0x55), q), make([]int32, 2*nb)},
		{"Q2_0 ref +1", ternaryCases[0].ref(q2(0xaa), q), halves},
		{"IQ2_BN", ternaryCases[1].kernel(fill(16*nb, 0x55), q), groups[:]},
		{"IQ2_BN ref", ternaryCases[1].ref(fill(16*nb, 0x55), q), groups[:]},
		{"IQ1_BN", ternaryCases[2].kernel(fill(13*nb, 0x80), q), groups[:]},
		{"IQ1_BN ref", ternaryCases[2].ref(fill(13*nb, 0x80), q), groups[:]},
		{"TQ2_0", ternaryCases[3].kernel(fill(tq2Bytes*nb, 0x55), q), lanes},
		{"TQ2_0 ref", ternaryCases[3].ref(fill(tq2Bytes*nb, 0x55), q), lanes},
		{"TQ1_0", ternaryCases[4].kernel(fill(tq1Bytes*nb, 0x80), q), lanes},
		{"TQ1_0 ref", ternaryCases[4].ref(fill(tq1Bytes*nb, 0x80), q), lanes},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestTernaryPositions moves one weight of value +1 through every position
// of a 2-bit block whose other weights contribute nothing (Q2_0 code 2
// among codes 1; IQ2_BN and TQ2_0 code 1 among codes 0) and checks that it
// meets the activation of its weight in the output the layout names: Q2_0 byte j bits 2(e mod 4) hold weight 4j + e mod 4, IQ2_BN byte
// j bits 2i weight j + 16i, TQ2_0 byte 32h + m bits 2l weight 128h + 32l +
// m.
func TestTernaryPositions(t *testing.T) {
	q := make([]int8, 256)
	for i := range q {
		q[i] = int8(i%127 + 1)
	}
	for e := range 64 {
		row := slices.Repeat([]byte{0x55}, q2_0Bytes)
		row[2+e/4] = row[2+e/4]&^(3<<(2*(e%4))) | 2<<(2*(e%4))
		want := make([]int32, 2)
		want[e/32] = int32(q[e])
		if got := ternaryCases[0].kernel(row, q); !slices.Equal(got, want) {
			t.Fatalf("Q2_0 weight %d: %v, want %v", e, got, want)
		}
		blk := make([]byte, 16)
		blk[e%16] = 1 << (2 * (e / 16))
		var w4 [4]int32
		w4[e%16/4] = int32(q[e])
		if got := SumsIQ2BN(blk, q); got != w4 {
			t.Fatalf("IQ2_BN weight %d: %v, want %v", e, got, w4)
		}
	}
	for i := range 256 {
		row := make([]byte, tq2Bytes)
		h, l, m := i/128, i%128/32, i%32
		row[32*h+m] = 1 << (2 * l)
		want := make([]int32, 8)
		want[m/4] = int32(q[i])
		if got := ternaryCases[3].kernel(row, q); !slices.Equal(got, want) {
			t.Fatalf("TQ2_0 weight %d: %v, want %v", i, got, want)
		}
	}
}

// TestTernaryMatchesReference: each kernel against its reference on random
// blocks (every byte value, q from −128 to 127) of 1 to 40 blocks, and on
// the extremes (all bytes 0xff, q all −128 or 127).
func TestTernaryMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	for _, c := range ternaryCases {
		for nb := 1; nb <= 40; nb++ {
			for trial := range 4 {
				row := make([]byte, c.bytes*nb)
				q := make([]int8, c.weights*nb)
				for i := range row {
					row[i] = byte(r.Uint32())
				}
				for i := range q {
					q[i] = int8(r.Uint32())
				}
				switch trial {
				case 1:
					for i := range row {
						row[i] = 0xff
					}
					for i := range q {
						q[i] = -128
					}
				case 2:
					for i := range q {
						q[i] = 127
					}
				}
				if got, want := c.kernel(row, q), c.ref(row, q); !slices.Equal(got, want) {
					t.Fatalf("%s nb=%d trial %d: kernel %v, reference %v", c.name, nb, trial, got, want)
				}
			}
		}
	}
}

// TestTernaryEmptyAndPanics: empty rows give zero sums; short outputs or
// activations and partial blocks panic.
func TestTernaryEmptyAndPanics(t *testing.T) {
	if s := SumsIQ2BN(nil, nil); s != [4]int32{} {
		t.Errorf("SumsIQ2BN(nil) = %v", s)
	}
	if s := SumsIQ1BN(nil, nil); s != [4]int32{} {
		t.Errorf("SumsIQ1BN(nil) = %v", s)
	}
	SumsQ2_0(nil, nil, nil)
	LanesTQ2_0(nil, nil, nil)
	LanesTQ1_0(nil, nil, nil)
	for name, f := range map[string]func(){
		"Q2_0 partial":   func() { SumsQ2_0(make([]int32, 2), make([]byte, 17), make([]int8, 64)) },
		"Q2_0 sums":      func() { SumsQ2_0(make([]int32, 1), make([]byte, 18), make([]int8, 64)) },
		"Q2_0 q":         func() { SumsQ2_0(make([]int32, 2), make([]byte, 18), make([]int8, 63)) },
		"IQ2_BN partial": func() { SumsIQ2BN(make([]byte, 15), make([]int8, 64)) },
		"IQ2_BN q":       func() { SumsIQ2BN(make([]byte, 16), make([]int8, 63)) },
		"IQ1_BN partial": func() { SumsIQ1BN(make([]byte, 14), make([]int8, 128)) },
		"IQ1_BN q":       func() { SumsIQ1BN(make([]byte, 13), make([]int8, 63)) },
		"TQ2_0 lanes":    func() { LanesTQ2_0(make([]int32, 7), make([]byte, 66), make([]int8, 256)) },
		"TQ2_0 q":        func() { LanesTQ2_0(make([]int32, 8), make([]byte, 66), make([]int8, 255)) },
		"TQ1_0 partial":  func() { LanesTQ1_0(make([]int32, 8), make([]byte, 55), make([]int8, 256)) },
		"TQ1_0 q":        func() { LanesTQ1_0(make([]int32, 8), make([]byte, 54), make([]int8, 255)) },
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

// FuzzTernarySums: every ternary integer core equals its reference on the
// input read as whole blocks (as many as fit in about a third of it) and an
// activation repeating the rest; DotQ2_0, AccQ8_0, AccQ6K and AccTQ*_0 equal theirs bit for
// bit on the input read as rows, codes, float32 scales and bsums.
func FuzzTernarySums(f *testing.F) {
	f.Add([]byte{0xaa, 0x55, 0x01, 0xff, 0x80, 0x7f})
	f.Add(make([]byte, 66*3+5))
	f.Add(slices.Repeat([]byte{0xff, 0x80, 0x7f, 0x00}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		for _, c := range ternaryCases {
			nb := len(data) / (c.bytes + c.weights)
			row := data[:c.bytes*nb]
			q := make([]int8, c.weights*nb)
			for i := range q {
				q[i] = int8(data[(c.bytes*nb+i)%len(data)])
			}
			if got, want := c.kernel(row, q), c.ref(row, q); !slices.Equal(got, want) {
				t.Fatalf("%s nb=%d: kernel %v, reference %v", c.name, nb, got, want)
			}
		}
		// The float epilogues: scales and bsums read from the input too.
		q := make([]int8, 256*(len(data)/54+1))
		d := make([]float32, len(q)/32)
		bsums := make([]int16, len(q)/16)
		for i := range q {
			q[i] = int8(data[(7*i)%len(data)])
		}
		for i := range d {
			j := 4 * i % len(data)
			d[i] = math.Float32frombits(uint32(data[j]) | uint32(data[(j+1)%len(data)])<<8 |
				uint32(data[(j+2)%len(data)])<<16 | uint32(data[(j+3)%len(data)])<<24)
		}
		for i := range bsums {
			bsums[i] = int16(data[(3*i)%len(data)]) << (i % 5)
		}
		checkTernaryFloat(t, "fuzz", data, q, d, bsums)
	})
}

// checkTernaryFloat compares DotQ2_0, AccQ8_0, AccQ6K, AccTQ2_0 and AccTQ1_0 with their
// references bit for bit on blocks of row bytes (f16 scales included as
// they fall), activation codes q and scales d (len ≥ 2·(len(q)/64)), and
// bsums; both accumulation modes of the TQ types, from a non-zero start.
func checkTernaryFloat(t *testing.T, name string, data []byte, q []int8, d []float32, bsums []int16) {
	t.Helper()
	if nb := min(len(data)/q2_0Bytes, len(q)/64, len(d)/2); nb > 0 {
		row := data[:q2_0Bytes*nb]
		if got, want := DotQ2_0(row, q, d), dotQ2_0Ref(row, q, d); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%s: DotQ2_0 nb=%d: kernel %v (%#x), reference %v (%#x)", name, nb, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	if nb := min(len(data)/q8_0Bytes, len(q)/32, len(d)); nb > 0 {
		row := data[:q8_0Bytes*nb]
		got := [8]float32{1, -1, 0.25, 0, 3, -0x1p-9, 2, 1e4}
		want := got
		AccQ8_0(&got, row, q, d)
		accQ8_0Ref(&want, row, q, d)
		for l := range got {
			if math.Float32bits(got[l]) != math.Float32bits(want[l]) {
				t.Fatalf("%s: AccQ8_0 nb=%d lane %d: kernel %v, reference %v", name, nb, l, got[l], want[l])
			}
		}
	}
	if nb := min(len(data)/q6KBytes, len(q)/256, len(d)); nb > 0 {
		row := data[:q6KBytes*nb]
		got := [8]float32{-1, 1, 0.75, 0, 5, 0x1p-12, -3, 1e3}
		want := got
		AccQ6K(&got, row, q, d)
		accQ6KRef(&want, row, q, d)
		for l := range got {
			if math.Float32bits(got[l]) != math.Float32bits(want[l]) {
				t.Fatalf("%s: AccQ6K nb=%d lane %d: kernel %v, reference %v", name, nb, l, got[l], want[l])
			}
		}
	}
	for _, tq1 := range []bool{false, true} {
		bytes := tq2Bytes
		if tq1 {
			bytes = tq1Bytes
		}
		nb := min(len(data)/bytes, len(q)/256, len(bsums)/16, len(d))
		if nb == 0 {
			continue
		}
		row := data[:bytes*nb]
		for _, fused := range []bool{false, true} {
			got := [8]float32{0, 1, -2, 0.5, 1e-3, -7, 3, 0x1p-20}
			want := got
			if tq1 {
				AccTQ1_0(&got, row, q, bsums, d, fused)
			} else {
				AccTQ2_0(&got, row, q, bsums, d, fused)
			}
			accTQRef(&want, row, q, bsums, d, fused, tq1)
			for l := range got {
				if math.Float32bits(got[l]) != math.Float32bits(want[l]) {
					t.Fatalf("%s: AccTQ (tq1 %v, fused %v) nb=%d lane %d: kernel %v, reference %v", name, tq1, fused, nb, l, got[l], want[l])
				}
			}
		}
	}
}

// TestTernaryFloatMatchesReference: the kernels with float epilogues
// against their references on random rows (random f16 scales, NaNs and
// infinities among them), random codes, activation scales spanning many
// binades, and rows with NaN or infinite activation scales.
func TestTernaryFloatMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2))
	for nb := 1; nb <= 12; nb++ {
		for trial := range 6 {
			data := make([]byte, q6KBytes*nb+64)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			if trial < 3 { // sane scales: f16 in [2⁻¹⁰, 2) at every scale position
				for i := 0; i+1 < len(data); i += 2 {
					data[i+1] = byte(0x10 + r.IntN(0x2c))
				}
			}
			q := make([]int8, 256*nb)
			for i := range q {
				q[i] = int8(r.Uint32())
			}
			d := make([]float32, 8*nb)
			for i := range d {
				d[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(40)-30))
			}
			switch trial {
			case 4:
				d[r.IntN(len(d))] = float32(math.Inf(1))
			case 5:
				d[r.IntN(len(d))] = float32(math.NaN())
			}
			bsums := make([]int16, 16*nb)
			for i := range bsums {
				bsums[i] = int16(r.IntN(4096) - 2048)
			}
			checkTernaryFloat(t, "random", data, q, d, bsums)
		}
	}
}
