package runtime

import "encoding/binary"

// The batched I2_S kernel: four token rows share one lookup table, so each
// packed weight byte (four codes) costs two table reads and one add for all
// four tokens instead of four multiply-adds per token. The integer sums it
// returns are exactly dotI2S's (the same int16 lane wrap), so batched and
// one-token evaluation give the same bits.
//
// Layout: a table serves one group of up to i2sLanes token rows. For block
// b (128 inputs), byte position j (0…31) and half h, entry
// ((b·32 + j)·2 + h)·16 + 4·ca + cb holds, in 16-bit lane t of a uint64,
// ca·(q_t[e_a] + 128) + cb·(q_t[e_b] + 128): for h = 0 (the byte's high
// nibble, codes of bits 7-6 and 5-4) e_a = 128b + j and e_b = 128b + 32 + j;
// for h = 1 (low nibble) e_a = 128b + 64 + j and e_b = 128b + 96 + j. The
// bias 128 keeps every lane non-negative, so lanes never borrow from each
// other; with codes ≤ 2 a lane sums at most 32 blocks · 2 · 2 · 2 · 255 =
// 65280 < 2^16 before it is read out and the bias (128 · Σ codes) removed.
// A row holding code 3 (never written by a quantizer, possible in a
// damaged file) could overflow a lane and is computed by dotI2S instead.

// i2sLanes is the number of token rows one lookup table serves.
const i2sLanes = 4

// i2sLUTPerBlock is the number of table entries of one 128-input block.
const i2sLUTPerBlock = 32 * 2 * 16

// buildI2SLUT fills lut (len k/128·i2sLUTPerBlock) for the token rows qs
// (1 to i2sLanes rows of k int8 activations; absent lanes count as zero
// activations and are ignored by the caller).
func buildI2SLUT(lut []uint64, qs [][]int8, k int) {
	if len(qs) == 0 || len(qs) > i2sLanes || len(lut) != k/128*i2sLUTPerBlock {
		panic("runtime: buildI2SLUT size mismatch")
	}
	for b := 0; b < k/128; b++ {
		tab := lut[b*i2sLUTPerBlock : (b+1)*i2sLUTPerBlock]
		for j := 0; j < 32; j++ {
			for h := 0; h < 2; h++ {
				ea, eb := 128*b+64*h+j, 128*b+64*h+32+j
				var xa, xb uint64
				for t := 0; t < i2sLanes; t++ {
					va, vb := uint64(128), uint64(128)
					if t < len(qs) {
						va, vb = uint64(int64(qs[t][ea])+128), uint64(int64(qs[t][eb])+128)
					}
					xa |= va << (16 * t)
					xb |= vb << (16 * t)
				}
				e := tab[(j*2+h)*16 : (j*2+h)*16+16]
				for ca := uint64(0); ca < 4; ca++ {
					for cb := uint64(0); cb < 4; cb++ {
						e[4*ca+cb] = ca*xa + cb*xb
					}
				}
			}
		}
	}
}

// dotI2SLUT returns, for each of the table's token rows t, Σ code·q_t over
// one packed I2_S row (dotI2S's value, int16 lane wrap included). ok is
// false when the row holds code 3; the sums are then not computed.
func dotI2SLUT(row []byte, lut []uint64) (sums [i2sLanes]int32, ok bool) {
	groups := (len(row)/32 + 31) / 32
	codes := make([]uint16, groups*16)
	var bad [1]bool
	i2sPairCodes(row, len(row), codes, bad[:])
	if bad[0] {
		return sums, false
	}
	var s [1][i2sLanes]int32
	dotI2SLUTRows(row, len(row), lut, codes, s[:])
	return s[0], true
}

// i2sPairGroups is the number of 32-block groups (int16 lane windows) of a
// row of rowB packed bytes.
func i2sPairGroups(rowB int) int { return (rowB/32 + 31) / 32 }

