package verify

import (
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// Defect D23 (verify half): a key stored with another GGUF type than the
// converter writes was reported as "bitnet.block_count = 2, config.json
// gives 2", as if the values differed. The type mismatch is now named.
func TestVerifyMetadataTypeMismatch(t *testing.T) {
	bad := testutil.WithKVs(t, testutil.Golden(t, "tiny-bitnet", "gguf", "ggml-model-f32.gguf"), "", testutil.SetKV("bitnet.block_count", gguf.Uint64(2)))
	rep, err := Run(Options{GGUF: bad, HF: goldenHF, Tokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "bitnet.block_count is stored as uint64, hf2gguf writes uint32 (value 2, config.json gives 2)"
	if len(rep.Metadata) != 1 || rep.Metadata[0] != want || rep.Pass {
		t.Errorf("metadata %q (pass %v), want [%q]", rep.Metadata, rep.Pass, want)
	}
}
