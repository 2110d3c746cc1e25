//go:build !unix && !windows

package atomicfile

// processAlive cannot tell on this platform; a temp file with a pid is
// assumed to belong to a running write and kept.
func processAlive(pid int) bool { return true }