// i2sPairCodes computes, for each of the len(three) consecutive weight rows
// of rowB bytes in raw, the sum of the codes of every byte pair (bytes 2l
// and 2l+1 of each block, l = 0…15) over each 32-block group, into
// codes[(r·groups + g)·16 + l] (groups = i2sPairGroups(rowB)), and
// whether the row holds code 3 (three[r]). dotI2SLUTRows subtracts
// 128·codes to undo the table's bias. The values depend only on the
// weights, so MatMul computes them once per matrix.
func i2sPairCodes(raw []byte, rowB int, codes []uint16, three []bool) {
	nb := rowB / 32
	groups := i2sPairGroups(rowB)
	if len(raw) < len(three)*rowB || len(codes) < len(three)*groups*16 {
		panic("runtime: i2sPairCodes size mismatch")
	}
	const (
		m1 = 0x5555555555555555
		m2 = 0x3333333333333333
		m4 = 0x0f0f0f0f0f0f0f0f
		m8 = 0x00ff00ff00ff00ff
	)
	for r := range three {
		var any3 uint64
		row := raw[r*rowB : (r+1)*rowB]
		for g := 0; g < groups; g++ {
			// acc[w] lane i: pair 4w+i (bytes 8w+2i, 8w+2i+1).
			var acc [4]uint64
			for b := 32 * g; b < min(32*g+32, nb); b++ {
				for w := 0; w < 4; w++ {
					v := binary.LittleEndian.Uint64(row[b*32+8*w:])
					any3 |= v & (v >> 1) & m1
					n2 := v&m2 + v>>2&m2       // per nibble: sum of its two codes
					n4 := n2&m4 + n2>>4&m4     // per byte: sum of its four codes
					acc[w] += n4&m8 + n4>>8&m8 // per byte pair
				}
			}
			out := codes[(r*groups+g)*16 : (r*groups+g)*16+16]
			for l := range out {
				out[l] = uint16(acc[l/4] >> (16 * (l % 4)))
			}
		}
		three[r] = any3 != 0
	}
}

// i2sRowTile is the most rows dotI2SLUTRows takes at once: their
// accumulators (4 KiB) and the table block they share (8 KiB) stay in L1.
const i2sRowTile = 16

// dotI2SLUTRows is dotI2SLUT for len(sums) (≤ i2sRowTile) consecutive
// weight rows of rowB bytes each, packed in raw, none holding code 3, with
// their pair code sums from i2sPairCodes: sums[r] for row r. It walks the
// rows block by block, so each 8 KiB block of the table is read from L1 by
// all the rows.
func dotI2SLUTRows(raw []byte, rowB int, lut []uint64, codes []uint16, sums [][i2sLanes]int32) {
	nr := len(sums)
	nb := rowB / 32
	groups := i2sPairGroups(rowB)
	if nr > i2sRowTile || len(raw) < nr*rowB || len(lut) < nb*i2sLUTPerBlock || len(codes) < nr*groups*16 {
		panic("runtime: dotI2SLUTRows size mismatch")
	}
	for r := range sums {
		sums[r] = [i2sLanes]int32{}
	}
	var s [i2sRowTile][32]uint64
	for g := 0; g < groups; g++ {
		s = [i2sRowTile][32]uint64{}
		for b := 32 * g; b < min(32*g+32, nb); b++ {
			tab := (*[i2sLUTPerBlock]uint64)(lut[b*i2sLUTPerBlock : (b+1)*i2sLUTPerBlock])
			for r := 0; r < nr; r++ {
				lutAccumulate(&s[r], (*[32]byte)(raw[r*rowB+b*32:r*rowB+b*32+32]), tab)
			}
		}
		for r := 0; r < nr; r++ {
			c := codes[(r*groups+g)*16 : (r*groups+g)*16+16]
			for l := 0; l < 16; l++ {
				bias := 128 * int32(c[l])
				for t := 0; t < i2sLanes; t++ {
					p := int32(s[r][2*l]>>(16*t)&0xffff) + int32(s[r][2*l+1]>>(16*t)&0xffff) - bias
					sums[r][t] += int32(int16(p))
				}
			}
		}
	}
}

