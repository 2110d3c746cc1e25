package gpupack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/presets"
	"github.com/bitnet-convert/bitnet-convert/torchpt"
)

// refTensor is one line of a testdata/gpu/reference-*.json file.
type refTensor struct {
	Name   string  `json:"name"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	SHA256 string  `json:"sha256"`
}

func heavy(t *testing.T) {
	t.Helper()
	if os.Getenv("BITNET_HEAVY") == "" {
		t.Skip("heavy: set BITNET_HEAVY=1")
	}
}

// hashFile lists every tensor of a checkpoint as the reference files do.
func hashFile(t *testing.T, path string) []refTensor {
	t.Helper()
	f, err := torchpt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []refTensor
	for _, ti := range f.Tensors {
		r, err := f.Section(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			t.Fatal(err)
		}
		out = append(out, refTensor{Name: ti.Name, DType: ti.DType.String(), Shape: ti.Shape, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return out
}

// compareReference packs dir and wants every tensor of both files equal to
// the reference run recorded in testdata/gpu/ref (names in order, dtype,
// shape, sha256 of the bytes).
func compareReference(t *testing.T, dir, ref string, opts Options) {
	t.Helper()
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]refTensor
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Pack(context.Background(), dir, out, opts); err != nil {
		t.Fatal(err)
	}
	for _, file := range slices.Sorted(maps.Keys(want)) {
		got := hashFile(t, filepath.Join(out, file))
		w := want[file]
		if len(got) != len(w) {
			t.Fatalf("%s: %d tensors, reference %d", file, len(got), len(w))
		}
		for i := range w {
			g := got[i]
			if g.Name != w[i].Name || g.DType != w[i].DType || !slices.Equal(g.Shape, w[i].Shape) || g.SHA256 != w[i].SHA256 {
				t.Errorf("%s tensor %d: %s %s %v %.12s, reference %s %s %v %.12s", file, i, g.Name, g.DType, g.Shape, g.SHA256, w[i].Name, w[i].DType, w[i].Shape, w[i].SHA256)
			}
		}
	}
}

// TestReferenceTiny (acceptance a, small shape): the dummy of
// testdata/gpu/tiny/config.json (seed 1) packed equals the upstream scripts'
// output of testdata/gpu/README.md tensor for tensor.
func TestReferenceTiny(t *testing.T) {
	data, err := os.ReadFile("../testdata/gpu/tiny/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	compareReference(t, dir, "../testdata/gpu/reference-tiny.json", Options{AllowUnsupportedShape: true})
}

// TestReference2B4T (acceptance a; heavy: a 935 MB dummy): the 2-layer
// 2B-4T-shaped dummy (preset BitNet-b1.58-2B-4T-bf16, --layers 2, seed 1)
// packed equals the upstream scripts' output.
func TestReference2B4T(t *testing.T) {
	heavy(t)
	dir := dummy2B4T(t)
	compareReference(t, dir, "../testdata/gpu/reference-2b4t-2layer.json", Options{})
}

func dummy2B4T(t *testing.T) string {
	t.Helper()
	m, err := presets.Get("BitNet-b1.58-2B-4T-bf16")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: m.Config, Layers: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}
