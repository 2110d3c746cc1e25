package hf_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

const goldenDir = "../testdata/golden/tiny-bitnet/hf"

// rawSafetensors builds a safetensors file from a literal JSON header (used
// as is, no padding) and a data section.
func rawSafetensors(header string, data []byte) []byte {
	out := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}

func writeFile(t *testing.T, path string, data []byte) { writeFileB(t, path, data) }

func writeFileB(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

const tinyConfig = `{"architectures":["BitnetForCausalLM"],"hidden_size":8}`

// f32Tensor is a WriteTensor of F32 values.
func f32Tensor(name string, shape []uint64, vals ...float32) hf.WriteTensor {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return hf.WriteTensor{Name: name, DType: hf.F32, Shape: shape, Data: hf.RawData(b)}
}

// writeShard writes a safetensors file with one F32 [1] tensor per name,
// valued v.
func writeShard(t *testing.T, path string, v float32, names ...string) {
	t.Helper()
	var ts []hf.WriteTensor
	for _, n := range names {
		ts = append(ts, f32Tensor(n, []uint64{1}, v))
	}
	if err := hf.WriteSafetensors(path, ts, nil); err != nil {
		t.Fatal(err)
	}
}

func writeIndex(t *testing.T, dir string, wm map[string]string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(`{"metadata":{"total_size":0},"weight_map":{`)
	first := true
	for k, v := range wm {
		if !first {
			sb.WriteByte(',')
		}
		first = false
		sb.WriteString(`"` + k + `":"` + v + `"`)
	}
	sb.WriteString(`}}`)
	writeFile(t, filepath.Join(dir, hf.IndexFile), []byte(sb.String()))
}

func names(c *hf.Checkpoint) []string {
	var out []string
	for _, r := range c.Tensors {
		out = append(out, r.Name)
	}
	return out
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q is not one line", err)
	}
}

// snapshot records names, sizes and mtimes of every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			out[p] = fmt.Sprint(fi.ModTime(), fi.Mode(), fi.Size())
		}
		return nil
	})
	return out
}
