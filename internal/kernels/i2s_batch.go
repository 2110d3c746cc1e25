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

// I2SBatchSegment is the number of blocks (128 inputs each) of one
// DotI2SBatch call that keeps its packed activations (I2SBatchTokens·4 KiB
// per 32 blocks) in a 48 KiB L1 cache. It is a multiple of 32 (the int16
// lane window of dotI2SRef), so the sums of consecutive segments add up
// to the whole row's exactly.
const I2SBatchSegment = 32

// DotI2SBatch adds, for every row r of rows (rows start rowB bytes apart;
// len(sums)/I2SBatchTokens rows) and each of the I2SBatchTokens token rows
// packed in xt (PackI2SBatch; xt starts at the chunk of block b0 and holds
// at least nb blocks), Σ code·q_t over blocks b0 … b0+nb−1 of the row
// (rows starts at block b0 of the first row) to sums[r·I2SBatchTokens + t].
// b0 must be even and a multiple of 32 unless it is 0, so that the range
// starts a chunk and an int16 lane window: over a whole row the sums are
// dotI2SRef's, int16 lane wrap and code 3 included. It panics on
// inconsistent lengths.
func DotI2SBatch(sums []int32, rows []byte, rowB, nb int, xt []int8) {
	nr := len(sums) / I2SBatchTokens
	if rowB <= 0 || rowB%32 != 0 || nb <= 0 || len(sums)%I2SBatchTokens != 0 ||
		len(xt) < (nb+1)/2*I2SBatchTokens*i2sBatchChunk || (nr > 0 && len(rows) < (nr-1)*rowB+32*nb) {
		panic("kernels: DotI2SBatch length mismatch")
	}
	if nr == 0 {
		return
	}
	dotI2SBatch(sums, rows, rowB, nb, xt)
}

// dotI2SBatchRef is DotI2SBatch's reference: the token rows unpacked from
// xt, then dotI2SRef over the nb blocks.
func dotI2SBatchRef(sums []int32, rows []byte, rowB, nb int, xt []int8) {
	qs := make([][]int8, I2SBatchTokens)
	for t := range qs {
		qs[t] = make([]int8, (nb+1)/2*i2sBatchChunk)
	}
	for c := 0; c < (nb+1)/2; c++ {
		for t := range qs {
			in := xt[(c*I2SBatchTokens+t)*i2sBatchChunk:]
			for p, e := range i2sBatchPerm {
				qs[t][c*i2sBatchChunk+int(e)] = in[p]
			}
		}
	}
	for r := 0; r < len(sums)/I2SBatchTokens; r++ {
		for t := range qs {
			sums[r*I2SBatchTokens+t] += dotI2SRef(rows[r*rowB:r*rowB+32*nb], qs[t][:128*nb])
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
