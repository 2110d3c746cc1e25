//go:build purego || !amd64

package kernels

func tinyDotsF16(dst []float32, w []uint16, x []float32, xs int)  { tinyDotsF16Ref(dst, w, x, xs) }
func tinyDotsF32(dst []float32, w []float32, x []float32, xs int) { tinyDotsF32Ref(dst, w, x, xs) }
func tinyLanesF16(lanes []float32, w []uint16, wr int, x []float32, nr int) {
	tinyLanesF16Ref(lanes, w, wr, x, nr)
}
