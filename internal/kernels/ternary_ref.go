package kernels

// sumsQ2_0Ref is SumsQ2_0 in Go.
func sumsQ2_0Ref(sums []int32, row []byte, q []int8) {
	for i := 0; i < len(row)/q2_0Bytes; i++ {
		for k := 0; k < 2; k++ {
			qs := row[q2_0Bytes*i+2+8*k : q2_0Bytes*i+10+8*k]
			qy := q[32*(2*i+k) : 32*(2*i+k)+32 : 32*(2*i+k)+32]
			var s int32
			for b, v := range qs {
				s += (int32(v&3) - 1) * int32(qy[4*b])
				s += (int32(v>>2&3) - 1) * int32(qy[4*b+1])
				s += (int32(v>>4&3) - 1) * int32(qy[4*b+2])
				s += (int32(v>>6) - 1) * int32(qy[4*b+3])
			}
			sums[2*i+k] = s
		}
	}
}

// sumsIQ2BNRef is SumsIQ2BN in Go.
func sumsIQ2BNRef(s *[4]int32, blocks []byte, q []int8) {
	for b := 0; b < len(blocks)/iq2bnBytes; b++ {
		blk := blocks[16*b : 16*b+16 : 16*b+16]
		qb := q[64*b : 64*b+64 : 64*b+64]
		for j, c := range blk {
			s[j/4] += int32(c&3)*int32(qb[j]) + int32(c>>2&3)*int32(qb[j+16]) +
				int32(c>>4&3)*int32(qb[j+32]) + int32(c>>6)*int32(qb[j+48])
		}
	}
}

// trits[v][n] is the digit ((v·3^n) mod 256)·3 >> 8 of a base-3 packed
// byte v (ggml's TQ1_0 and ik_llama.cpp's IQ1_BN packing).
var trits = func() (t [256][5]int32) {
	for v := range t {
		m := 1
		for n := range t[v] {
			t[v][n] = int32((v * m % 256 * 3) >> 8)
			m *= 3
		}
	}
	return t
}()

// sumsIQ1BNRef is SumsIQ1BN in Go.
func sumsIQ1BNRef(s *[4]int32, blocks []byte, q []int8) {
	for b := 0; b < len(blocks)/iq1bnBytes; b++ {
		blk := blocks[13*b : 13*b+13 : 13*b+13]
		qb := q[64*b : 64*b+64 : 64*b+64]
		for i16 := 0; i16 < 4; i16++ {
			base := 16 * i16
			for kk := 0; kk < 3; kk++ {
				for j := 0; j < 5; j++ {
					e := 5*kk + j
					s[e/4] += trits[blk[3*i16+kk]][4-j] * int32(qb[base+e])
				}
			}
			s[3] += trits[blk[12]][4-i16] * int32(qb[base+15])
		}
	}
}

// lanesTQ2_0Ref is LanesTQ2_0 in Go.
func lanesTQ2_0Ref(lanes []int32, row []byte, q []int8) {
	for b := 0; b < len(row)/tq2Bytes; b++ {
		blk := row[tq2Bytes*b : tq2Bytes*b+64 : tq2Bytes*b+64]
		y := q[256*b : 256*b+256 : 256*b+256]
		l := lanes[8*b : 8*b+8 : 8*b+8]
		clear(l)
		for h := 0; h < 2; h++ {
			for m, c := range blk[32*h : 32*h+32] {
				e := 128*h + m
				l[m/4] += int32(c&3)*int32(y[e]) + int32(c>>2&3)*int32(y[e+32]) +
					int32(c>>4&3)*int32(y[e+64]) + int32(c>>6)*int32(y[e+96])
			}
		}
	}
}

// lanesTQ1_0Ref is LanesTQ1_0 in Go.
func lanesTQ1_0Ref(lanes []int32, row []byte, q []int8) {
	for b := 0; b < len(row)/tq1Bytes; b++ {
		blk := row[tq1Bytes*b : tq1Bytes*b+52 : tq1Bytes*b+52]
		y := q[256*b : 256*b+256 : 256*b+256]
		l := lanes[8*b : 8*b+8 : 8*b+8]
		clear(l)
		for m, c := range blk[:32] {
			t := &trits[c]
			l[m/4] += t[0]*int32(y[m]) + t[1]*int32(y[32+m]) + t[2]*int32(y[64+m]) +
				t[3]*int32(y[96+m]) + t[4]*int32(y[128+m])
		}
		for m, c := range blk[32:48] {
			// weights 160+m+16n: n even in lane m/4, n odd in lane 4+m/4.
			t := &trits[c]
			l[m/4] += t[0]*int32(y[160+m]) + t[2]*int32(y[192+m]) + t[4]*int32(y[224+m])
			l[4+m/4] += t[1]*int32(y[176+m]) + t[3]*int32(y[208+m])
		}
		for j, c := range blk[48:52] {
			// weights 240+j+4n sit at chunk positions 16+j+4n: lane 4+n.
			for n, d := range trits[c][:4] {
				l[4+n] += d * int32(y[240+j+4*n])
			}
		}
	}
}

