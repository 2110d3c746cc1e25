//go:build !unix && !windows

package osx

// anonMemory is a Go slice where there is no anonymous mapping (Plan 9,
// WebAssembly): a failed allocation there is Go's fatal out-of-memory.
func anonMemory(n int) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}
