package quantize_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// ulpAllowed names the golden tensors whose I2_S scale may differ from the
// reference by one ulp under DefaultSumOrder. With torch's AVX2 cascade
// order (8 lanes, 4 ILP accumulators, one thread) all 14 scales of the tiny
// golden model are bit-exact, so the table is empty; a tensor appearing here
// later is a visible regression.
var ulpAllowed = map[string]bool{}

// TestTernarizeGolden checks Ternarize + PackI2S against bitnet.cpp's
// pipeline output (convert-hf-to-gguf-bitnet.py --outtype f32, then
// llama-quantize I2_S 1) for all 14 projections of the tiny golden model:
// the packed codes must equal the golden n/4 bytes exactly, the scale bits
// must match (or be within 1 ulp for tensors named in ulpAllowed), and the
// dequantized t·scale must equal the golden F32 GGUF values exactly.
func TestTernarizeGolden(t *testing.T) {
	ck, err := hf.Open(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	gi := readGoldenGGUF(t, goldenI2S, goldenI2SList)
	gf := readGoldenGGUF(t, goldenF32, goldenF32List)
	exact := 0
	for _, p := range projections {
		t.Run(p[1], func(t *testing.T) {
			x := readMaster(t, ck, p[0])
			n := len(x)
			codes := make([]int8, n)
			scale, m := quantize.Ternarize(codes, x)
			if m < quantize.AbsMeanFloor {
				t.Fatalf("absMean %g below the floor", m)
			}
			g := gi[p[1]]
			if len(g.data) != n/4+32 {
				t.Fatalf("golden %s has %d bytes, want n/4+32 = %d", p[1], len(g.data), n/4+32)
			}
			packed := make([]byte, n/4)
			packI2S(packed, codes)
			if !bytes.Equal(packed, g.data[:n/4]) {
				i := firstDiff(packed, g.data[:n/4])
				t.Errorf("packed codes differ from golden at byte %d: got %#02x want %#02x", i, packed[i], g.data[i])
			}
			gs := goldenScale(g, n)
			d := int64(math.Float32bits(scale)) - int64(math.Float32bits(gs))
			switch {
			case d == 0:
				exact++
			case (d == 1 || d == -1) && ulpAllowed[p[1]]:
				t.Logf("scale %g is 1 ulp from golden %g (allowed)", scale, gs)
			default:
				t.Errorf("scale %g (bits %#08x) != golden %g (bits %#08x), %d ulp", scale, math.Float32bits(scale), gs, math.Float32bits(gs), d)
			}
			// I2SBytes gives the same bytes plus scale and a zero tail.
			all := i2sBytes(codes, scale)
			if !bytes.Equal(all[:n/4+4], g.data[:n/4+4]) && d == 0 {
				t.Errorf("I2SBytes differs from golden in the first n/4+4 bytes")
			}
			if !bytes.Equal(all[n/4+4:], make([]byte, 28)) {
				t.Errorf("I2SBytes tail is not 28 zero bytes")
			}
			// The F32 golden holds the fake-quantized weights t·scale.
			f := gf[p[1]].data
			if len(f) != 4*n {
				t.Fatalf("golden f32 %s has %d bytes, want %d", p[1], len(f), 4*n)
			}
			for i, c := range codes {
				want := math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:]))
				if got := float32(c) * scale; got != want && !(d != 0 && ulpAllowed[p[1]]) {
					t.Fatalf("element %d: t·scale = %g, golden f32 %g", i, got, want)
				}
			}
		})
	}
	t.Logf("%d of %d golden scales bit-exact", exact, len(projections))
}

// TestAbsMeanOrderMatters shows the golden comparison can fail: a naive
// sequential float32 sum gives a different scale for at least one golden
// tensor, while DefaultSumOrder gives none.
func TestAbsMeanOrderMatters(t *testing.T) {
	ck, err := hf.Open(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	gi := readGoldenGGUF(t, goldenI2S, goldenI2SList)
	orders := []struct {
		name     string
		o        quantize.TorchSumOrder
		minWrong int
		maxWrong int
	}{
		{"naive sequential", quantize.TorchSumOrder{VecWidth: 1, Threads: 1}, 1, 14},
		{"AVX-512 lanes", quantize.TorchSumOrder{VecWidth: 16, Threads: 1}, 1, 14},
		{"AVX2, 2 threads", quantize.TorchSumOrder{VecWidth: 8, Threads: 2}, 1, 14},
		{"default", quantize.DefaultSumOrder, 0, 0},
	}
	for _, tc := range orders {
		wrong := 0
		for _, p := range projections {
			x := readMaster(t, ck, p[0])
			m := max(tc.o.AbsMean(x), quantize.AbsMeanFloor)
			if 1/(1/m) != goldenScale(gi[p[1]], len(x)) {
				wrong++
			}
		}
		if wrong < tc.minWrong || wrong > tc.maxWrong {
			t.Errorf("%s: %d scales differ from golden, want %d..%d", tc.name, wrong, tc.minWrong, tc.maxWrong)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
