package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// rewriteKV copies the GGUF at path with the value of key replaced.
func rewriteKV(t *testing.T, path, key string, v gguf.Value) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	kvs := append([]gguf.KV(nil), f.KVs...)
	found := false
	for i := range kvs {
		if kvs[i].Key == key {
			kvs[i].Value, found = v, true
		}
	}
	if !found {
		t.Fatalf("%s has no %s", path, key)
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, kvs, f.Tensors, f.Alignment)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range w.Tensors() {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor(i, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Defect D23 (verify half): a key stored with another GGUF type than the
// converter writes was reported as "bitnet.block_count = 2, config.json
// gives 2", as if the values differed. The type mismatch is now named.
func TestVerifyMetadataTypeMismatch(t *testing.T) {
	bad := rewriteKV(t, "../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf", "bitnet.block_count", gguf.Uint64(2))
	rep, err := Run(Options{GGUF: bad, HF: goldenHF, Tokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "bitnet.block_count is stored as uint64, hf2gguf writes uint32 (value 2, config.json gives 2)"
	if len(rep.Metadata) != 1 || rep.Metadata[0] != want || rep.Pass {
		t.Errorf("metadata %q (pass %v), want [%q]", rep.Metadata, rep.Pass, want)
	}
}
