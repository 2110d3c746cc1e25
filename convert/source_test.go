package convert

import (
	"slices"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// TestTernaryView: TernaryView gives the same codes and scale as Ternary for
// every projection of the tiny golden checkpoint (master weights,
// ternarized), and Ternary's copy survives the next read while the view is
// the Source's reused buffer.
func TestTernaryView(t *testing.T) {
	src, err := OpenSource("../testdata/golden/tiny-bitnet/hf", Options{NoVocab: true, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var prev []int8
	var prevName string
	n := 0
	for _, pt := range src.Plan().Tensors {
		if pt.Class != tensormap.Projection {
			continue
		}
		n++
		copied, cs, err := src.Ternary(pt.GGUFName)
		if err != nil {
			t.Fatal(err)
		}
		view, vs, err := src.TernaryView(pt.GGUFName)
		if err != nil {
			t.Fatal(err)
		}
		if cs != vs || !slices.Equal(copied, view) {
			t.Fatalf("%s: TernaryView (scale %v) differs from Ternary (scale %v)", pt.GGUFName, vs, cs)
		}
		if prev != nil {
			again, _, _ := src.Ternary(prevName)
			if !slices.Equal(prev, again) {
				t.Fatalf("%s: the copy Ternary returned changed after the next read", prevName)
			}
		}
		prev, prevName = copied, pt.GGUFName
	}
	if n == 0 {
		t.Fatal("no projection in the tiny checkpoint")
	}
}
