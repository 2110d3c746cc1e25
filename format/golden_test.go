package format_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const (
	tinyGGUF  = "../testdata/golden/tiny-bitnet/gguf"
	h512GGUF  = "../testdata/golden/b158-h512/gguf"
	ecoGolden = "../testdata/golden/ecosystems"
)

func open(t *testing.T, path string) *reader.File {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func data(t *testing.T, f *reader.File, name string) []byte {
	t.Helper()
	d, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ternaryFromF32 reads a projection of a golden F32 file (values t·s, as
// bitnet.cpp's converter writes them) as codes and the per-tensor scale
// max|w|, what every ggml quantizer sees.
func ternaryFromF32(t *testing.T, raw []byte) ([]int8, float32) {
	t.Helper()
	codes := make([]int8, len(raw)/4)
	var s float32
	for i := range codes {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		switch {
		case v > 0:
			codes[i] = 1
		case v < 0:
			codes[i] = -1
		}
		if a := float32(math.Abs(float64(v))); a != 0 {
			if s != 0 && a != s {
				t.Fatalf("element %d: |w| %v differs from the tensor's %v: not ternary", i, a, s)
			}
			s = a
		}
	}
	return codes, s
}

func encode(t *testing.T, f format.Format, codes []int8, scale float32, k, m int) []byte {
	t.Helper()
	sc, err := format.Regroup(codes, []float32{scale}, 0, f.ScaleGroup(k))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := f.Bytes(k, m)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, nb)
	if err := f.Encode(out, codes, sc, k, m); err != nil {
		t.Fatal(err)
	}
	return out
}

func projections(f *reader.File, typ gguf.Type) []gguf.TensorInfo {
	var out []gguf.TensorInfo
	for _, ti := range f.Tensors {
		if ti.Type == typ {
			out = append(out, ti)
		}
	}
	return out
}

// TestGoldenTQ is acceptance a for TQ1_0/TQ2_0: from the golden F32 file,
// every projection equals what bitnet.cpp's llama-quantize wrote (build A,
// quantize_row_tq{1,2}_0_ref), byte for byte.
func TestGoldenTQ(t *testing.T) {
	src := open(t, filepath.Join(tinyGGUF, "ggml-model-f32.gguf"))
	for _, c := range []struct {
		file string
		f    format.Format
	}{{"tiny-bitnet-tq2_0.gguf", format.TQ2_0{}}, {"tiny-bitnet-tq1_0.gguf", format.TQ1_0{}}} {
		gold := open(t, filepath.Join(ecoGolden, c.file))
		ps := projections(gold, c.f.Type())
		if len(ps) != 14 {
			t.Fatalf("%s: %d %s tensors, want 14", c.file, len(ps), c.f.Name())
		}
		for _, ti := range ps {
			k, m := int(ti.Ne[0]), int(ti.Ne[1])
			codes, s := ternaryFromF32(t, data(t, src, ti.Name))
			got := encode(t, c.f, codes, s, k, m)
			if want := data(t, gold, ti.Name); !bytes.Equal(got, want) {
				t.Errorf("%s %s: bytes differ from llama-quantize's at %d", c.file, ti.Name, firstDiff(got, want))
			}
			back := make([]int8, k*m)
			if _, err := c.f.Decode(back, data(t, gold, ti.Name), k, m); err != nil {
				t.Fatal(err)
			}
			if !equalCodes(back, codes) {
				t.Errorf("%s %s: decoded codes differ", c.file, ti.Name)
			}
		}
	}
}

// TestGoldenI2SLayouts is acceptance a for the ARM and 1×4 I2_S layouts: the
// golden x86 I2_S tensors re-encoded equal BitNet 16da220's quantize_i2_s
// built for aarch64 (QK 64) and for x86 without ACT_PARALLEL (1×4), codes,
// scale and the zero pad.
func TestGoldenI2SLayouts(t *testing.T) {
	src := open(t, filepath.Join(tinyGGUF, "ggml-model-i2_s.gguf"))
	for _, c := range []struct {
		file   string
		layout format.Layout
	}{{"tiny-bitnet-i2_s-arm.gguf", format.LayoutARM}, {"tiny-bitnet-i2_s-x86-1x4-16da220.gguf", format.LayoutX86_1x4}} {
		gold := open(t, filepath.Join(ecoGolden, c.file))
		ps := projections(gold, gguf.TypeI2S)
		if len(ps) != 14 {
			t.Fatalf("%s: %d I2_S tensors", c.file, len(ps))
		}
		for _, ti := range ps {
			k, m := int(ti.Ne[0]), int(ti.Ne[1])
			codes := make([]int8, k*m)
			sc, err := format.I2S{}.Decode(codes, data(t, src, ti.Name), k, m)
			if err != nil {
				t.Fatal(err)
			}
			f := format.I2S{Layout: c.layout}
			got := encode(t, f, codes, sc[0], k, m)
			if want := data(t, gold, ti.Name); !bytes.Equal(got, want) {
				t.Errorf("%s %s: bytes differ from quantize_i2_s at %d", c.file, ti.Name, firstDiff(got, want))
			}
			back := make([]int8, k*m)
			bs, err := f.Decode(back, data(t, gold, ti.Name), k, m)
			if err != nil || bs[0] != sc[0] || !equalCodes(back, codes) {
				t.Errorf("%s %s: decode gives other codes or scale %v (want %v), %v", c.file, ti.Name, bs, sc, err)
			}
		}
	}
}

// TestGoldenIQBN is acceptance a for IQ2_BN/IQ1_BN: from the b158-h512 F32
// file, every projection equals ik_llama.cpp 8337e4cd's llama-quantize output
// over the whole row span (row scales included).
func TestGoldenIQBN(t *testing.T) {
	src := open(t, filepath.Join(h512GGUF, "tiny-b158-h512-f32.gguf"))
	for _, c := range []struct {
		file string
		f    format.Format
	}{{"tiny-b158-h512-iq2_bn.gguf", format.IQ2BN{}}, {"tiny-b158-h512-iq1_bn.gguf", format.IQ1BN{}}} {
		gold := open(t, filepath.Join(ecoGolden, c.file))
		ps := projections(gold, c.f.Type())
		if len(ps) != 14 {
			t.Fatalf("%s: %d %s tensors", c.file, len(ps), c.f.Name())
		}
		for _, ti := range ps {
			k, m := int(ti.Ne[0]), int(ti.Ne[1])
			codes, s := ternaryFromF32(t, data(t, src, ti.Name))
			got := encode(t, c.f, codes, s, k, m)
			want := data(t, gold, ti.Name)
			if len(want) != len(got) || !strings.Contains(ti.Name, "blk.") {
				t.Fatalf("%s %s: %d bytes, golden %d", c.file, ti.Name, len(got), len(want))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s: bytes differ from ik_llama.cpp's at %d", c.file, ti.Name, firstDiff(got, want))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func equalCodes(a, b []int8) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
