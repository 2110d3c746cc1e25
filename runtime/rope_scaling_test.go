package runtime

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// withRopeKVs writes a copy of the GGUF at path whose {arch}.rope.scaling.*
// and rope.scale_linear keys are replaced by set (none when set is empty).
func withRopeKVs(t *testing.T, path string, set map[string]gguf.Value) string {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	arch := f.Arch()
	var kvs []gguf.KV
	for _, kv := range f.KVs {
		if !strings.HasPrefix(kv.Key, arch+".rope.scal") {
			kvs = append(kvs, kv)
		}
	}
	for _, suffix := range []string{".rope.scaling.type", ".rope.scaling.factor", ".rope.scale_linear"} {
		if v, ok := set[suffix]; ok {
			kvs = append(kvs, gguf.KV{Key: arch + suffix, Value: v})
		}
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
	out := filepath.Join(t.TempDir(), "rope.gguf")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// ropeLogits runs ids through the model at path, one batch.
func ropeLogits(t *testing.T, path string, ids []int32) [][]float32 {
	t.Helper()
	m := openModel(t, path, 1)
	rows, err := m.NewSession(len(ids)+1).EvalBatch(ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(rows))
	for i, r := range rows {
		out[i] = append([]float32(nil), r...)
	}
	return out
}

func sameBits(a, b [][]float32) bool {
	for p := range a {
		for i := range a[p] {
			if math.Float32bits(a[p][i]) != math.Float32bits(b[p][i]) {
				return false
			}
		}
	}
	return len(a) == len(b)
}

// TestRopeScalingLinear (defect H4, issue 20 c): linear rope scaling is
// applied as llama.cpp does (freq_scale = 1/factor on every angle): a
// factor of 1 — bitnet.cpp's converter always writes it — and "none" give
// the unscaled file's logits bit for bit, the older rope.scale_linear key
// scales like rope.scaling.factor, and a factor of 4 gives other logits at
// every position after the first (position 0 has angle 0 whatever the
// factor). verify's float-reference test of the same scaling is
// verify.TestVerifyRopeScaling.
func TestRopeScalingLinear(t *testing.T) {
	src := filepath.Join(tinyDir, "gguf", "ggml-model-i2_s.gguf")
	ids := []int32{1, 100, 200, 300, 400, 7, 8}
	plain := ropeLogits(t, withRopeKVs(t, src, nil), ids)
	for name, set := range map[string]map[string]gguf.Value{
		"linear 1": {".rope.scaling.type": gguf.String("linear"), ".rope.scaling.factor": gguf.Float32(1)},
		"factor 1": {".rope.scaling.factor": gguf.Float32(1)},
		"none 4":   {".rope.scaling.type": gguf.String("none"), ".rope.scaling.factor": gguf.Float32(4)},
	} {
		if got := ropeLogits(t, withRopeKVs(t, src, set), ids); !sameBits(got, plain) {
			t.Errorf("%s: logits differ from the unscaled file's", name)
		}
	}
	four := ropeLogits(t, withRopeKVs(t, src, map[string]gguf.Value{".rope.scaling.type": gguf.String("linear"), ".rope.scaling.factor": gguf.Float32(4)}), ids)
	if !sameBits(four[:1], plain[:1]) {
		t.Error("factor 4: position 0 (angle 0) changed")
	}
	for p := 1; p < len(ids); p++ {
		if sameBits(four[p:p+1], plain[p:p+1]) {
			t.Errorf("factor 4: position %d has the unscaled logits", p)
		}
	}
	legacy := ropeLogits(t, withRopeKVs(t, src, map[string]gguf.Value{".rope.scale_linear": gguf.Float32(4)}), ids)
	if !sameBits(legacy, four) {
		t.Error("rope.scale_linear 4 differs from rope.scaling.factor 4")
	}
}

// TestRopeScalingRefused: a scaling type the runtime does not implement
// and a factor that is not a positive finite number are refused on load,
// naming the key.
func TestRopeScalingRefused(t *testing.T) {
	src := filepath.Join(tinyDir, "gguf", "ggml-model-i2_s.gguf")
	for _, c := range []struct {
		set  map[string]gguf.Value
		want string
	}{
		{map[string]gguf.Value{".rope.scaling.type": gguf.String("yarn"), ".rope.scaling.factor": gguf.Float32(4)}, `key bitnet.rope.scaling.type: rope scaling "yarn" is not supported`},
		{map[string]gguf.Value{".rope.scaling.type": gguf.Uint32(1)}, "key bitnet.rope.scaling.type: a uint32"},
		{map[string]gguf.Value{".rope.scaling.factor": gguf.Float32(0)}, "key bitnet.rope.scaling.factor: factor 0 must be positive"},
		{map[string]gguf.Value{".rope.scaling.factor": gguf.Float32(-2)}, "key bitnet.rope.scaling.factor: factor -2 must be positive"},
		{map[string]gguf.Value{".rope.scaling.factor": gguf.Float32(float32(math.NaN()))}, "key bitnet.rope.scaling.factor: value NaN is not finite"},
		{map[string]gguf.Value{".rope.scale_linear": gguf.Float32(0)}, "key bitnet.rope.scale_linear: factor 0 must be positive"},
	} {
		p := withRopeKVs(t, src, c.set)
		f, err := reader.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = LoadFile(f, Options{})
		f.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.set, err, c.want)
		}
	}
}
