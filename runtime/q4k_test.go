package runtime

import (
	"path/filepath"
	"testing"
)

// TestGoldenQ4KEmbedding: a tied Q4_K token_embd made by bitnet.cpp's own
// llama-quantize (get_rows through dequantize_row_q4_K, the LM head
// through vec_dot_q4_K_q8_K) reproduces its build A's (AVX2) logits bit
// for bit, both prompts, one token per call and batched
// (testdata/golden/q4k-embd).
func TestGoldenQ4KEmbedding(t *testing.T) {
	dir := "../testdata/golden/q4k-embd"
	for _, prompt := range []string{"hello", "ids"} {
		for _, run := range seqRunners {
			t.Run(prompt+"_"+run.name, func(t *testing.T) {
				m := openModel(t, filepath.Join(dir, "tiny-bitnet-i2_s-q4k-llamaquantize.gguf"), run.threads)
				if m.tokEmbd.Type.String() != "Q4_K" || m.output != m.tokEmbd {
					t.Fatalf("token_embd %s, tied %v: not the Q4_K case", m.tokEmbd.Type, m.output == m.tokEmbd)
				}
				checkGoldenBits(t, m, filepath.Join(dir, "tiny-bitnet-i2_s-q4k-llamaquantize_"+prompt+"_seq_t1"), run.f)
			})
		}
	}
}
