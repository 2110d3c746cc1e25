package runtime

import (
	"math"
	"slices"
	"testing"
)

// TestSampleWith checks each of run's llama.cpp samplers on hand-computed
// cases: the repetition penalty (divide a positive logit, multiply a
// non-positive one, within the last-n window), top-k, top-p (before
// temperature) and the plain temperature draw being Sample's.
func TestSampleWith(t *testing.T) {
	off := SamplerParams{TopP: 1, RepeatPenalty: 1, RepeatLastN: 64}
	with := func(f func(*SamplerParams)) SamplerParams { p := off; f(&p); return p }
	ln := func(x float64) float32 { return float32(math.Log(x)) }
	cases := []struct {
		name    string
		logits  []float32
		p       SamplerParams
		history []int32
		u       float64
		want    int32
	}{
		{"greedy", []float32{1, 3, 2.9}, off, []int32{1}, 0, 1},
		// 3/1.1 = 2.73 < 2.9
		{"penalty divides a positive logit", []float32{1, 3, 2.9}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.1 }), []int32{1}, 0, 2},
		// -1·1.1 = -1.1 < -1.05
		{"penalty multiplies a negative logit", []float32{-1, -1.05}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.1 }), []int32{0}, 0, 1},
		{"penalty counts a token once", []float32{1, 3, 2.9}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.01 }), []int32{1, 1, 1, 1}, 0, 1},
		{"penalty window excludes older tokens", []float32{1, 3, 2.9}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.1; p.RepeatLastN = 1 }), []int32{1, 0}, 0, 1},
		{"penalty window -1 is the whole history", []float32{1, 3, 2.9}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.1; p.RepeatLastN = -1 }), []int32{1, 0, 0, 0}, 0, 2},
		{"penalty 0 window is off", []float32{1, 3, 2.9}, with(func(p *SamplerParams) { p.RepeatPenalty = 1.1; p.RepeatLastN = 0 }), []int32{1}, 0, 1},
		{"top-k 1 is greedy at any temperature", []float32{0, 5, 4, 3}, with(func(p *SamplerParams) { p.Temp = 100; p.TopK = 1 }), nil, 0.999, 1},
		// top-k 2 keeps ids 1 and 2; u near 1 draws the last kept id.
		{"top-k 2, high draw", []float32{0, 5, 4, 3}, with(func(p *SamplerParams) { p.Temp = 1; p.TopK = 2 }), nil, 0.9999, 2},
		{"top-k 2, low draw", []float32{0, 5, 4, 3}, with(func(p *SamplerParams) { p.Temp = 1; p.TopK = 2 }), nil, 0, 1},
		// probabilities .5 .3 .2: top-p 0.75 keeps ids 0 and 1.
		{"top-p drops the tail", []float32{ln(.5), ln(.3), ln(.2)}, with(func(p *SamplerParams) { p.Temp = 1; p.TopP = 0.75 }), nil, 0.9999, 1},
		{"top-p 0.4 keeps one", []float32{ln(.5), ln(.3), ln(.2)}, with(func(p *SamplerParams) { p.Temp = 1; p.TopP = 0.4 }), nil, 0.9999, 0},
		// top-p works on the probabilities before temperature: at temp 10
		// the three are near-uniform, but top-p 0.75 still drops id 2.
		{"top-p before temperature", []float32{ln(.5), ln(.3), ln(.2)}, with(func(p *SamplerParams) { p.Temp = 10; p.TopP = 0.75 }), nil, 0.9999, 1},
		{"all NaN", []float32{float32(math.NaN())}, with(func(p *SamplerParams) { p.TopK = 1 }), nil, 0, -1},
	}
	for _, c := range cases {
		in := slices.Clone(c.logits)
		if got := SampleWith(in, c.p, c.history, c.u); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		for i := range in {
			if math.Float32bits(in[i]) != math.Float32bits(c.logits[i]) {
				t.Fatalf("%s: logits modified", c.name)
			}
		}
	}
	// With the filters off, SampleWith is Sample draw for draw.
	logits := []float32{0.1, 2, -1, 1.5, 1.9, 0.3}
	for i := 0; i < 100; i++ {
		u := float64(i) / 100
		p := with(func(p *SamplerParams) { p.Temp = 0.8 })
		if a, b := SampleWith(logits, p, []int32{1, 4}, u), Sample(logits, 0.8, u); a != b {
			t.Fatalf("u %v: SampleWith %d, Sample %d", u, a, b)
		}
	}
}
