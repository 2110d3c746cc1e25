package runtime

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

const q6kDir = "../testdata/golden/q6k-embd"

// ourQ6KSHA256 is the sha256 of the file `hf2gguf testdata/golden/tiny-bitnet/hf
// --token-embedding-type Q6_K` wrote (bitnet_convert.version "(devel)"), the
// file bitnet.cpp build A's oracle-dump ran for the ours_* goldens
// (testdata/golden/q6k-embd/README.md).
const ourQ6KSHA256 = "a87f4ec475f15f47b23f9a5d48a1413a63c393807989a1c7b45d78322bbb452f"

// TestGoldenQ6KEmbedding: a tied Q6_K token_embd (get_rows through
// dequantize_row_q6_K, the LM head through vec_dot_q6_K_q8_K) reproduces
// bitnet.cpp build A's (AVX2) logits bit for bit, on the file our hf2gguf
// writes (converted here, its bytes checked to be the ones the reference
// ran) and on the one its own llama-quantize --token-embedding-type q6_k
// made, both prompts, one token per call and batched.
func TestGoldenQ6KEmbedding(t *testing.T) {
	ours := filepath.Join(t.TempDir(), "tiny-i2_s-q6k.gguf")
	if _, err := convert.ConvertDir(context.Background(), filepath.Join(tinyDir, "hf"), ours, false, false, convert.Options{TokenEmbeddingType: "Q6_K"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != ourQ6KSHA256 {
		t.Fatalf("hf2gguf --token-embedding-type Q6_K wrote sha256 %s, the reference ran %s", got, ourQ6KSHA256)
	}
	for _, c := range []struct{ name, gguf string }{
		{"ours", ours},
		{"llamaquantize", filepath.Join(q6kDir, "tiny-bitnet-i2_s-q6k-llamaquantize.gguf")},
	} {
		for _, prompt := range []string{"hello", "ids"} {
			for _, run := range seqRunners {
				t.Run(c.name+"_"+prompt+"_"+run.name, func(t *testing.T) {
					m := openModel(t, c.gguf, run.threads)
					if m.tokEmbd.Type.String() != "Q6_K" || m.output != m.tokEmbd {
						t.Fatalf("token_embd %s, tied %v: not the Q6_K case", m.tokEmbd.Type, m.output == m.tokEmbd)
					}
					checkGoldenBits(t, m, filepath.Join(q6kDir, fmt.Sprintf("tiny-bitnet-i2_s-q6k-%s_%s_seq_t1", c.name, prompt)), run.f)
				})
			}
		}
	}
}
