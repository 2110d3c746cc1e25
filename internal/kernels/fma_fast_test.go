package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFma32MatchesFMA32: the hardware-FMA path of fma32 gives FMA32's
// bits on exact float32 midpoints (ties to even, and one float64 ulp
// either side), float32 subnormal and overflowing results, infinities,
// NaNs and random operands of every magnitude; so does FMA32Acc, lane by
// lane.
func TestFma32MatchesFMA32(t *testing.T) {
	f := math.Float32frombits
	cases := [][3]float32{
		{1, 0x1p-24, 1},                       // exactly halfway: ties to even, 1
		{1 + 0x1p-23, 0x1p-24, 1},             // halfway, rounds to the even neighbour above
		{1, 0x1p-24, 1 + 0x1p-23},             // just above halfway
		{1, -0x1p-24, 1 - 0x1p-24},            // just above halfway below 1
		{0x1p-126, -0x1p-127, 1},              // subnormal result
		{0, 0x1p-100, 0x1p-40},                // underflow to a subnormal
		{0, 0x1p-100, 0x1p-60},                // underflow to zero
		{math.MaxFloat32, math.MaxFloat32, 1}, // overflow
		{float32(math.Inf(1)), 1, 1},
		{float32(math.Inf(1)), float32(math.Inf(-1)), 1},
		{float32(math.NaN()), 1, 1},
		{0, 0, 0}, {float32(math.Copysign(0, -1)), 0, 0}, {0, float32(math.Copysign(0, -1)), 1},
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 200000 {
		// Random signs, mantissas and exponents (b·c near a half the time).
		e := r.IntN(60) - 30
		a := f(r.Uint32()&0x807fffff | uint32(127+e)<<23)
		b := f(r.Uint32()&0x807fffff | uint32(127+e/2)<<23)
		c := f(r.Uint32()&0x807fffff | uint32(127+e-e/2-r.IntN(2)*24)<<23)
		cases = append(cases, [3]float32{a, b, c}, [3]float32{f(r.Uint32()), f(r.Uint32()), f(r.Uint32())})
	}
	for _, x := range cases {
		got, want := fma32(x[0], x[1], x[2]), FMA32(x[0], x[1], x[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%x, %x, %x) = %x, FMA32 %x", x[0], x[1], x[2], got, want)
		}
	}
	// FMA32Acc on the same operands, nineteen lanes at a time (one c
	// each): two groups of eight (assembly on amd64) and a tail.
	for i := 0; i+19 <= len(cases); i += 19 {
		var acc, b [19]float32
		for l := range acc {
			acc[l], b[l] = cases[i+l][0], cases[i+l][1]
		}
		c := cases[i][2]
		FMA32Acc(acc[:], b[:], c)
		for l, got := range acc {
			want := FMA32(cases[i+l][0], b[l], c)
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("FMA32Acc lane (%x, %x, %x) = %x, FMA32 %x", cases[i+l][0], b[l], c, got, want)
			}
		}
	}
}
