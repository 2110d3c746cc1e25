package gpupack

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

const tinyHF = "../../../../testdata/golden/tiny-bitnet/hf"

// TestNonFiniteRefused: a NaN or ±Inf in a float tensor (norm, embedding)
// of a GGUF (F32 and F16) or of a checkpoint (BF16, copied as stored) is
// refused with one line naming the tensor and the first bad element, and
// nothing is written; gpu-pack once packed such values silently.
func TestNonFiniteRefused(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(tiny)
	if err != nil {
		t.Fatal(err)
	}
	off := func(name string) int {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		return int(f.DataOffset + ti.Offset)
	}
	normOff, embdOff := off("output_norm.weight"), off("token_embd.weight")
	f.Close()
	hfDir := filepath.Join(dir, "hf")
	if err := os.Mkdir(hfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"config.json", "tokenizer.model", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(tinyHF, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(hfDir, n), b, 0o644)
	}
	st, err := os.ReadFile(filepath.Join(tinyHF, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	hlen := binary.LittleEndian.Uint64(st)
	var hdr map[string]struct {
		Offsets [2]int `json:"data_offsets"`
	}
	if err := json.Unmarshal(st[8:8+hlen], &hdr); err != nil {
		t.Fatal(err)
	}
	st = bytes.Clone(st)
	binary.LittleEndian.PutUint16(st[8+int(hlen)+hdr["model.norm.weight"].Offsets[0]+2*3:], quantize.F32ToBF16(float32(math.NaN())))
	os.WriteFile(filepath.Join(hfDir, "model.safetensors"), st, 0o644)

	for _, c := range []struct {
		name string
		in   func() string
		want string
	}{
		{"gguf F32 norm NaN", func() string {
			b := bytes.Clone(orig)
			binary.LittleEndian.PutUint32(b[normOff+4*7:], math.Float32bits(float32(math.NaN())))
			p := filepath.Join(dir, "nan.gguf")
			os.WriteFile(p, b, 0o644)
			return p
		}, "tensor output_norm.weight: element 7 is NaN"},
		{"gguf F16 embedding -Inf", func() string {
			b := bytes.Clone(orig)
			binary.LittleEndian.PutUint16(b[embdOff+2*300:], 0xfc00)
			p := filepath.Join(dir, "inf.gguf")
			os.WriteFile(p, b, 0o644)
			return p
		}, "tensor token_embd.weight: element 300 is -Inf"},
		{"hf BF16 norm NaN", func() string { return hfDir }, "tensor model.norm.weight: element 3 is NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			var stdout, stderr bytes.Buffer
			err := Run(&Options{In: c.in(), Out: out, ScaleLayout: "main", AllowUnsupportedShape: true, Stdout: &stdout, Stderr: &stderr})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v; want one line containing %q", err, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused pack left %s", out)
			}
		})
	}
}
