package convert

import (
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TestCheckScaleRange: a per-tensor scale outside f16's range is refused
// for the outputs that store it as f16 (TQ1_0, TQ2_0, Q2_0, F16
// values) instead of being written as +Inf or 0, and accepted where the
// scale is f32 (I2_S, IQ2_BN, F32).
func TestCheckScaleRange(t *testing.T) {
	ft := func(typ gguf.Type) format.Format {
		f, ok := format.ForType(typ, format.LayoutX86, nil)
		if !ok {
			t.Fatalf("no format for %v", typ)
		}
		return f
	}
	for _, c := range []struct {
		typ    gguf.Type
		format bool
		scale  float32
		bad    bool
	}{
		{gguf.TypeTQ2_0, true, 1e6, true},
		{gguf.TypeTQ1_0, true, 1e-9, true},
		{gguf.TypeQ2_0, true, 7e4, true},
		{gguf.TypeIQ2BN, true, 1e6, false}, // an f32 row scale
		{gguf.TypeTQ2_0, true, 65504, false},
		{gguf.TypeTQ2_0, true, 0.0123, false},
		{gguf.TypeTQ2_0, true, 0, false},
		{gguf.TypeI2S, true, 1e6, false},
		{gguf.TypeF16, false, 1e6, true},
		{gguf.TypeF16, false, 3e-8, false}, // an f16 subnormal
		{gguf.TypeF32, false, 1e30, false},
	} {
		pt := &PlannedTensor{GGUFName: "blk.0.attn_q.weight", HFName: "model.layers.0.self_attn.q_proj.weight", Type: c.typ}
		if c.format {
			pt.Format = ft(c.typ)
		}
		err := checkScaleRange(pt, c.scale)
		if (err != nil) != c.bad {
			t.Errorf("%v scale %g: %v, want refused %v", c.typ, c.scale, err, c.bad)
		}
		if err != nil && (!strings.Contains(err.Error(), "blk.0.attn_q.weight") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%v: %v, want one line naming the tensor", c.typ, err)
		}
	}
}
