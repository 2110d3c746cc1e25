package gpupack

import "fmt"

// Int2Address returns where the ternary weight at row n, column k of an
// [N, K] matrix lives in bitnet.cpp's GPU int2 layout: the byte index in the
// int8 [N, K/4] tensor and the bit shift of its 2-bit code (code = t + 2).
//
// The matrix is cut into 16×32 tiles stored row of tiles by row of tiles
// (128 bytes each); inside a tile, 32 "threads" own one int32 each holding
// 16 codes, with the codes of byte b at shifts 0, 2, 4, 6 being tile
// columns b, b+4, b+8, b+12 of the thread's 16. This is the closed form of
// microsoft/BitNet gpu/pack_weight.py (permutate_weight_fastest,
// compress_int2_to_int8, interleave_weight_int8), as
// formats-2026.md table A4 derives it:
//
//	r = n%16, c = k%32, tid = (r/8)·16 + (c/16)·8 + r%8, v = c%16
//	byte = (n/16)·(16·K/4) + (k/32)·128 + tid·4 + v%4,  shift = 2·(v/4)
//
// K must be a multiple of 32 and N of 16 (CheckShape).
func Int2Address(n, k, K int) (byteIndex int, shift uint) {
	r, c := n%16, k%32
	tid := (r/8)*16 + (c/16)*8 + r%8
	v := c % 16
	return (n/16)*(16*K/4) + (k/32)*128 + tid*4 + v%4, uint(2 * (v / 4))
}

// CheckShape reports whether an [N, K] matrix can be packed: N % 16 == 0 and
// K % 32 == 0 (the 16×32 tiles of pack_weight.py). The GEMV kernel also
// needs K % 128 == 0; SupportedShape has the kernel's own list.
func CheckShape(n, k int) error {
	if n <= 0 || k <= 0 || n%16 != 0 || k%32 != 0 {
		return fmt.Errorf("shape [%d, %d] cannot be packed for the GPU kernel: rows must be a multiple of 16 and columns of 32", n, k)
	}
	return nil
}

// PackInt2 writes the [N, K] ternary codes t ∈ {-1, 0, 1} (row-major) as the
// int8 [N, K/4] bytes of model_state_int2.pt into dst (len N·K/4), every
// code t+2 at Int2Address. It panics when the lengths do not match the shape
// or CheckShape fails (a programmer error: callers check first).
func PackInt2(dst []byte, codes []int8, n, k int) {
	if CheckShape(n, k) != nil || len(codes) != n*k || len(dst) != n*k/4 {
		panic("gpupack: PackInt2: bad shape or lengths")
	}
	clear(dst)
	// One tile row at a time; inside, each (row, 32-column block) fills one
	// thread's 4 bytes of the tile for columns 0..15 and the next thread
	// (tid+8) for columns 16..31.
	for row := range n {
		r := row % 16
		base := (row / 16) * (16 * k / 4)
		tid0 := (r/8)*16 + r%8
		src := codes[row*k : (row+1)*k]
		for kb := 0; kb < k; kb += 32 {
			tile := base + (kb/32)*128
			for half := range 2 {
				out := dst[tile+(tid0+half*8)*4 : tile+(tid0+half*8)*4+4]
				cs := src[kb+half*16 : kb+half*16+16]
				for v, t := range cs {
					out[v%4] |= byte(t+2) << (2 * (v / 4))
				}
			}
		}
	}
}

// UnpackInt2 decodes the int8 [N, K/4] bytes of an int2 checkpoint tensor
// back to the [N, K] codes (row-major), reading every code at Int2Address as
// the kernel does (t = code − 2). A code 0 (t = −2, which the packer never
// writes) is an error naming its position.
func UnpackInt2(codes []int8, src []byte, n, k int) error {
	if err := CheckShape(n, k); err != nil {
		return err
	}
	if len(codes) != n*k || len(src) != n*k/4 {
		return fmt.Errorf("int2 [%d, %d]: %d codes and %d bytes, want %d and %d", n, k, len(codes), len(src), n*k, n*k/4)
	}
	for row := range n {
		for col := range k {
			b, sh := Int2Address(row, col, k)
			c := src[b] >> sh & 3
			if c == 0 {
				return fmt.Errorf("int2 [%d, %d]: code 0 at row %d column %d (byte %d): not a ternary value", n, k, row, col, b)
			}
			codes[row*k+col] = int8(c) - 2
		}
	}
	return nil
}
