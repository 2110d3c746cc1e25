package runtime

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// relabel writes a copy of the GGUF at path with arch renamed to arch (every
// "OLD.*" key becomes "arch.*") and key arch.hidden_activation set to act
// (absent when act is the zero Value), and returns its path.
func relabel(t *testing.T, path, arch string, act gguf.Value) string {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old := f.Arch()
	f.Close()
	return testutil.WithKVs(t, path, filepath.Join(t.TempDir(), arch+".gguf"), func(in []gguf.KV) []gguf.KV {
		var kvs []gguf.KV
		for _, kv := range in {
			switch {
			case kv.Key == "general.architecture":
				kv.Value = gguf.String(arch)
			case strings.HasPrefix(kv.Key, old+"."):
				kv.Key = arch + strings.TrimPrefix(kv.Key, old)
			}
			if kv.Key != arch+".hidden_activation" {
				kvs = append(kvs, kv)
			}
		}
		if act.V != nil {
			kvs = append(kvs, gguf.KV{Key: arch + ".hidden_activation", Value: act})
		}
		return kvs
	})
}

// TestHiddenActivationOverride: the 2B-4T-shaped golden file (arch
// bitnet-b1.58, relu²) relabelled to arch bitnet with
// bitnet.hidden_activation = relu2 — what a mainline llama.cpp file of
// 2B-4T carries — gives exactly the original's logits on both golden
// prompts; without the key the bitnet default (SiLU) gives others; and
// "silu" on arch bitnet-b1.58 switches that arch to SiLU.
func TestHiddenActivationOverride(t *testing.T) {
	orig := filepath.Join(b158Dir, "gguf/tiny-b158-h512-f32.gguf")
	relu := relabel(t, orig, "bitnet", gguf.String("relu2"))
	plain := relabel(t, orig, "bitnet", gguf.Value{})
	silu := relabel(t, orig, "bitnet-b1.58", gguf.String("silu"))
	for _, prompt := range []string{"hello", "ids"} {
		ids, _ := goldenIDs(t, filepath.Join(b158Dir, "outputs", "tiny-b158-h512_f32_"+prompt+"_seq.txt"))
		logits := func(path string) [][]float32 {
			m := openModel(t, path, 2)
			p, g, _ := runSeq(t, m, ids, 4)
			return append(p, g...)
		}
		want, got := logits(orig), logits(relu)
		for r := range want {
			for i := range want[r] {
				if math.Float32bits(got[r][i]) != math.Float32bits(want[r][i]) {
					t.Fatalf("%s: arch bitnet + relu2, row %d id %d: %v, bitnet-b1.58 %v", prompt, r, i, got[r][i], want[r][i])
				}
			}
		}
		plainRows, siluRows := logits(plain), logits(silu)
		if d, _, _ := maxAbsDiff(plainRows, want); d < 1e-3 {
			t.Errorf("%s: arch bitnet without the key is within %g of relu², want SiLU's other logits", prompt, d)
		}
		if d, _, _ := maxAbsDiff(siluRows, plainRows); d != 0 {
			t.Errorf("%s: bitnet-b1.58 + silu differs from bitnet by %g, want the same SiLU logits", prompt, d)
		}
	}
}

// TestHiddenActivationBad: a value other than relu2/silu, or a key of
// another GGUF type, is one error naming the key.
func TestHiddenActivationBad(t *testing.T) {
	orig := filepath.Join(b158Dir, "gguf/tiny-b158-h512-f32.gguf")
	for _, c := range []struct {
		v    gguf.Value
		want string
	}{
		{gguf.String("gelu"), `key bitnet.hidden_activation: activation "gelu" is not supported (relu2 or silu)`},
		{gguf.String("ReLU2"), `key bitnet.hidden_activation: activation "ReLU2" is not supported`},
		{gguf.Uint32(2), "key bitnet.hidden_activation: a uint32, want the string relu2 or silu"},
	} {
		f, err := reader.Open(relabel(t, orig, "bitnet", c.v))
		if err != nil {
			t.Fatal(err)
		}
		_, err = LoadFile(f, Options{})
		f.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%v: error %v, want %q", c.v.V, err, c.want)
		}
		if errors.Is(err, ErrMissing) {
			t.Errorf("%v: error wraps ErrMissing", c.v.V)
		}
	}
}
