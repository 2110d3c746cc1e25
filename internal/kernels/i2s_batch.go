package kernels

// I2SBatchTokens is the number of token rows DotI2SBatch multiplies with
// each weight read.
const I2SBatchTokens = 8

// i2sBatchChunk is the number of activation bytes of one token per chunk
// of two 32-byte I2_S blocks (256 inputs).
const i2sBatchChunk = 256

// I2SBatchAccelerated reports whether DotI2SBatch runs in assembly here
// (amd64 with AVX-512 F, BW, VL and VNNI); without it the runtime keeps its
// other I2_S kernels, which are faster than DotI2SBatch's pure-Go
// reference.
func I2SBatchAccelerated() bool { return i2sBatchAccelerated() }

// I2SBatchLen is the length of PackI2SBatch's output for rows of k inputs
// (k a multiple of 128): I2SBatchTokens·256 bytes per pair of blocks, the
// last pair completed with zeros when k/128 is odd.
func I2SBatchLen(k int) int { return (k/128 + 1) / 2 * I2SBatchTokens * i2sBatchChunk }

// i2sBatchPerm maps byte p of a token's 256-byte chunk to the input it holds
// (0…255 within the chunk's two blocks). The chunk is four 64-byte vectors
// A, B, C, D matching the kernel's code vectors: with s_k the codes of field
// k of each of the chunk's 64 packed bytes (field 0: bits 7-6, input j of
// the block; 1: bits 5-4, j+32; 2: bits 3-2, j+64; 3: bits 1-0, j+96),
// A interleaves the low 16-bit words of s0 and s1 within each 16-byte lane
// (x86 VPUNPCKLWD), B their high words (VPUNPCKHWD), C and D those of s2 and
// s3. Each 4-byte group then holds codes of one int16 lane of
// dotI2SRef (bytes 2l and 2l+1 of a block) only.
var i2sBatchPerm = func() (p [i2sBatchChunk]uint8) {
	for v := 0; v < 4; v++ { // A, B, C, D
		for o := 0; o < 64; o++ {
			lane, i, w := o/16, o%16/4, o%4
			word := i
			if v%2 == 1 {
				word += 4 // high words
			}
			k := 2*(v/2) + w/2            // field
			pos := 16*lane + 2*word + w%2 // packed byte in the chunk
			blk, j := pos/32, pos%32
			p[64*v+o] = uint8(128*blk + 32*k + j)
		}
	}
	return p
}()

// PackI2SBatch lays out I2SBatchTokens token rows of k int8 activations
// (len(qs) ≤ I2SBatchTokens, each len ≥ k; missing rows count as zeros)
// for DotI2SBatch: chunk c of two blocks, token t at
// dst[(c·I2SBatchTokens + t)·256:], bytes in i2sBatchPerm's order. It
// panics if len(dst) != I2SBatchLen(k) or k is not a multiple of 128.
func PackI2SBatch(dst []int8, qs [][]int8, k int) {
	if k%128 != 0 || len(dst) != I2SBatchLen(k) || len(qs) > I2SBatchTokens {
		panic("kernels: PackI2SBatch size mismatch")
	}
	for c := 0; c < len(dst)/(I2SBatchTokens*i2sBatchChunk); c++ {
		for t := 0; t < I2SBatchTokens; t++ {
			out := dst[(c*I2SBatchTokens+t)*i2sBatchChunk : (c*I2SBatchTokens+t+1)*i2sBatchChunk]
			if t >= len(qs) {
				clear(out)
				continue
			}
			q := qs[t][:k]
			base := c * i2sBatchChunk
			for p, e := range i2sBatchPerm {
				if i := base + int(e); i < k {
					out[p] = q[i]
				} else {
					out[p] = 0
				}
			}
		}
	}
}

// DotI2SBatch stores DotI2S(row_r, q_t) for every row r of rowB bytes in
// rows and each of the I2SBatchTokens token rows packed in xt
// (PackI2SBatch with k = 4·rowB) into sums[r·I2SBatchTokens + t]: the same
// int16 lane wrap as dotI2SRef for any codes (code 3 included). It panics
// on inconsistent lengths.
func DotI2SBatch(sums []int32, rows []byte, rowB int, xt []int8) {
	if rowB <= 0 || rowB%32 != 0 || len(rows)%rowB != 0 || len(xt) != I2SBatchLen(4*rowB) ||
		len(sums) != len(rows)/rowB*I2SBatchTokens {
		panic("kernels: DotI2SBatch length mismatch")
	}
	dotI2SBatch(sums, rows, rowB, xt)
}

// dotI2SBatchRef is DotI2SBatch's reference: the token rows unpacked from
// xt, then dotI2SRef.
func dotI2SBatchRef(sums []int32, rows []byte, rowB int, xt []int8) {
	k := 4 * rowB
	qs := make([][]int8, I2SBatchTokens)
	for t := range qs {
		qs[t] = make([]int8, (k+255)/256*256)
	}
	for c := 0; c < len(xt)/(I2SBatchTokens*i2sBatchChunk); c++ {
		for t := range qs {
			in := xt[(c*I2SBatchTokens+t)*i2sBatchChunk:]
			for p, e := range i2sBatchPerm {
				qs[t][c*i2sBatchChunk+int(e)] = in[p]
			}
		}
	}
	for r := 0; r < len(rows)/rowB; r++ {
		for t := range qs {
			sums[r*I2SBatchTokens+t] = dotI2SRef(rows[r*rowB:(r+1)*rowB], qs[t][:k])
		}
	}
}

// ExpSub writes Exp(src[i] − m) to dst[i] (the subtraction rounded to
// float32 first), as ggml_vec_soft_max_f32 computes a softmax's
// exponentials: the same bits as Exp element by element, sixteen lanes at a
// time in assembly where I2SBatchAccelerated. It panics if
// len(dst) < len(src).
func ExpSub(dst, src []float32, m float32) {
	if len(dst) < len(src) {
		panic("kernels: ExpSub length mismatch")
	}
	expSub(dst, src, m)
}

// expSubRef is ExpSub's reference.
func expSubRef(dst, src []float32, m float32) {
	for i, v := range src {
		dst[i] = Exp(v - m)
	}
}
