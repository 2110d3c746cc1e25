package testutil

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// TestWithKVs: a copy with one key set and a prefix dropped keeps every
// tensor byte for byte; bf16 encoding rounds to nearest even.
func TestWithKVs(t *testing.T) {
	src := TinyI2S(t)
	out := WithKVs(t, src, "", func(kvs []gguf.KV) []gguf.KV {
		return Drop(Set(kvs, "general.name", gguf.String("edited")), "tokenizer.ggml.merges", "general.license")
	})
	a, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if name, _ := b.String("general.name"); name != "edited" || filepath.Dir(out) == filepath.Dir(src) {
		t.Errorf("general.name %q in %s", name, out)
	}
	if len(a.Tensors) != len(b.Tensors) {
		t.Fatalf("%d tensors, want %d", len(b.Tensors), len(a.Tensors))
	}
	for _, ti := range a.Tensors {
		da, _ := a.TensorData(ti.Name)
		db, err := b.TensorData(ti.Name)
		if err != nil || !bytes.Equal(da, db) {
			t.Errorf("%s: data differs (%v)", ti.Name, err)
		}
	}
	if got := BF16Bytes([]float32{1, 1.00390625, -2}); !bytes.Equal(got, []byte{0x80, 0x3f, 0x80, 0x3f, 0x00, 0xc0}) {
		t.Errorf("BF16Bytes: % x", got)
	}
}
