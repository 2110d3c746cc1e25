package format

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// TestQ2_0Bytes checks Encode against bytes worked out by hand from
// block_q2_0 (f16 d, then element j at byte j/4, bits 2·(j%4), code t + 1):
// block 0 repeats the codes −1, 0, +1, +1 (codes 0, 1, 2, 2 → 0xA4) with
// scale 0.5 (f16 0x3800); block 1 has scale 0, stored as d = 0 with code 1
// everywhere (0x55), as quantize_row_q2_0_ref writes an all-zero block.
func TestQ2_0Bytes(t *testing.T) {
	codes := make([]int8, 128)
	for j := range 64 {
		codes[j] = []int8{-1, 0, 1, 1}[j%4]
	}
	dst := make([]byte, 36)
	if err := (Q2_0{}).Encode(dst, codes, []float32{0.5, 0}, 128, 1); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{0x00, 0x38}, bytes.Repeat([]byte{0xA4}, 16)...), append([]byte{0, 0}, bytes.Repeat([]byte{0x55}, 16)...)...)
	if !bytes.Equal(dst, want) {
		t.Fatalf("Encode = % x\nwant     % x", dst, want)
	}
	got := make([]int8, 128)
	sc, err := (Q2_0{}).Decode(got, dst, 128, 1)
	if err != nil || sc[0] != 0.5 || sc[1] != 0 || !bytes.Equal(asBytes(got), asBytes(codes)) {
		t.Errorf("Decode = %v, %v, %v", got, sc, err)
	}
	if n, err := (Q2_0{}).Code3(dst, 128, 1); n != 0 || err != nil {
		t.Errorf("Code3 = %d, %v", n, err)
	}
	// Code 3 (+2·d) in block 1, row 0: counted, and Decode refuses it.
	dst[20] = 0xFF
	dst[21] = 0x57
	if n, _ := (Q2_0{}).Code3(dst, 128, 1); n != 5 {
		t.Errorf("Code3 = %d, want 5", n)
	}
	if _, err := (Q2_0{}).Decode(got, dst, 128, 1); err == nil || !strings.Contains(err.Error(), "block 1 (row 0) holds code 3") {
		t.Errorf("Decode of code 3: %v", err)
	}
	if err := (Q2_0{}).Check(96, 1); err == nil {
		t.Error("K = 96 accepted")
	}
}

// q2_0Ref is quantize_row_q2_0_ref (ggml-org/llama.cpp ggml-quants.c)
// written out for the test: d = block max |x|, id = 1/d (0 for d = 0),
// code clamp(roundf(x·id) + 1, 0, 3).
func q2_0Ref(x []float32) []byte {
	out := make([]byte, len(x)/QK2_0*18)
	for b := 0; b < len(x)/QK2_0; b++ {
		blk := x[b*QK2_0 : (b+1)*QK2_0]
		var amax float32
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		var id float32
		if amax > 0 {
			id = 1 / amax
		}
		o := out[b*18:]
		binary.LittleEndian.PutUint16(o, quantize.F32ToF16(amax))
		for j, v := range blk {
			q := int(math.Round(float64(v*id))) + 1
			q = min(max(q, 0), 3)
			o[2+j/4] |= byte(q) << (2 * (j % 4))
		}
	}
	return out
}

// TestQ2_0AsQuantize: a ternary tensor with one scale per tensor (as
// hf2gguf's abs-mean and I2_S give it) encodes to the bytes the reference
// quantizer makes of its dequantized float weights, all-zero blocks and
// rows included.
func TestQ2_0AsQuantize(t *testing.T) {
	const k, m = 384, 5
	codes := make([]int8, k*m)
	x := make([]float32, k*m)
	s := float32(0.0123456)
	for e := range codes {
		if e/k == 2 || (e >= 64 && e < 128) {
			continue // an all-zero row and an all-zero block
		}
		codes[e] = int8((e*7+e/13)%3) - 1
		x[e] = float32(codes[e]) * s
	}
	sc, err := Regroup(codes, []float32{s}, 0, QK2_0)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, k*m/QK2_0*18)
	if err := EncodeParallel(Q2_0{}, dst, codes, sc, k, m, 3); err != nil {
		t.Fatal(err)
	}
	if want := q2_0Ref(x); !bytes.Equal(dst, want) {
		t.Fatalf("Encode differs from quantize_row_q2_0_ref")
	}
}
