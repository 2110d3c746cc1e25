package gguf2hf_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// TestNonFiniteRefused: a NaN or ±Inf in a float tensor of the GGUF (an
// F32 norm, the F16 embedding, either export dtype) is refused with one
// line naming the tensor and the first bad element, exit 1, and no output
// directory is left; gguf2hf once exported such values silently.
func TestNonFiniteRefused(t *testing.T) {
	dir := t.TempDir()
	gg := filepath.Join(dir, "m.gguf")
	mustRun(t, "hf2gguf", tinyHF, "--outtype", "i2_s", "--outfile", gg)
	orig, err := os.ReadFile(gg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(gg)
	if err != nil {
		t.Fatal(err)
	}
	off := map[string]int{}
	for _, n := range []string{"output_norm.weight", "token_embd.weight"} {
		ti, ok := f.Tensor(n)
		if !ok {
			t.Fatalf("no tensor %s", n)
		}
		off[n] = int(f.DataOffset + ti.Offset)
		if want := map[string]string{"output_norm.weight": "F32", "token_embd.weight": "F16"}[n]; ti.Type.String() != want {
			t.Fatalf("%s is %s, the test pokes %s", n, ti.Type, want)
		}
	}
	f.Close()
	for _, c := range []struct {
		name, dtype string
		poke        func(b []byte)
		want        string
	}{
		{"F32 norm NaN", "bf16", func(b []byte) {
			binary.LittleEndian.PutUint32(b[off["output_norm.weight"]+4*9:], math.Float32bits(float32(math.NaN())))
		}, "tensor output_norm.weight: element 9 is NaN"},
		{"F32 norm +Inf to f32", "f32", func(b []byte) {
			binary.LittleEndian.PutUint32(b[off["output_norm.weight"]+4*2:], math.Float32bits(float32(math.Inf(1))))
		}, "tensor output_norm.weight: element 2 is +Inf"},
		{"F16 embedding -Inf", "bf16", func(b []byte) {
			binary.LittleEndian.PutUint16(b[off["token_embd.weight"]+2*1000:], 0xfc00)
		}, "tensor token_embd.weight: element 1000 is -Inf"},
		{"F16 embedding NaN to f32", "f32", func(b []byte) {
			binary.LittleEndian.PutUint16(b[off["token_embd.weight"]+2*77:], 0x7e00)
		}, "tensor token_embd.weight: element 77 is NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(orig)
			c.poke(b)
			p := filepath.Join(dir, "bad.gguf")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			code, _, errs := runMain("gguf2hf", p, "--out", out, "--dtype", c.dtype)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, %q; want exit 1 and one line containing %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused export left %s", out)
			}
		})
	}
}
