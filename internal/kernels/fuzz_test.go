package kernels

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// FuzzDotI2S: the kernel equals the reference on any packed row and
// activation (the input's first quarter-ish is the row, rounded down to
// whole 32-byte blocks; the activation repeats the rest).
func FuzzDotI2S(f *testing.F) {
	f.Add([]byte{0xaa, 0x55, 0x01, 0xff, 0x80, 0x7f})
	f.Add(make([]byte, 32*33+5))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		nb := len(data) / 160
		row := data[:32*nb]
		q := make([]int8, 128*nb)
		for i := range q {
			q[i] = int8(data[(32*nb+i)%len(data)])
		}
		if got, want := DotI2S(row, q), dotI2SRef(row, q); got != want {
			t.Fatalf("nb=%d: kernel %d, reference %d", nb, got, want)
		}
		// DotI2S4 with the activation and three rotations of it.
		var qs [4][]int8
		for k := range qs {
			qs[k] = append(append([]int8(nil), q[k*len(q)/4:]...), q[:k*len(q)/4]...)
		}
		got4 := DotI2S4(row, qs[0], qs[1], qs[2], qs[3])
		for k := range qs {
			if want := dotI2SRef(row, qs[k]); got4[k] != want {
				t.Fatalf("nb=%d: DotI2S4 token %d: kernel %d, reference %d", nb, k, got4[k], want)
			}
		}
		// DotI2SRows over the row and its rotations, epilogue included.
		if nb == 0 {
			return
		}
		// DotI2SBatch with the row and the four activations (the other
		// four token rows zero).
		checkI2SBatch(t, row, len(row), qs[:])
		rows := make([]byte, 0, 3*len(row))
		for k := range 3 {
			rows = append(append(rows, row[k*len(row)/3:]...), row[:k*len(row)/3]...)
		}
		sumf, sc, scale := float32(int8(data[0])), 1+float32(data[len(data)-1]), 0.5+float32(data[len(data)/2])/7
		got, want := make([]float32, 3), make([]float32, 3)
		DotI2SRows(got, rows, q, sumf, sc, scale)
		dotI2SRowsRef(want, rows, len(row), q, sumf, sc, scale)
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("nb=%d: DotI2SRows row %d: kernel %v, reference %v", nb, k, got[k], want[k])
			}
		}
	})
}

// FuzzRopeNeox: a head and its cos/sin table from the input (four bytes a
// float32; the head takes half of them), every bit pattern allowed.
func FuzzRopeNeox(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x80})
	f.Add(make([]byte, 4*70))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 4
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		x := v[:n/2]
		half := len(x) / 2
		cos, sin := v[n/2:n/2+half], v[n-half:]
		got, want := slices.Clone(x), slices.Clone(x)
		RopeNeox(got, cos, sin)
		ropeNeoxRef(want, cos, sin)
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("n=%d element %d: kernel %v, reference %v", n, i, got[i], want[i])
			}
		}
	})
}

// FuzzDotF16: pairs of (F16 weight, float32 activation) from the input.
func FuzzDotF16(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 0x00, 0x00, 0x80, 0x3f})
	f.Add(make([]byte, 6*40))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 6
		w := make([]uint16, n)
		x := make([]float32, n)
		for i := range w {
			w[i] = binary.LittleEndian.Uint16(data[6*i:])
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[6*i+2:]))
		}
		if got, want := DotF16(w, x), dotF16Ref(w, x); !sameFloat(got, want) {
			t.Fatalf("n=%d: kernel %v, reference %v", n, got, want)
		}
	})
}

// FuzzQuantizeI8S: any float32 row, NaNs and infinities included.
func FuzzQuantizeI8S(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0x3f, 0, 0, 0x80, 0xbf})
	f.Add(make([]byte, 4*70))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkQuantize(t, "fuzz", x)
	})
}

