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

// mulScaled and scaleMul run the groups of eight through the assembly up
// to the first group with a NaN result, that group in Go, and so on; the
// last len(x) mod 8 in Go (byGroups).
func mulScaled(dst, x, w []float32, scale float32) {
	byGroups(len(x), 8, useAVX2,
		func(i, n int) int { return mulScaledAVX2(dst[i:n], x[i:n], w[i:n], scale) },
		func(i, j int) { mulScaledRef(dst[i:j], x[i:j], w[i:j], scale) })
}

func scaleMul(dst, x, w []float32, scale float32) {
	byGroups(len(x), 8, useAVX2,
		func(i, n int) int { return scaleMulAVX2(dst[i:n], x[i:n], w[i:n], scale) },
		func(i, j int) { scaleMulRef(dst[i:j], x[i:j], w[i:j], scale) })
}
