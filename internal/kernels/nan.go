//go:build !purego && (amd64 || arm64)

package kernels

// hasNaN reports whether a lane of a is a NaN: the dispatch of the
// assembly kernels with float epilogues then takes the reference's result.
func hasNaN(a *[8]float32) bool {
	for _, v := range a {
		if v != v {
			return true
		}
	}
	return false
}
