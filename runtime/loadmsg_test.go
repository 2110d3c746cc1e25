package runtime

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
)

// TestLoadHyperParamMessages: bad hyper-parameter keys give one-line errors
// naming the key(s) and the real cause.
func TestLoadHyperParamMessages(t *testing.T) {
	tests := []struct {
		name string
		kvs  map[string]gguf.Value
		want []string
	}{
		{"block_count 2^32-1", map[string]gguf.Value{"bitnet.block_count": gguf.Uint32(4294967295)},
			[]string{"bitnet.block_count", "4294967295", "out of range"}},
		{"context_length 2^32-1", map[string]gguf.Value{"bitnet.context_length": gguf.Uint32(4294967295)},
			[]string{"bitnet.context_length", "4294967295", "out of range"}},
		{"embedding_length u64 max", map[string]gguf.Value{"bitnet.embedding_length": gguf.Uint64(1<<64 - 1)},
			[]string{"bitnet.embedding_length", "18446744073709551615", "out of range"}},
		{"block_count string", map[string]gguf.Value{"bitnet.block_count": gguf.String("2")},
			[]string{"bitnet.block_count", "non-negative integer"}},
		{"head_count 2^31", map[string]gguf.Value{"bitnet.attention.head_count": gguf.Uint32(1 << 31), "bitnet.attention.head_count_kv": gguf.Uint32(1)},
			map[bool][]string{ // 2^31 is beyond int on 32-bit builds
				false: {"bitnet.embedding_length 16", "bitnet.attention.head_count 2147483648", "head dimension 0"},
				true:  {"key bitnet.attention.head_count: value 2147483648 is out of range (at most 2147483647)"},
			}[strconv.IntSize == 32]},
		{"odd head dim", map[string]gguf.Value{"bitnet.embedding_length": gguf.Uint32(6), "bitnet.attention.head_count": gguf.Uint32(2), "bitnet.attention.head_count_kv": gguf.Uint32(1)},
			[]string{"bitnet.embedding_length 6", "bitnet.attention.head_count 2", "head dimension 3"}},
		{"key_length odd", map[string]gguf.Value{"bitnet.attention.key_length": gguf.Uint32(3)},
			[]string{"bitnet.attention.key_length 3"}},
		// value_length given without key_length: the head dimension comes
		// from embedding_length / head_count, so the message must not name
		// a key_length the file does not have.
		{"value_length without key_length", map[string]gguf.Value{"bitnet.attention.value_length": gguf.Uint32(4)},
			[]string{"bitnet.attention.value_length 4 differs from the head dimension 8 (no attention.key_length: embedding_length / head_count)"}},
		// heads × head dimension = 2^32: beyond int on 32-bit builds
		// (scripts/cross.sh runs this test for linux/386 and linux/arm);
		// on 64-bit builds the product fits and the q tensor's shape is
		// what is wrong.
		{"heads × head dim 2^32", map[string]gguf.Value{"bitnet.attention.head_count": gguf.Uint32(1 << 16), "bitnet.attention.head_count_kv": gguf.Uint32(1 << 16),
			"bitnet.attention.key_length": gguf.Uint32(1 << 16), "bitnet.attention.value_length": gguf.Uint32(1 << 16), "bitnet.rope.dimension_count": gguf.Uint32(1 << 16)},
			map[bool][]string{
				true:  {"keys bitnet.attention.head_count × attention.key_length (head dimension): 65536 × 65536 = 4294967296 does not fit in this 32-bit build (largest 2147483647); use a 64-bit build"},
				false: {"tensor blk.0.attn_q.weight", "want [16, 4294967296]"},
			}[strconv.IntSize == 32]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fuzzFile(1, 16, 2, 1, 32, 20, 13, 13)
			kvs := append([]gguf.KV(nil), f.KVs...)
			for k, v := range tc.kvs {
				found := false
				for i := range kvs {
					if kvs[i].Key == k {
						kvs[i].Value, found = v, true
					}
				}
				if !found {
					kvs = append(kvs, gguf.KV{Key: k, Value: v})
				}
			}
			f.KVs = kvs
			_, err := Load(f, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

// TestNewSessionClamps: a request beyond the model's context length gets a
// session of context_length positions (not an allocation sized from the
// request), and Eval past it says the context is full.
func TestNewSessionClamps(t *testing.T) {
	m, err := Load(fuzzFile(1, 16, 2, 1, 32, 20, 13, 13), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(math.MaxInt)
	if s.nCtx != m.Params.NCtx || len(s.kCache[0]) != m.Params.NCtx*m.Params.NHeadKV*m.Params.HeadDim {
		t.Fatalf("nCtx %d, K cache %d values; want %d positions", s.nCtx, len(s.kCache[0]), m.Params.NCtx)
	}
	for i := 0; i < m.Params.NCtx; i++ {
		if _, err := s.Eval(1); err != nil {
			t.Fatalf("position %d: %v", i, err)
		}
	}
	if _, err := s.Eval(1); err == nil || !strings.Contains(err.Error(), "context full") {
		t.Fatalf("Eval past the context: %v", err)
	}
	// A GGUF claiming a huge context still gets a session within the KV
	// cache bound (sessionPositions is what NewSession allocates from).
	p := m.Params
	p.NCtx = math.MaxInt
	n := sessionPositions(p, 0)
	if bytes := 4 * int64(n) * int64(p.NHeadKV) * int64(p.HeadDim) * int64(p.NLayer); bytes > MaxKVCacheBytes || n < 1 {
		t.Fatalf("%d positions: K+V cache %d bytes > MaxKVCacheBytes", n, bytes)
	}
	if n := sessionPositions(p, 10); n != 10 {
		t.Fatalf("sessionPositions(10) = %d", n)
	}
}

// TestLoadEmbeddingHyperParamMessages: LoadEmbedding names the key and the
// value of an out-of-range hyper-parameter, and the keys behind a zero head
// dimension.
func TestLoadEmbeddingHyperParamMessages(t *testing.T) {
	base := embedGGUF(t, embedfixture.Qwen3, convert.OutF32)
	tests := []struct {
		name string
		kvs  map[string]*gguf.Value
		want []string
	}{
		{"context_length 2^32-1", map[string]*gguf.Value{"qwen3.context_length": val(gguf.Uint32(4294967295))},
			[]string{"qwen3.context_length", "4294967295", "out of range"}},
		{"head_count 2^31", map[string]*gguf.Value{"qwen3.attention.head_count": val(gguf.Uint32(1 << 31)), "qwen3.attention.head_count_kv": val(gguf.Uint32(1 << 31)),
			"qwen3.attention.key_length": nil, "qwen3.rope.dimension_count": nil, "qwen3.attention.value_length": nil},
			[]string{"head dimension 0", "embedding_length", "attention.head_count 2147483648"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadEmbedding(withKVs(base, tc.kvs), Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
