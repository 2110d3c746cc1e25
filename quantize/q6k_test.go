package quantize_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// refInput is a fixed input of 64 blocks of 256 values that are exact in
// float32 (integers / 8192 from a multiplicative hash), with an all-zero
// block (3), a block of tiny values (5) and a block with outliers (7).
func refInput() []float32 {
	const n = 256 * 64
	x := make([]float32, n)
	for i := uint32(0); i < n; i++ {
		h := i * 2654435761
		x[i] = float32(int((h>>8)%20001)-10000) / 8192
		switch {
		case i/256 == 3:
			x[i] = 0
		case i/256 == 5:
			x[i] *= 1e-6
		case i/256 == 7 && i%16 == 0:
			x[i] *= 40
		}
	}
	return x
}

// The expected digests come from ggml-org/llama.cpp's quantize_row_q6_K_ref
// and quantize_row_q8_0_ref (ggml/src/ggml-quants.c) compiled with
// gcc 12 -O2 -mf16c -ffp-contract=off on refInput. ggml builds that let the
// compiler contract multiply-adds into FMA (gcc -march=native with its
// default -ffp-contract=fast) compute make_qx_quants' sums differently: on
// this input 2 of the 64 Q6_K blocks (9 and 10) then differ; Q8_0 has no
// multiply-add and is the same in every build.
const (
	q6kRefSHA256 = "63832c6a1d6c1f3811fd4c49be0d4a8621fd7a5310af5195e98e84b693e5d347"
	q80RefSHA256 = "a49529ab96f828836bb229741ffe252d9998e5377a1e0170385ae9b17ee54b3f"
)

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func TestQ6KMatchesGGML(t *testing.T) {
	x := refInput()
	out := make([]byte, len(x)/256*quantize.Q6KBytes)
	quantize.QuantizeQ6K(out, x)
	if got := sum(out); got != q6kRefSHA256 {
		t.Errorf("Q6_K sha256 %s, want %s", got, q6kRefSHA256)
	}
	// Zero block: all zero bytes including d.
	for _, b := range out[3*210 : 4*210] {
		if b != 0 {
			t.Fatal("all-zero block is not zero bytes")
		}
	}
	// Dequantizing gives values within half a step of the input.
	back := make([]float32, len(x))
	quantize.DequantizeQ6K(back, out)
	for i := 0; i < 256; i++ {
		if d := back[i] - x[i]; d > 0.05 || d < -0.05 {
			t.Fatalf("element %d: %v back as %v", i, x[i], back[i])
		}
	}
}

func TestQ8_0MatchesGGML(t *testing.T) {
	x := refInput()
	out := make([]byte, len(x)/32*quantize.Q8_0Bytes)
	quantize.QuantizeQ8_0(out, x)
	if got := sum(out); got != q80RefSHA256 {
		t.Errorf("Q8_0 sha256 %s, want %s", got, q80RefSHA256)
	}
	back := make([]float32, len(x))
	quantize.DequantizeQ8_0(back, out)
	for i := 0; i < 32; i++ {
		if d := back[i] - x[i]; d > 0.01 || d < -0.01 {
			t.Fatalf("element %d: %v back as %v", i, x[i], back[i])
		}
	}
}
