//go:build linux

package osx

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// AvailableMemory returns the memory the kernel estimates is available
// for new allocations without swapping (MemAvailable of /proc/meminfo,
// proc(5)), in bytes, and false when it cannot tell.
func AvailableMemory() (uint64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return memAvailable(data)
}

// memAvailable parses the MemAvailable line ("MemAvailable:  123 kB") of
// a /proc/meminfo text.
func memAvailable(data []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "MemAvailable:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil || kb > 1<<54 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
