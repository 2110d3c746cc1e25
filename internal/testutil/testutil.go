// Package testutil holds what the tests of several packages need alike:
// the paths of the bundled golden files, a GGUF copied with edited metadata,
// bf16 encoding and JSON (config.json) edits. Only tests import it; it
// imports the gguf reader and writer, so the tests of those two packages
// cannot.
package testutil

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Root returns the repository root: the nearest directory above the
// working directory (a test's package directory) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("testutil: no go.mod above the working directory")
		}
		dir = up
	}
}

// Golden returns the path of testdata/golden/ELEM… in the repository.
func Golden(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Root(t), "testdata", "golden"}, elem...)...)
}

// TinyHF is the bundled tiny BitNet checkpoint (testdata/golden/tiny-bitnet/hf).
func TinyHF(t testing.TB) string { return Golden(t, "tiny-bitnet", "hf") }

// TinyI2S is bitnet.cpp's I2_S file of the tiny checkpoint
// (testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf).
func TinyI2S(t testing.TB) string { return Golden(t, "tiny-bitnet", "gguf", "ggml-model-i2_s.gguf") }

// RewriteGGUF returns the bytes of the GGUF at src with its metadata passed
// through edit (which gets a copy) and each tensor's data through data
// (nil: unchanged; data gets a copy it may modify); tensor infos and the
// alignment are kept.
func RewriteGGUF(t testing.TB, src string, edit func([]gguf.KV) []gguf.KV, data func(name string, d []byte) []byte) []byte {
	t.Helper()
	f, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kvs := append([]gguf.KV(nil), f.KVs...)
	if edit != nil {
		kvs = edit(kvs)
	}
	infos := make([]gguf.TensorInfo, len(f.Tensors))
	for i, ti := range f.Tensors {
		infos[i] = gguf.TensorInfo{Name: ti.Name, Type: ti.Type, Ne: ti.Ne}
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, kvs, infos, f.Alignment)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range f.Tensors {
		d, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if data != nil {
			d = data(ti.Name, append([]byte(nil), d...))
		}
		if err := w.WriteTensor(i, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WithKVs writes RewriteGGUF(src, edit, nil) to dst, or to a new file in a
// test temp directory when dst is "", and returns its path.
func WithKVs(t testing.TB, src, dst string, edit func([]gguf.KV) []gguf.KV) string {
	t.Helper()
	b := RewriteGGUF(t, src, edit, nil)
	if dst == "" {
		dst = filepath.Join(t.TempDir(), filepath.Base(src))
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// SetKV returns an edit that sets key to v, appending it when absent.
func SetKV(key string, v gguf.Value) func([]gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV {
		for i := range kvs {
			if kvs[i].Key == key {
				kvs[i].Value = v
				return kvs
			}
		}
		return append(kvs, gguf.KV{Key: key, Value: v})
	}
}

// Set sets key to v in kvs (appending it when absent) and returns kvs.
func Set(kvs []gguf.KV, key string, v gguf.Value) []gguf.KV { return SetKV(key, v)(kvs) }

// Drop removes from kvs every key with one of the prefixes.
func Drop(kvs []gguf.KV, prefixes ...string) []gguf.KV {
	out := kvs[:0]
	for _, kv := range kvs {
		keep := true
		for _, p := range prefixes {
			if strings.HasPrefix(kv.Key, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// BF16Bytes encodes v as little-endian bf16, rounded to nearest even
// (quantize.F32ToBF16).
func BF16Bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint16(b[2*i:], quantize.F32ToBF16(f))
	}
	return b
}

// ReadJSON reads a JSON object (a config.json) from path.
func ReadJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// WriteJSON writes v to path as indented JSON.
func WriteJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// EditConfig rewrites dir/config.json through edit.
func EditConfig(t testing.TB, dir string, edit func(cfg map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	cfg := ReadJSON(t, p)
	edit(cfg)
	WriteJSON(t, p, cfg)
}

// CopyDir copies the regular files of src (not its subdirectories) into
// dst, which is created, and returns dst.
func CopyDir(t testing.TB, src, dst string) string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
