package format

import (
	"strings"
	"testing"
)

// TestCode3I2STQ2 checks that I2_S (every layout) and TQ2_0 refuse the
// non-ternary 2-bit code 3 in Decode (and DecodeParallel), naming the row,
// and that Code3 counts it, as Q2_0 does.
func TestCode3I2STQ2(t *testing.T) {
	const k, m = 256, 136
	fmts := []struct {
		f    Format
		at   int // byte to corrupt
		mask byte
		want string
		n    int
	}{
		{I2S{Layout: LayoutX86}, 5 * k / 4, 0xC0, "(row 5) holds code 3", 1},
		{I2S{Layout: LayoutARM}, 70 * k / 4, 0xFF, "(row 70) holds code 3", 4},
		// x86-1x4: byte g·K + c, row 4g + i at bits 6 − 2i: bits 2..3 are row 4g+2.
		{I2S{Layout: LayoutX86_1x4}, 17*k + 3, 0x0C, "(row 70) holds code 3", 1},
		{TQ2_0{}, 100*66 + 7, 0x30, "block 100 (row 100) holds code 3", 1},
	}
	for _, c := range fmts {
		codes := make([]int8, k*m)
		for i := range codes {
			codes[i] = int8(i%3) - 1
		}
		nb, _ := c.f.Bytes(k, m)
		data := make([]byte, nb)
		scales := make([]float32, NumScales(c.f, k, m))
		for i := range scales {
			scales[i] = 0.5
		}
		if err := c.f.Encode(data, codes, scales, k, m); err != nil {
			t.Fatalf("%s: Encode: %v", c.f.Name(), err)
		}
		cc, ok := c.f.(NonTernaryCounter)
		if !ok {
			t.Fatalf("%s does not count code 3", c.f.Name())
		}
		if n, err := cc.Code3(data, k, m); n != 0 || err != nil {
			t.Errorf("%s: Code3 of ternary data = %d, %v", c.f.Name(), n, err)
		}
		data[c.at] |= c.mask
		if n, err := cc.Code3(data, k, m); n != c.n || err != nil {
			t.Errorf("%s: Code3 = %d, %v; want %d", c.f.Name(), n, err, c.n)
		}
		got := make([]int8, k*m)
		if _, err := c.f.Decode(got, data, k, m); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not ternary") {
			t.Errorf("%s: Decode of code 3: %v; want %q", c.f.Name(), err, c.want)
		}
		if _, err := DecodeParallel(c.f, got, data, k, m, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: DecodeParallel of code 3: %v; want %q", c.f.Name(), err, c.want)
		}
		if c.f == (I2S{Layout: LayoutX86}) {
			tb, _ := TQ2_0{}.Bytes(k, m)
			if ok, err := Transcode(c.f, TQ2_0{}, make([]byte, tb), data, k, m, 2); !ok || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Transcode I2_S → TQ2_0 of code 3: %v, %v; want %q", ok, err, c.want)
			}
		}
	}
}
