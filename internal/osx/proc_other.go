//go:build !unix && !windows

package osx

// processAlive cannot tell here; a process is assumed to be running.
func processAlive(int) bool { return true }