// dotQ2_0Ref is DotQ2_0 in Go.
func dotQ2_0Ref(row []byte, q []int8, d []float32) float32 {
	var sumf float32
	for i := 0; i < len(row)/q2_0Bytes; i++ {
		var sums [2]int32
		sumsQ2_0Ref(sums[:], row[q2_0Bytes*i:q2_0Bytes*(i+1)], q[64*i:])
		dx := f16Table[uint16(row[q2_0Bytes*i])|uint16(row[q2_0Bytes*i+1])<<8]
		var sumi float32
		for k := 0; k < 2; k++ {
			sumi = fma32(sumi, d[2*i+k], float32(sums[k]))
		}
		sumf = fma32(sumf, dx, sumi)
	}
	return sumf
}

// accTQRef is AccTQ1_0 (tq1) / AccTQ2_0 in Go.
func accTQRef(acc *[8]float32, row []byte, q []int8, bsums []int16, d []float32, fused, tq1 bool) {
	blockBytes := tq2Bytes
	if tq1 {
		blockBytes = tq1Bytes
	}
	var lanes [8]int32
	for b := 0; b < len(row)/blockBytes; b++ {
		blk := row[b*blockBytes : (b+1)*blockBytes]
		if tq1 {
			lanesTQ1_0Ref(lanes[:], blk, q[256*b:])
		} else {
			lanesTQ2_0Ref(lanes[:], blk, q[256*b:])
		}
		e := d[b] * f16Table[uint16(blk[blockBytes-2])|uint16(blk[blockBytes-1])<<8]
		for l := range acc {
			s := lanes[l] - int32(bsums[16*b+2*l]) - int32(bsums[16*b+2*l+1])
			if fused {
				acc[l] = fma32(acc[l], float32(s), e)
				continue
			}
			acc[l] += float32(float32(s) * e)
		}
	}
}

// accQ8_0Ref is AccQ8_0 in Go.
func accQ8_0Ref(acc *[8]float32, row []byte, q []int8, d []float32) {
	for b := 0; b < len(row)/q8_0Bytes; b++ {
		blk := row[b*q8_0Bytes : (b+1)*q8_0Bytes : (b+1)*q8_0Bytes]
		scale := f16Table[uint16(blk[0])|uint16(blk[1])<<8] * d[b]
		qs := q[32*b : 32*b+32 : 32*b+32]
		for l := range acc {
			var sumi int32
			for k := 4 * l; k < 4*l+4; k++ {
				sumi += int32(int8(blk[2+k])) * int32(qs[k])
			}
			acc[l] = fma32(acc[l], scale, float32(sumi))
		}
	}
}

// accQ6KRef is AccQ6K in Go.
func accQ6KRef(acc *[8]float32, row []byte, q []int8, d []float32) {
	for b := 0; b < len(row)/q6KBytes; b++ {
		blk := row[b*q6KBytes : (b+1)*q6KBytes : (b+1)*q6KBytes]
		y := q[256*b : 256*b+256 : 256*b+256]
		var lanes [8]int32
		for h := 0; h < 2; h++ {
			ql := blk[64*h : 64*h+64 : 64*h+64]
			qh := blk[128+32*h : 128+32*h+32 : 128+32*h+32]
			sc := blk[192+8*h : 192+8*h+8 : 192+8*h+8]
			ys := y[128*h : 128*h+128 : 128*h+128]
			for p := 0; p < 32; p++ {
				hi := qh[p]
				q0 := int32(ql[p]&0xF|(hi&3)<<4) - 32
				q1 := int32(ql[32+p]&0xF|(hi>>2&3)<<4) - 32
				q2 := int32(ql[p]>>4|(hi>>4&3)<<4) - 32
				q3 := int32(ql[32+p]>>4|(hi>>6&3)<<4) - 32
				s := p / 16
				lanes[p>>2] += int32(int8(sc[s]))*q0*int32(ys[p]) +
					int32(int8(sc[2+s]))*q1*int32(ys[32+p]) +
					int32(int8(sc[4+s]))*q2*int32(ys[64+p]) +
					int32(int8(sc[6+s]))*q3*int32(ys[96+p])
			}
		}
		e := d[b] * f16Table[uint16(blk[208])|uint16(blk[209])<<8]
		for l := range acc {
			acc[l] = fma32(acc[l], e, float32(lanes[l]))
		}
	}
}
