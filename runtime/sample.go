package runtime

import "math"

// Argmax returns the index of the largest logit, the lowest index on ties
// (greedy decoding as the golden files were made). It returns −1 for an
// empty slice; NaN entries are never chosen.
func Argmax(logits []float32) int32 {
	best := int32(-1)
	for i, v := range logits {
		if v != v {
			continue
		}
		if best < 0 || v > logits[best] {
			best = int32(i)
		}
	}
	return best
}

// Sample draws a token from softmax(logits/temp) using u, a uniform number
// in [0, 1) (temp ≤ 0 is Argmax). The softmax is computed in float64; the
// draw walks the ids in order, so the result is reproducible for a seed.
func Sample(logits []float32, temp float64, u float64) int32 {
	if temp <= 0 {
		return Argmax(logits)
	}
	best := Argmax(logits)
	if best < 0 {
		return best
	}
	mx := float64(logits[best])
	var sum float64
	for _, v := range logits {
		if v == v {
			sum += math.Exp((float64(v) - mx) / temp)
		}
	}
	target := u * sum
	var acc float64
	for i, v := range logits {
		if v != v {
			continue
		}
		acc += math.Exp((float64(v) - mx) / temp)
		if acc > target {
			return int32(i)
		}
	}
	return best
}
