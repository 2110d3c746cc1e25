package gpupack

import (
	"slices"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

func bf(f float32) uint16 { return quantize.F32ToBF16(f) }

// TestQuantizeBF16Rounding checks the bf16 steps that differ from a float32
// ternarization: with mean 1 (s = 1), p = w exactly, so 0.5 and −0.5 round
// to 0 (half to even, not away from zero), 1.5 rounds to 2 and clamps to 1,
// and a negative weight that becomes 0 keeps its sign in the fp16 file.
func TestQuantizeBF16Rounding(t *testing.T) {
	// |w| sums to 8 over 8 values: mean 1, s 1, ws 1
	w := []float32{0.5, -0.5, 1.5, -1.5, 0.25, -0.25, 2, -1.5}
	in := make([]uint16, len(w))
	for i, v := range w {
		in[i] = bf(v)
	}
	tr, err := QuantizeBF16(in, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int8{0, 0, 1, -1, 0, 0, 1, -1}; !slices.Equal(tr.Codes, want) {
		t.Errorf("codes %v, want %v", tr.Codes, want)
	}
	if want := []bool{false, true, false, false, false, true, false, false}; !slices.Equal(tr.NegZero, want) {
		t.Errorf("negative zeros %v, want %v", tr.NegZero, want)
	}
	if tr.Scale != bf(1) {
		t.Errorf("scale %#04x, want bf16(1)", tr.Scale)
	}
	fp := tr.appendFP16(nil)
	if fp[2] != 0 || fp[3] != 0x80 || fp[4] != 0x80 || fp[5] != 0x3f {
		t.Errorf("fp16 bytes % x: want -0 (00 80) then +1 (80 3f)", fp[:6])
	}
}

// TestQuantizeBF16ProductRounding: worked by hand. w = [171/1024, 0.5, 0.5,
// 173/1024]: Σ|w| = 1.3359375, mean 0.333984375 (a bf16 value), s =
// bf16(1/mean) = bf16(2.99415…) = 3, ws = bf16(1/3) = 0.333984375. w0·s =
// 0.5009765625 is exact in float32 but rounds to bf16 0.5, which
// torch.round takes to 0 (a float32 product would give 1); w3·s =
// 0.5068359375 rounds to 0.5078125 → 1.
func TestQuantizeBF16ProductRounding(t *testing.T) {
	w := []float32{171.0 / 1024, 0.5, 0.5, 173.0 / 1024}
	in := make([]uint16, len(w))
	for i, v := range w {
		in[i] = bf(v)
		if quantize.BF16ToF32(in[i]) != v {
			t.Fatalf("%v is not a bf16 value", v)
		}
	}
	tr, err := QuantizeBF16(in, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int8{0, 1, 1, 1}; !slices.Equal(tr.Codes, want) {
		t.Errorf("codes %v, want %v", tr.Codes, want)
	}
	if tr.Scale != bf(0.333984375) || quantize.BF16ToF32(tr.Scale) != 0.333984375 {
		t.Errorf("scale %v, want 0.333984375", quantize.BF16ToF32(tr.Scale))
	}
}

func TestQuantizeBF16Errors(t *testing.T) {
	for _, v := range []uint16{0x7f80, 0xff80, 0x7fc0} {
		if _, err := QuantizeBF16([]uint16{bf(1), v}, 1, 2); err == nil {
			t.Errorf("%#04x accepted", v)
		}
	}
	// all zeros: the mean is floored at bf16(1e-5), every code 0
	tr, err := QuantizeBF16(make([]uint16, 4), 2, 2)
	if err != nil || slices.ContainsFunc(tr.Codes, func(c int8) bool { return c != 0 }) {
		t.Errorf("all-zero matrix: %v %v", tr, err)
	}
}

// TestPermuteRows: new row h·hd + 2d + l is old row h·hd + l·hd/2 + d.
func TestPermuteRows(t *testing.T) {
	rows, cols, heads := 8, 2, 2 // hd 4
	src := make([]int, rows*cols)
	for i := range src {
		src[i] = i / cols // value = old row
	}
	got, err := permuteRows(src, rows, cols, heads)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 2, 1, 3, 4, 6, 5, 7}
	for r, old := range want {
		if got[r*cols] != old || got[r*cols+1] != old {
			t.Errorf("row %d holds old row %d, want %d", r, got[r*cols], old)
		}
	}
	if _, err := permuteRows(src, rows, cols, 3); err == nil {
		t.Error("3 heads of 8 rows accepted")
	}
}

func TestScaleVector(t *testing.T) {
	got, err := LayoutPR316.scaleVector([]uint16{1, 2, 3}, []int{2560, 640, 640})
	if err != nil || !slices.Equal(got, []uint16{1, 1, 1, 1, 2, 3}) {
		t.Errorf("pr316 wqkv %v %v", got, err)
	}
	if _, err := LayoutPR316.scaleVector([]uint16{1, 2, 3}, []int{256, 128, 128}); err == nil {
		t.Error("pr316 with q:k:v 2:1:1 accepted")
	}
	got, _ = LayoutMain.scaleVector([]uint16{1, 2, 3}, []int{2560, 640, 640})
	if !slices.Equal(got, []uint16{1, 2, 3, 0}) {
		t.Errorf("main wqkv %v", got)
	}
	got, _ = LayoutPR316.scaleVector([]uint16{7}, []int{2560})
	if !slices.Equal(got, []uint16{7, 0, 0, 0, 0, 0}) {
		t.Errorf("pr316 wo %v", got)
	}
}