// FuzzConverterKernels: the converter's kernels against their references
// on the same bytes, read as bf16 values, float32 values, packed U8 bytes
// and ternary values.
func FuzzConverterKernels(f *testing.F) {
	f.Add([]byte{0x80, 0x3f, 0x80, 0x7f, 0xc0, 0xff, 0x00, 0x47, 0x80, 0x47}, float32(1.5))
	f.Add(make([]byte, 300), float32(0))
	f.Fuzz(func(t *testing.T, data []byte, inv float32) {
		n := len(data) / 2
		raw := data[:2*n]
		got, want := make([]float32, n), make([]float32, n)
		if DecodeBF16(got, raw) != decodeBF16Ref(want, raw) {
			t.Fatal("DecodeBF16: non-finite flags differ")
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("DecodeBF16: element %d differs", i)
			}
		}
		h, hw := make([]byte, 2*n), make([]byte, 2*n)
		okG, okW := BF16ToF16(h, raw), bf16ToF16Ref(hw, raw)
		if okG != okW || okG && !bytes.Equal(h, hw) {
			t.Fatalf("BF16ToF16: in range %v, reference %v", okG, okW)
		}
		c, cw := make([]int8, 4*len(data)), make([]int8, 4*len(data))
		UnpackU8(c, len(data), data)
		unpackU8Ref(cw, len(data), data)
		if !bytes.Equal(i8bytes(c), i8bytes(cw)) {
			t.Fatal("UnpackU8 differs")
		}
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		tg, tw := make([]int8, len(x)), make([]int8, len(x))
		Ternarize(tg, x, inv)
		ternarizeRef(tw, x, inv)
		if !bytes.Equal(i8bytes(tg), i8bytes(tw)) {
			t.Fatal("Ternarize differs")
		}
		var ag, aw [32]float32
		AddAbs4x8(&ag, x[:len(x)&^31])
		addAbs4x8Ref(&aw, x[:len(x)&^31])
		for i := range ag {
			if !sameFloat(ag[i], aw[i]) {
				t.Fatalf("AddAbs4x8 lane %d: %v, reference %v", i, ag[i], aw[i])
			}
		}
		tv := make([]int8, len(data)&^127)
		for i := range tv {
			tv[i] = int8(data[i]%3) - 1
			if data[i] == 255 {
				tv[i] = 2 // an invalid value now and then
			}
		}
		p, pw := make([]byte, len(tv)/4), make([]byte, len(tv)/4)
		okG, okW = PackI2S(p, tv), packI2SRef(pw, tv)
		if okG != okW || okG && !bytes.Equal(p, pw) {
			t.Fatalf("PackI2S: ok %v, reference %v", okG, okW)
		}
		rb := raw[:len(raw)&^63]
		sg, sw := make([]float32, len(rb)/2), make([]float32, len(rb)/2)
		badG, badW := AbsSumBF16Blocks(sg, rb, 32), absSumBF16BlocksRef(sw, rb, 32)
		if badG != badW {
			t.Fatalf("AbsSumBF16Blocks: non-finite %v, reference %v", badG, badW)
		}
		for i := range sg {
			if !badG && !sameFloat(sg[i], sw[i]) {
				t.Fatalf("AbsSumBF16Blocks lane %d: %v, reference %v", i, sg[i], sw[i])
			}
		}
		rp := raw[:len(raw)&^255]
		pg, pw2 := make([]byte, len(rp)/8), make([]byte, len(rp)/8)
		TernarizePackI2S(pg, rp, inv)
		ternarizePackI2SRef(pw2, rp, inv)
		if !bytes.Equal(pg, pw2) {
			t.Fatal("TernarizePackI2S differs")
		}
	})
}

// FuzzAccTQ2_0Rows: the TQ2_0 row-range kernel (AVX-512 VNNI, AVX2 or Go)
// equals its pure-Go reference on any rows, activation, bsums and block
// scales: 1 to 7 rows of the input's whole 66-byte blocks, the activation,
// bsums and d_y taken cyclically from the input, fused and unfused.
func FuzzAccTQ2_0Rows(f *testing.F) {
	f.Add([]byte{0x07, 0xaa, 0x55, 0x01, 0xff, 0x80, 0x7f, 0x3c})
	seed := make([]byte, 7*3*tq2Bytes+1)
	for i := range seed {
		seed[i] = byte(i*131 + i>>3)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		nr := int(data[0])%7 + 1
		nb := (len(data) - 1) / (nr * tq2Bytes)
		if nb == 0 {
			return
		}
		rowB := nb * tq2Bytes
		rows := data[1 : 1+nr*rowB]
		at := func(i int) byte { return data[i%len(data)] }
		q := make([]int8, 256*nb)
		for i := range q {
			q[i] = int8(at(3*i + 1))
		}
		bsums := make([]int16, 16*nb)
		for i := range bsums {
			bsums[i] = int16(uint16(at(2*i)) | uint16(at(2*i+5))<<8)
		}
		d := make([]float32, nb)
		for i := range d {
			d[i] = float32(int8(at(7*i+2))) / 1024
		}
		for _, fused := range []bool{false, true} {
			got, want := make([]float32, nr), make([]float32, nr)
			AccTQ2_0Rows(got, rows, rowB, q, bsums, d, fused)
			accTQRowsRef(want, rows, rowB, q, bsums, d, fused, false)
			for k := range got {
				if !sameF32(got[k], want[k]) {
					t.Fatalf("nb=%d rows=%d fused %v: row %d: kernel %v, reference %v", nb, nr, fused, k, got[k], want[k])
				}
			}
		}
	})
}

