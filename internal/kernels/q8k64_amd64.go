//go:build !purego

package kernels

// absMaxQ8K64 folds the assembly's 16 lanes (lane j holds the elements
// 16i+j) into the four groups.
func absMaxQ8K64(x []float32) (m [4]uint32) {
	if !useAVX2 {
		return absMaxQ8K64Ref(x)
	}
	var lanes [16]uint32
	absMaxQ8K64AVX2(x, &lanes)
	for j, b := range lanes {
		m[j/4] = max(m[j/4], b)
	}
	return m
}

// quantQ8K64 runs the assembly on the elements in groups of 32 and the
// reference on a last group of 16, and folds the lane sums into the four
// groups.
func quantQ8K64(q []int8, x []float32, id *[4]float32) (sum [4]int32) {
	if !useAVX2 {
		return quantQ8K64Ref(q, x, id)
	}
	n := len(x) &^ 31
	if n > 0 {
		var ids [16]float32
		for j := range ids {
			ids[j] = id[j/4]
		}
		var lanes [16]int32
		quantQ8K64AVX2(q, x[:n], &ids, &lanes)
		for j, s := range lanes {
			sum[j/4] += s
		}
	}
	if n < len(x) {
		t := quantQ8K64Ref(q[n:], x[n:], id)
		for g := range sum {
			sum[g] += t[g]
		}
	}
	return sum
}

// mulScaled and scaleMul run the assembly up to the first group of eight
// with a NaN result, that group in Go, and so on; the last len(x) mod 8 in
// Go (byEights).
func mulScaled(dst, x, w []float32, scale float32) {
	byEights(dst, x, w, scale, mulScaledAVX2, mulScaledRef)
}

func scaleMul(dst, x, w []float32, scale float32) {
	byEights(dst, x, w, scale, scaleMulAVX2, scaleMulRef)
}

func byEights(dst, x, w []float32, scale float32, asm func(dst, x, w []float32, scale float32) int, ref func(dst, x, w []float32, scale float32)) {
	i := 0
	if useAVX2 {
		n := len(x) &^ 7
		for i < n {
			i += asm(dst[i:n], x[i:n], w[i:n], scale)
			if i < n {
				ref(dst[i:i+8], x[i:i+8], w[i:i+8], scale)
				i += 8
			}
		}
	}
	ref(dst[i:], x[i:], w[i:], scale)
}
