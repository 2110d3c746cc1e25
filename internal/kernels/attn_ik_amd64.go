//go:build !purego

package kernels

// attnMaxHD is the largest head size the assembly of AttnKQIK and AttnPVIK
// takes (their padded tails live on the stack); larger heads run the
// references.
const attnMaxHD = 256

// attnKQIK runs the assembly on the keys in groups of eight. The last
// n mod 8 keys are run as a group of eight as well, into a scratch whose
// first n mod 8 lanes are kept: the group reads the keys that follow in k
// where k has them (their sums are dropped), or else a zero-padded copy
// of the last keys. A NaN among the sums sends the whole call to the
// reference, whose NaN payloads are the answer.
func attnKQIK(s []float32, sStride int, k []uint16, stride, n int, q []float32, g int) {
	hd := len(q) / g
	if !useFMA || hd > attnMaxHD {
		attnKQIKRef(s, sStride, k, stride, n, q, g)
		return
	}
	run := attnKQIK1AVX2
	if g == 2 {
		run = attnKQIK2AVX2
	}
	n8 := n &^ 7
	if n8 > 0 {
		run(s, sStride, k, stride, q, n8)
	}
	if t := n - n8; t > 0 {
		var tail [4 * 8]float32
		if (n8+7)*stride+hd <= len(k) {
			run(tail[:], 8, k[n8*stride:], stride, q, 8)
		} else {
			attnKQIKPadded(run, tail[:], k[n8*stride:], stride, t, q, g)
		}
		for c := range 2 * g {
			copy(s[c*sStride+n8:c*sStride+n], tail[c*8:c*8+t])
		}
	}
	for c := range 2 * g {
		for _, x := range s[c*sStride : c*sStride+n] {
			if x != x {
				attnKQIKRef(s, sStride, k, stride, n, q, g)
				return
			}
		}
	}
}

// attnPVIK runs the assembly on the keys in groups of eight. The last
// n mod 8 keys are read as a group of eight whose other keys get no
// multiply-add at all, where v has the values that follow in every row;
// else they are copied into a block of eight padded with values −0 and
// probabilities 0, whose products −0 leave every sum as it is (x + (−0) =
// x, signed zeros included). A NaN among the outputs restores out and sends
// the whole call to the reference.
func attnPVIK(out []float32, v []uint16, stride int, p []float32, pStride, n, g int) {
	hd := len(out) / g
	if !useFMA || hd > attnMaxHD {
		attnPVIKRef(out, v, stride, p, pStride, n, g)
		return
	}
	run := attnPVIK1AVX2
	if g == 2 {
		run = attnPVIK2AVX2
	}
	var save [2 * attnMaxHD]float32
	copy(save[:], out)
	n8 := n &^ 7
	t := n - n8
	if t == 0 || (hd-1)*stride+n8+8 <= len(v) {
		run(out, v, stride, p, pStride, n8, t)
	} else {
		if n8 > 0 {
			run(out, v, stride, p, pStride, n8, 0)
		}
		attnPVIKPadded(run, out, v[n8:], stride, p[n8:], pStride, t, g)
	}
	for _, x := range out {
		if x != x {
			copy(out, save[:len(out)])
			attnPVIKRef(out, v, stride, p, pStride, n, g)
			return
		}
	}
}

// attnKQIKPadded runs the t (< 8) keys of k as a group of eight padded with
// zero keys into tail. It is a function of its own so that its 4 KiB pad
// is not in attnKQIK's frame.
//
//go:noinline
func attnKQIKPadded(run func([]float32, int, []uint16, int, []float32, int), tail []float32, k []uint16, stride, t int, q []float32, g int) {
	hd := len(q) / g
	var pad [8 * attnMaxHD]uint16
	for l := range t {
		copy(pad[l*hd:(l+1)*hd], k[l*stride:l*stride+hd])
	}
	run(tail, 8, pad[:8*hd], hd, q, 8)
}

// attnPVIKPadded adds the t (< 8) keys of v (probabilities p) to out as a
// group of eight padded with values −0 and probabilities 0. It is a
// function of its own so that its 4 KiB pad is not in attnPVIK's frame.
//
//go:noinline
func attnPVIKPadded(run func([]float32, []uint16, int, []float32, int, int, int), out []float32, v []uint16, stride int, p []float32, pStride, t, g int) {
	hd := len(out) / g
	var pad [8 * attnMaxHD]uint16
	for d := range hd {
		row := pad[8*d : 8*d+8]
		copy(row, v[d*stride:d*stride+t])
		for i := t; i < 8; i++ {
			row[i] = 0x8000 // −0
		}
	}
	var pp [2 * 8]float32
	for a := range g {
		copy(pp[8*a:8*a+t], p[a*pStride:a*pStride+t])
	}
	run(out, pad[:8*hd], 8, pp[:], 8, 8, 0)
}
