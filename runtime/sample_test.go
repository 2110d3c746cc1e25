package runtime

import (
	"math"
	"testing"
)

func TestArgmaxTies(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		in   []float32
		want int32
	}{
		{[]float32{1, 3, 3, 2}, 1},
		{[]float32{nan, -1, -1}, 1},
		{[]float32{}, -1},
		{[]float32{nan}, -1},
		{[]float32{float32(math.Inf(-1)), -5}, 1},
	} {
		if got := Argmax(c.in); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestSample: temp 0 is Argmax; with temp 1 the draw u maps through the
// cumulative softmax in id order (logits ln 1, ln 2, ln 1 → p = ¼, ½, ¼).
func TestSample(t *testing.T) {
	l := []float32{0, float32(math.Ln2), 0}
	if got := Sample(l, 0, 0.99); got != 1 {
		t.Fatalf("temp 0: %d, want 1", got)
	}
	for _, c := range []struct {
		u    float64
		want int32
	}{{0, 0}, {0.24, 0}, {0.26, 1}, {0.74, 1}, {0.76, 2}, {0.999, 2}} {
		if got := Sample(l, 1, c.u); got != c.want {
			t.Errorf("u=%v: %d, want %d", c.u, got, c.want)
		}
	}
	// A very low temperature concentrates on the maximum.
	if got := Sample(l, 1e-3, 0.9); got != 1 {
		t.Errorf("temp 1e-3: %d, want 1", got)
	}
}
