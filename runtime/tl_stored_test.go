package runtime

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
)

// A TL1/TL2 file written by hf2gguf loads without --kernel-config (it
// carries its tiling under format.KernelConfigKey) and gives the I2_S file's
// logits bit for bit: both run the same ternary weights on the same kernel.
func TestStoredTLKernelsLoad(t *testing.T) {
	hfDir := "../testdata/golden/tiny-bitnet/hf"
	logits := map[convert.OutType][]float32{}
	// "i2_s-arm" and "i2_s-1x4": I2_S in the other layouts (recorded under
	// format.LayoutKey) is repacked on load and gives the same logits.
	layouts := map[convert.OutType]format.Layout{"i2_s-arm": format.LayoutARM, "i2_s-1x4": format.LayoutX86_1x4}
	for _, ot := range []convert.OutType{convert.OutI2S, convert.OutTL1, convert.OutTL2, "i2_s-arm", "i2_s-1x4"} {
		out := filepath.Join(t.TempDir(), "m.gguf")
		copts := convert.Options{OutType: ot, ModelName: "tiny"}
		if l, ok := layouts[ot]; ok {
			copts.OutType, copts.I2SLayout = convert.OutI2S, l
		}
		if _, err := convert.ConvertDir(context.Background(), hfDir, out, false, false, copts); err != nil {
			t.Fatal(err)
		}
		m, f, err := Open(out, Options{})
		if err != nil {
			t.Fatalf("%s: %v", ot, err)
		}
		s := m.NewSession(8)
		var last []float32
		for _, id := range []int32{1, 100, 200, 300} {
			if last, err = s.Eval(id); err != nil {
				t.Fatal(err)
			}
		}
		logits[ot] = append([]float32(nil), last...)
		f.Close()
	}
	for _, ot := range []convert.OutType{convert.OutTL1, convert.OutTL2, "i2_s-arm", "i2_s-1x4"} {
		for i, v := range logits[ot] {
			if math.Float32bits(v) != math.Float32bits(logits[convert.OutI2S][i]) {
				t.Fatalf("%s: logit %d is %v, I2_S %v", ot, i, v, logits[convert.OutI2S][i])
			}
		}
	}
}
