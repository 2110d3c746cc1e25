package verify

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

// goldenHelloIDs is the golden prompt "Hello world, this is a tiny BitNet
// test." with BOS, as both golden READMEs list it.
var goldenHelloIDs = []int32{1, 413, 480, 414, 271, 417, 313, 269, 421, 427, 457, 360, 314, 411, 280, 262, 261, 437, 413, 461, 268, 469, 316, 262, 414, 284, 432}

func readF32s(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// The streamed float64 reference reproduces the external runtimes' float
// logits on the golden prompt: bitnet.cpp's F32 run of tiny-bitnet (1bitLLM
// architecture, SiLU, inner_attn_ln names) and ik_llama.cpp's F32 run of
// b158-h512 (2B-4T architecture, relu2, head_dim 128). The bounds are what
// those runtimes' F16 KV cache moves (and, for b158-h512, the scale its
// GGUF stores rounded to bf16 while the reference uses the f32 abs-mean;
// testdata/golden/b158-h512/README.md), with about 2× margin over the
// measured 0.0113 and 0.0309. A wrong rope pairing, a missing sub-norm or a
// wrong gate moves these logits by more than 0.5.
func TestReferenceMatchesGoldenLogits(t *testing.T) {
	for _, tc := range []struct {
		hf, logits string
		bound      float64
	}{
		{"../testdata/golden/tiny-bitnet/hf", "../testdata/golden/tiny-bitnet/outputs/f32_hello_seq_t1.prompt_logits.f32", 0.02},
		{"../testdata/golden/b158-h512/hf", "../testdata/golden/b158-h512/outputs/tiny-b158-h512_f32_hello_seq.prompt_logits.f32", 0.06},
	} {
		src, err := convert.OpenSource(tc.hf, convert.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := referenceLogits(src, tc.hf, goldenHelloIDs)
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := readF32s(t, tc.logits)
		if len(got) != len(want) {
			t.Fatalf("%s: %d logits, golden %d", tc.hf, len(got), len(want))
		}
		var worst float64
		at := 0
		for i := range want {
			if d := math.Abs(got[i] - float64(want[i])); d > worst {
				worst, at = d, i
			}
		}
		t.Logf("%s: max |Δ| %.3g at position %d id %d", tc.hf, worst, at/512, at%512)
		if worst > tc.bound {
			t.Errorf("%s: max |Δlogit| %.3g at position %d id %d > %g", tc.hf, worst, at/512, at%512, tc.bound)
		}
	}
}
