package format

import (
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TestTableRows checks every row of the type table against the Format it
// builds and the gguf type traits: one row per name and type, the format's
// type and f16 scale rounding agree with the row, the block size is known.
func TestTableRows(t *testing.T) {
	names, types := map[string]bool{}, map[gguf.Type]bool{}
	for _, s := range Specs() {
		if names[s.Name] || types[s.Type] {
			t.Errorf("%s: duplicate name or type %s", s.Name, s.Type)
		}
		names[s.Name], types[s.Type] = true, true
		f := s.New(LayoutX86, nil)
		if f.Type() != s.Type {
			t.Errorf("%s: Format type %s, row %s", s.Name, f.Type(), s.Type)
		}
		if e, b := s.Block(); e <= 0 || b <= 0 {
			t.Errorf("%s: block %d elements %d bytes", s.Name, e, b)
		}
		// 1 + 2⁻¹⁰ is exact in f16 and f32; 1 + 2⁻¹² only in f32.
		const v = 1 + 0x1p-12
		if got := f.StoredScale(v); (got != v) != s.Scale.F16() {
			t.Errorf("%s: StoredScale(%v) = %v, but the row says %s", s.Name, v, got, s.Scale)
		}
		if s.FtypeName == "" || s.FileType == 0 {
			t.Errorf("%s: file type %d %q", s.Name, s.FileType, s.FtypeName)
		}
		if got, ok := Lookup(s.Name); !ok || got.Type != s.Type {
			t.Errorf("Lookup(%q) = %v, %v", s.Name, got.Type, ok)
		}
		if got, ok := ForType(s.Type, LayoutX86, nil); !ok || got.Name() != f.Name() {
			t.Errorf("ForType(%s) = %v, %v", s.Type, got, ok)
		}
	}
	if ScaleTolerance(gguf.TypeTQ2_0) != 0x1p-11 || ScaleTolerance(gguf.TypeI2S) != 0 || ScaleTolerance(gguf.TypeBF16) != 0x1p-8 {
		t.Errorf("ScaleTolerance: TQ2_0 %g, I2_S %g, BF16 %g", ScaleTolerance(gguf.TypeTQ2_0), ScaleTolerance(gguf.TypeI2S), ScaleTolerance(gguf.TypeBF16))
	}
	if got, want := RuntimeList(), "bitnet.cpp (i2_s, tl1, tl2), mainline llama.cpp (tq1_0, tq2_0, q2_0) or ik_llama.cpp (iq1_bn, iq2_bn)"; got != want {
		t.Errorf("RuntimeList = %q, want %q", got, want)
	}
}
