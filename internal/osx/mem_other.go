//go:build !linux

package osx

// AvailableMemory reports false: only Linux's /proc/meminfo is read.
func AvailableMemory() (uint64, bool) { return 0, false }
