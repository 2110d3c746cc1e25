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

// G128FromQ2_0 writes to dst PrismML's legacy g128 Q2_0 (34 bytes per 128
// weights under id 42, gguf.TypeQ2_0G128) made from the mainline Q2_0 GGUF
// at src: each pair of 18-byte blocks of a row becomes one 34-byte block
// (the first half's d, or the second's when the first half is all zero
// and has d = 0, then the 16 + 16 code bytes), every other tensor and
// every KV kept. Our writer refuses to write id 42 as g128, so each tensor
// goes through it as I8 with ne[0] = its bytes per row (the offsets are the
// aligned sums of the data sizes, as any writer lays them out) and its
// tensor info is then patched to the real ne[0] and type id. The bytes
// depend on src alone. It returns dst.
func G128FromQ2_0(t testing.TB, src, dst string) string {
	t.Helper()
	f, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	infos := make([]gguf.TensorInfo, len(f.Tensors))
	datas := make([][]byte, len(f.Tensors))
	ids := make([]uint32, len(f.Tensors))
	for i, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ti.Type.ID()
		if ti.Type == gguf.TypeQ2_0 {
			out := make([]byte, 0, len(data)/36*34)
			for b := 0; b+36 <= len(data); b += 36 {
				lo, hi := data[b:b+18], data[b+18:b+36]
				d := lo[:2]
				if binary.LittleEndian.Uint16(d) == 0 {
					d = hi[:2]
				}
				out = append(append(append(out, d...), lo[2:]...), hi[2:]...)
			}
			data = out
		}
		datas[i] = data
		rows := uint64(1)
		for _, d := range ti.Ne[1:] {
			rows *= d
		}
		ne := append([]uint64{uint64(len(data)) / rows}, ti.Ne[1:]...)
		infos[i] = gguf.TensorInfo{Name: ti.Name, Ne: ne, Type: gguf.TypeI8}
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, f.KVs, infos, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range infos {
		if err := w.WriteTensor(i, datas[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	for i, ti := range f.Tensors {
		key := binary.LittleEndian.AppendUint64(nil, uint64(len(ti.Name)))
		key = append(key, ti.Name...)
		at := bytes.Index(out[:w.HeaderSize()], key)
		if at < 0 {
			t.Fatalf("tensor info %s not found", ti.Name)
		}
		p := at + len(key) + 4 // n_dims
		binary.LittleEndian.PutUint64(out[p:], ti.Ne[0])
		binary.LittleEndian.PutUint32(out[p+8*len(ti.Ne):], ids[i])
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
