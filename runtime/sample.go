package runtime

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