// lutAccumulate adds one block of one weight row to its 32 byte-position
// accumulators: two table entries per packed byte (high and low nibble).
// Kept apart from dotI2SLUTRows so the loop runs in registers.
func lutAccumulate(s *[32]uint64, blk *[32]byte, tab *[i2sLUTPerBlock]uint64) {
	for j := 0; j < 32; j += 4 {
		c0, c1, c2, c3 := blk[j], blk[j+1], blk[j+2], blk[j+3]
		e := tab[j*32 : j*32+128 : j*32+128]
		s[j] += e[c0>>4] + e[16+c0&15]
		s[j+1] += e[32+c1>>4] + e[48+c1&15]
		s[j+2] += e[64+c2>>4] + e[80+c2&15]
		s[j+3] += e[96+c3>>4] + e[112+c3&15]
	}
}

// The one-token I2_S kernel: for a single token row (generation), a table
// of 256 entries per block and byte position j gives Σ code·q of the four
// codes of a packed byte in one read: entry ((b·32 + j)·256 + c) is
// c₇₆·q[e] + c₅₄·q[e+32] + c₃₂·q[e+64] + c₁₀·q[e+96] for e = 128b + j (at
// most 4·3·128 in magnitude, exact in int16). The sums per byte position
// are exact int32, then folded through the int16 lanes as dotI2S does, so
// the result is dotI2S's for any codes.

// i2sLUT1PerBlock is the number of one-token table entries of one block.
const i2sLUT1PerBlock = 32 * 256

// buildI2SLUT1 fills lut (len len(q)/128·i2sLUT1PerBlock) for the token row q.
func buildI2SLUT1(lut []int16, q []int8) {
	nb := len(q) / 128
	if len(lut) != nb*i2sLUT1PerBlock {
		panic("runtime: buildI2SLUT1 size mismatch")
	}
	var hi, lo [16]int16
	for b := 0; b < nb; b++ {
		for j := 0; j < 32; j++ {
			e := 128*b + j
			x0, x1, x2, x3 := int16(q[e]), int16(q[e+32]), int16(q[e+64]), int16(q[e+96])
			for c := 0; c < 16; c++ {
				hi[c] = int16(c>>2)*x0 + int16(c&3)*x1
				lo[c] = int16(c>>2)*x2 + int16(c&3)*x3
			}
			tab := (*[256]int16)(lut[(b*32+j)*256 : (b*32+j+1)*256])
			for c := 0; c < 256; c++ {
				tab[c] = hi[c>>4] + lo[c&15]
			}
		}
	}
}

// dotI2SLUT1Rows returns dotI2S's Σ code·q for len(sums) consecutive
// weight rows of rowB bytes in raw (at most i2sRowTile), from the
// one-token table lut of q. It walks the rows block by block so each 16 KiB
// block of the table serves all of them from L1.
func dotI2SLUT1Rows(raw []byte, rowB int, lut []int16, sums []int32) {
	nr := len(sums)
	nb := rowB / 32
	if nr > i2sRowTile || len(raw) < nr*rowB || len(lut) < nb*i2sLUT1PerBlock {
		panic("runtime: dotI2SLUT1Rows size mismatch")
	}
	clear(sums)
	var s [i2sRowTile][32]int32
	for g := 0; g < nb; g += 32 {
		s = [i2sRowTile][32]int32{}
		for b := g; b < min(g+32, nb); b++ {
			tab := (*[i2sLUT1PerBlock]int16)(lut[b*i2sLUT1PerBlock : (b+1)*i2sLUT1PerBlock])
			for r := 0; r < nr; r++ {
				lut1Accumulate(&s[r], (*[32]byte)(raw[r*rowB+b*32:r*rowB+b*32+32]), tab)
			}
		}
		for r := 0; r < nr; r++ {
			for l := 0; l < 16; l++ {
				sums[r] += int32(int16(s[r][2*l] + s[r][2*l+1]))
			}
		}
	}
}

// lut1Accumulate adds one block of one weight row to its 32 byte-position
// sums: one table entry per packed byte.
func lut1Accumulate(s *[32]int32, blk *[32]byte, tab *[i2sLUT1PerBlock]int16) {
	for j := 0; j < 32; j += 4 {
		e := tab[j*256 : j*256+1024 : j*256+1024]
		s[j] += int32(e[blk[j]])
		s[j+1] += int32(e[256+int(blk[j+1])])
		s[j+2] += int32(e[512+int(blk[j+2])])
		s[j+3] += int32(e[768+int(blk[j+3])])
	}
}
