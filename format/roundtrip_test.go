package format_test

import (
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// chain is the round trip of acceptance b.
var chain = []format.Format{
	format.TQ2_0{}, format.IQ2BN{}, format.TQ1_0{},
	format.I2S{Layout: format.LayoutARM}, format.I2S{Layout: format.LayoutX86_1x4}, format.I2S{},
}

// TestRoundTrip is acceptance b: I2_S(x86) → TQ2_0 → IQ2_BN → TQ1_0 →
// I2_S(arm) → I2_S(x86-1x4) → I2_S(x86) keeps every ternary code of every
// golden model, and the final scale is the I2_S scale rounded once to f16
// (the only rounding on the way: TQ and IQ1_BN store f16, IQ2_BN f32). The
// I2_S start of the tiny model is bitnet.cpp's own file; b158-h512 starts
// from its F32 file's codes and scale.
func TestRoundTrip(t *testing.T) {
	type tensor struct {
		name  string
		codes []int8
		scale float32
		k, m  int
	}
	var models = map[string][]tensor{}
	i2s := open(t, filepath.Join(tinyGGUF, "ggml-model-i2_s.gguf"))
	for _, ti := range projections(i2s, gguf.TypeI2S) {
		k, m := int(ti.Ne[0]), int(ti.Ne[1])
		codes := make([]int8, k*m)
		sc, err := format.I2S{}.Decode(codes, data(t, i2s, ti.Name), k, m)
		if err != nil {
			t.Fatal(err)
		}
		models["tiny-bitnet"] = append(models["tiny-bitnet"], tensor{ti.Name, codes, sc[0], k, m})
	}
	h := open(t, filepath.Join(h512GGUF, "tiny-b158-h512-f32.gguf"))
	for _, ti := range h.Tensors {
		if len(ti.Ne) != 2 || ti.Name == "token_embd.weight" {
			continue
		}
		codes, s := ternaryFromF32(t, data(t, h, ti.Name))
		models["b158-h512"] = append(models["b158-h512"], tensor{ti.Name, codes, s, int(ti.Ne[0]), int(ti.Ne[1])})
	}
	for model, ts := range models {
		if len(ts) != 14 {
			t.Fatalf("%s: %d projections", model, len(ts))
		}
		for _, tt := range ts {
			cur := encode(t, format.I2S{}, tt.codes, tt.scale, tt.k, tt.m)
			prev := format.Format(format.I2S{})
			for _, f := range chain {
				codes := make([]int8, tt.k*tt.m)
				sc, err := prev.Decode(codes, cur, tt.k, tt.m)
				if err != nil {
					t.Fatalf("%s %s: decode %s: %v", model, tt.name, prev.Name(), err)
				}
				if !equalCodes(codes, tt.codes) {
					t.Fatalf("%s %s: codes changed after %s", model, tt.name, prev.Name())
				}
				to, err := format.Regroup(codes, sc, prev.ScaleGroup(tt.k), f.ScaleGroup(tt.k))
				if err != nil {
					t.Fatalf("%s %s: %s → %s: %v", model, tt.name, prev.Name(), f.Name(), err)
				}
				nb, _ := f.Bytes(tt.k, tt.m)
				cur = make([]byte, nb)
				if err := f.Encode(cur, codes, to, tt.k, tt.m); err != nil {
					t.Fatal(err)
				}
				prev = f
			}
			codes := make([]int8, tt.k*tt.m)
			sc, err := prev.Decode(codes, cur, tt.k, tt.m)
			if err != nil || !equalCodes(codes, tt.codes) {
				t.Fatalf("%s %s: final codes differ (%v)", model, tt.name, err)
			}
			if want := quantize.F16ToF32(quantize.F32ToF16(tt.scale)); sc[0] != want {
				t.Errorf("%s %s: final scale %v, want f16(%v) = %v", model, tt.name, sc[0], tt.scale, want)
			}
		}
	}
}
