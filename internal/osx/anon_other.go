//go:build !unix

package osx

// anonMemory is a Go slice where there is no anonymous mmap (Windows,
// WebAssembly): ReadIn's check of AvailableMemory, where the platform has
// one, is then the only guard against Go's fatal out-of-memory.
func anonMemory(n int) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}