// FuzzDotIQ2BNRows: the row-range IQ2_BN kernel (AVX-512 VNNI or AVX2
// where the CPU has them) equals its pure-Go reference on any rows: the
// input is cut into three rows of 4 + 16·nb bytes (scale bits, blocks),
// the activation codes, group scales and offsets repeat the rest.
func FuzzDotIQ2BNRows(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0xaa, 0x55, 0x01, 0xff, 0x80, 0x7f})
	f.Add(bytes.Repeat([]byte{0x3f, 0x1b, 0xe4, 0x40}, 700))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, rowB, q, d, minus, ok := iq2bnFuzzCase(data, 1)
		if !ok {
			return
		}
		got, want := make([]float32, 3), make([]float32, 3)
		DotIQ2BNRows(got, rows, rowB, q, &d[0], &minus[0])
		dotIQ2BNRowsRef(want, rows, rowB, q, &d[0], &minus[0])
		for k := range got {
			if !sameF32(got[k], want[k]) {
				t.Fatalf("rowB=%d: DotIQ2BNRows row %d: kernel %v, reference %v", rowB, k, got[k], want[k])
			}
		}
	})
}

// iq2bnFuzzCase cuts a fuzz input into three IQ2_BN rows of 4 + 16·nb
// bytes (nb = len(data)/240) and T tokens' Q8_K64 codes, group scales and
// offsets taken from the bytes after them (cycled): finite scales of
// either sign and any exponent byte, so that products round, overflow and
// cancel. ok is false for inputs under 240 bytes.
func iq2bnFuzzCase(data []byte, T int) (rows []byte, rowB int, q []int8, d, minus [][4]float32, ok bool) {
	nb := len(data) / 240
	if nb == 0 {
		return nil, 0, nil, nil, nil, false
	}
	rowB = 4 + 16*nb
	rows = data[:3*rowB]
	at := func(i int) byte { return data[(3*rowB+i)%len(data)] }
	q = make([]int8, T*64*nb)
	for i := range q {
		q[i] = int8(at(i))
	}
	d, minus = make([][4]float32, T), make([][4]float32, T)
	for tok := range T {
		o := len(q) + 8*tok
		for g := range 4 {
			d[tok][g] = math.Float32frombits(uint32(at(o+g))<<23 ^ uint32(at(o+4+g))<<31 | uint32(at(g+tok))<<8)
			minus[tok][g] = d[tok][g] * float32(int16(uint16(at(o+8+g))<<8|uint16(at(g+1+tok))))
		}
	}
	return rows, rowB, q, d, minus, true
}

// FuzzFMA32Acc: FMA32Acc (VFMADD231PS groups on amd64) equals FMA32 lane
// by lane on any operands: the input's 32-bit words are c, then pairs
// (acc, b).
func FuzzFMA32Acc(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0x00, 0x00, 0x80, 0x3f, 0x01, 0x00, 0x80, 0x33}, 20))
	f.Add(bytes.Repeat([]byte{0xff, 0xff, 0x7f, 0x7f, 0x00, 0x00, 0x80, 0x7f, 0x01, 0x00, 0xc0, 0x7f}, 12))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])) }
		if len(data) < 12 {
			return
		}
		c := w(0)
		n := (len(data)/4 - 1) / 2
		acc, b := make([]float32, n), make([]float32, n)
		for i := range acc {
			acc[i], b[i] = w(1+2*i), w(2+2*i)
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = FMA32(acc[i], b[i], c)
		}
		FMA32Acc(acc, b, c)
		for i := range acc {
			if !sameF32(acc[i], want[i]) {
				t.Fatalf("lane %d of %d: %x, FMA32 %x", i, n, math.Float32bits(acc[i]), math.Float32bits(want[i]))
			}
		}
	})
}
